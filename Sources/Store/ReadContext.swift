/// Access to the store inside `Store.read` (and, through `Transaction`, inside
/// `Store.write`). Valid only inside the closure it is passed to; every read in one
/// closure sees the same snapshot of the store.
public class ReadContext {
    let connection: Connection
    /// The store's schema, for checking requests and key paths.
    public let schema: Schema

    init(connection: Connection, schema: Schema) {
        self.connection = connection
        self.schema = schema
    }

    // MARK: Fetch requests

    /// The records that match `request`, in its order.
    public func fetch<R: Record>(_ request: FetchRequest, as type: R.Type = R.self) throws -> [R] {
        try checkEntity(request, R.self)
        let (sql, arguments) = try QueryBuilder.compile(request, schema: schema, selecting: .records)
        return try decodeRecords(sql, arguments)
    }

    /// The records of `type` that match `predicate`, sorted.
    public func fetch<R: Record>(_ type: R.Type, where predicate: FetchPredicate? = nil, sortedBy sortDescriptors: [SortKey] = [],
                                 limit: Int? = nil) throws -> [R] {
        try fetch(FetchRequest(R.self, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: limit))
    }

    /// The ids of the objects that match `request`, in its order.
    public func fetchIDs(_ request: FetchRequest) throws -> [Int64] {
        let (sql, arguments) = try QueryBuilder.compile(request, schema: schema, selecting: .keys([]))
        let statement = try connection.statement(sql)
        try statement.bind(arguments)
        var ids: [Int64] = []
        while try statement.step() { ids.append(statement.int64(at: 0)) }
        return ids
    }

    /// For each object that matches `request` (narrowed by `extraCondition`), in order, a
    /// row of its id followed by the values of `keyPaths` (which may cross to-one
    /// relationships). `body` sees each row and must not keep it beyond its call.
    public func forEachKeyRow(_ request: FetchRequest, keyPaths: [String], extraCondition: FetchPredicate? = nil,
                              _ body: (_ id: Int64, _ values: [SQLValue]) throws -> Void) throws {
        let (sql, arguments) = try QueryBuilder.compile(request, schema: schema, selecting: .keys(keyPaths),
                                                        extraCondition: extraCondition)
        let statement = try connection.statement(sql)
        try statement.bind(arguments)
        var values = [SQLValue](repeating: .null, count: keyPaths.count)
        while try statement.step() {
            for index in keyPaths.indices { values[index] = statement.value(at: Int32(index + 1)) }
            try body(statement.int64(at: 0), values)
        }
    }

    /// How many objects match `request` (its limit and offset included).
    public func count(_ request: FetchRequest) throws -> Int {
        let (sql, arguments) = try QueryBuilder.compile(request, schema: schema, selecting: .count)
        return Int(try connection.scalar(sql, arguments)?.int64 ?? 0)
    }

    // MARK: By id

    /// The record with this id, or nil.
    public func fetchOne<R: Record>(_ type: R.Type, id: Int64) throws -> R? {
        let entity = R.entity
        let sql = "SELECT \(Self.columnList(entity)) FROM \(SQL.quote(entity.name)) WHERE \(SQL.quote(entity.primaryKey)) = ?"
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
            let sql = "SELECT \(Self.columnList(entity)) FROM \(SQL.quote(entity.name)) WHERE \(SQL.quote(column)) IN (\(SQL.placeholders(list.count)))"
            records += try decodeRecords(sql, list)
        }
        return records
    }

    /// How many queries (read-only statements) this connection has run: compare two
    /// readings to count the queries a piece of work costs.
    public var queriesRun: Int { connection.queriesRun }

    /// The token of the newest commit this snapshot includes (0 before the first).
    public func currentToken() throws -> Int64 {
        try History.currentToken(on: connection)
    }

    // MARK: Raw SQL

    /// The rows of a SQL query; `arguments` are bound to its `?` parameters.
    public func rows(_ sql: String, _ arguments: [SQLValue] = []) throws -> [Row] {
        try connection.rows(sql, arguments)
    }

    /// The first column of the first row of a query, or nil when there is no row.
    public func scalar(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLValue? {
        try connection.scalar(sql, arguments)
    }

    // MARK: Helpers

    static func columnList(_ entity: Entity) -> String {
        ([entity.primaryKey] + entity.storedColumns).map(SQL.quote).joined(separator: ", ")
    }

    func decodeRecords<R: Record>(_ sql: String, _ arguments: [SQLValue]) throws -> [R] {
        let statement = try connection.statement(sql)
        try statement.bind(arguments)
        var records: [R] = []
        let reader = ColumnReader(statement)
        while try statement.step() {
            records.append(try R.decodeRecord(reader))
        }
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
