/// Access to the store inside `Store.read` (and, through `Transaction`, inside
/// `Store.write`). Valid only inside the closure it is passed to; every read in one
/// closure sees the same snapshot of the store.
public class ReadContext {
    /// Where the queries run.
    let runner: any QueryRunner
    /// The store's schema, for checking requests and key paths.
    public let schema: Schema

    /// A context whose queries run on `runner` (another database's store makes one per
    /// read transaction).
    public init(runner: any QueryRunner, schema: Schema) {
        self.runner = runner
        self.schema = schema
    }

    /// The SQL the store's database speaks: raw SQL (`rows`, `scalar`) is written in it.
    public var dialect: SQLDialect { runner.dialect }

    // MARK: Fetch requests

    /// The records that match `request`, in its order.
    public func fetch<R: Record>(_ request: FetchRequest, as type: R.Type = R.self) throws -> [R] {
        try checkEntity(request, R.self)
        let (sql, arguments) = try compile(request, selecting: .records)
        return try decodeRecords(sql, arguments)
    }

    /// The records of `type` that match `predicate`, sorted.
    public func fetch<R: Record>(_ type: R.Type, where predicate: FetchPredicate? = nil, sortedBy sortDescriptors: [SortKey] = [],
                                 limit: Int? = nil) throws -> [R] {
        try fetch(FetchRequest(R.self, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: limit))
    }

    /// The ids of the objects that match `request`, in its order.
    public func fetchIDs(_ request: FetchRequest) throws -> [Int64] {
        let (sql, arguments) = try compile(request, selecting: .keys([]))
        var ids: [Int64] = []
        try runner.forEachRow(sql, arguments) { ids.append($0.int64(0)) }
        return ids
    }

    /// For each object that matches `request` (narrowed by `extraCondition`), in order, a
    /// row of its id followed by the values of `keyPaths` (which may cross to-one
    /// relationships). `body` sees each row and must not keep it beyond its call.
    public func forEachKeyRow(_ request: FetchRequest, keyPaths: [String], extraCondition: FetchPredicate? = nil,
                              _ body: (_ id: Int64, _ values: [SQLValue]) throws -> Void) throws {
        let (sql, arguments) = try compile(request, selecting: .keys(keyPaths), extraCondition: extraCondition)
        var values = [SQLValue](repeating: .null, count: keyPaths.count)
        try runner.forEachRow(sql, arguments) { reader in
            for index in keyPaths.indices { values[index] = reader.value(Int32(index + 1)) }
            try body(reader.int64(0), values)
        }
    }

    /// How many objects match `request` (its limit and offset included).
    public func count(_ request: FetchRequest) throws -> Int {
        let (sql, arguments) = try compile(request, selecting: .count)
        return Int(try scalar(sql, arguments)?.int64 ?? 0)
    }

    private func compile(_ request: FetchRequest, selecting selection: QueryBuilder.Selection,
                         extraCondition: FetchPredicate? = nil) throws -> (sql: String, arguments: [SQLValue]) {
        try QueryBuilder.compile(request, schema: schema, dialect: dialect, selecting: selection, extraCondition: extraCondition)
    }

    // MARK: By id

    /// The record with this id, or nil.
    public func fetchOne<R: Record>(_ type: R.Type, id: Int64) throws -> R? {
        let entity = R.entity
        let sql = "SELECT \(columnList(entity)) FROM \(dialect.identifier(entity.name)) WHERE \(dialect.identifier(entity.primaryKey)) = \(dialect.parameter(1))"
        let records: [R] = try decodeRecords(sql, [.integer(id)])
        return records.first
    }

    /// The records with these ids, in no particular order; missing ids are skipped.
    /// Queries in chunks with `IN`, under SQLite's limit on bound parameters.
    public func fetch<R: Record>(_ type: R.Type, ids: some Collection<Int64>) throws -> [R] {
        try fetch(type, whereColumn: R.entity.primaryKey, in: ids.map { SQLValue.integer($0) })
    }

    /// The records whose `column` has one of `values`, in no particular order; chunked like
    /// `fetch(_:ids:)`. This is how a batch finds which of its objects exist, in one query
    /// per few hundred objects.
    public func fetch<R: Record>(_ type: R.Type, whereColumn column: String, in values: [SQLValue]) throws -> [R] {
        let entity = R.entity
        guard column == entity.primaryKey || entity.storedColumnIndex[column] != nil else {
            throw StoreError(.invalidRequest, "\(entity.name) has no column \(column)")
        }
        var records: [R] = []
        for list in InList.paddedChunks(values, size: SQL.maximumParametersPerStatement) {
            let parameters = (1...list.count).map(dialect.parameter).joined(separator: ", ")
            let sql = "SELECT \(columnList(entity)) FROM \(dialect.identifier(entity.name)) WHERE \(dialect.identifier(column)) IN (\(parameters))"
            records += try decodeRecords(sql, list)
        }
        return records
    }

    /// How many queries this context's connection has run: compare two readings to count
    /// the queries a piece of work costs.
    public var queriesRun: Int { runner.queriesRun }

    /// The token of the newest commit this snapshot includes (0 before the first).
    public func currentToken() throws -> Int64 {
        try runner.currentToken()
    }

    // MARK: Raw SQL

    /// The rows of a SQL query in the store's dialect; `arguments` are bound to its
    /// parameters (`?` on SQLite, `$1`, `$2`… on PostgreSQL).
    public func rows(_ sql: String, _ arguments: [SQLValue] = []) throws -> [Row] {
        var rows: [Row] = []
        try runner.forEachRow(sql, arguments) { rows.append($0.currentRow()) }
        return rows
    }

    /// The first column of the first row of a query, or nil when there is no row.
    public func scalar(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLValue? {
        var first: SQLValue?
        try runner.forEachRow(sql, arguments) { reader in
            if first == nil { first = reader.value(0) }
        }
        return first
    }

    // MARK: Helpers

    func columnList(_ entity: Entity) -> String {
        ([entity.primaryKey] + entity.storedColumns).map(dialect.identifier).joined(separator: ", ")
    }

    func decodeRecords<R: Record>(_ sql: String, _ arguments: [SQLValue]) throws -> [R] {
        var records: [R] = []
        try runner.forEachRow(sql, arguments) { records.append(try R.decodeRecord($0)) }
        return records
    }

    private func checkEntity<R: Record>(_ request: FetchRequest, _ type: R.Type) throws {
        guard request.entityName == R.entity.name else {
            throw StoreError(.invalidRequest, "The request fetches \(request.entityName), not \(R.entity.name) (\(R.self))")
        }
    }
}

extension Collection {
    /// The collection in consecutive slices of at most `size` elements.
    func chunked(_ size: Int) -> [SubSequence] {
        var chunks: [SubSequence] = []
        var start = startIndex
        while start != endIndex {
            let end = index(start, offsetBy: size, limitedBy: endIndex) ?? endIndex
            chunks.append(self[start..<end])
            start = end
        }
        return chunks
    }
}
