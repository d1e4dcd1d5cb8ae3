/// Access to the store inside `Store.write`: a unit of work that commits whole or not at
/// all. Every row it changes, by whatever means (records, delete rules, raw SQL), is in the
/// transaction's change set, which observers and the history receive after commit: SQLite
/// tells the store of each one (`ChangeRecorder`).
///
/// On another database (the PostgreSQL store's, through its `QueryRunner`) the same calls
/// write the same rows in that database's SQL, with each `localizedStandard` text's sort
/// key beside it (`SQLDialect.postgresql`); that database reports the changed rows itself
/// (the PostgreSQL store's triggers), and its store builds the change set at commit.
public final class Transaction: ReadContext {
    /// The SQLite writer's connection, for its prepared inserts and its change recorder;
    /// nil on another database, whose statements all go through the runner.
    let sqlite: Connection?

    init(connection: Connection, schema: Schema) {
        sqlite = connection
        super.init(runner: connection, schema: schema)
    }

    /// A transaction whose statements run on `runner`, which has begun it (another
    /// database's store makes one per write).
    public override init(runner: any QueryRunner, schema: Schema) {
        sqlite = runner as? Connection
        super.init(runner: runner, schema: schema)
    }

    /// What this transaction has changed so far (on another database, nothing until the
    /// commit, where its store reads what the database reported).
    public var changes: ChangeSet { sqlite?.changeRecorder?.changes ?? ChangeSet() }

    /// What `upsert` did to a record.
    public enum UpsertOutcome: Sendable, Equatable {
        /// No stored row matched: inserted.
        case inserted
        /// Updated, with the keys that changed.
        case updated(Set<String>)
        /// A row matched and held the same values: nothing written.
        case unchanged
    }

    // MARK: Insert

    /// Inserts `record`; assigns its id when it has none.
    public func insert<R: Record>(_ record: inout R) throws {
        let entity = R.entity
        let values = try record.storedValues()
        guard let connection = sqlite else {
            record.id = try insertReturningIDs(entity, rows: [values], givenIDs: record.id.map { [$0] }).first
            return
        }
        let statement = try connection.statement(record.id == nil ? entity.insertSQL : entity.insertWithPrimaryKeySQL)
        var position: Int32 = 1
        if let id = record.id {
            try statement.bind(.integer(id), at: 1)
            position = 2
        }
        for value in values {
            try statement.bind(value, at: position)
            position += 1
        }
        while try statement.step() {}
        record.id = record.id ?? connection.lastInsertedRowID
    }

    /// The sort key columns, and their keys, of those of `columns` that have one in this
    /// dialect (none on SQLite).
    private func sortKeys(_ entity: Entity, columns: [String], values: [SQLValue]) -> [(column: String, value: SQLValue)] {
        guard case .postgresql(let sortKeyColumns, _) = dialect, let keyed = sortKeyColumns[entity.name] else { return [] }
        return zip(columns, values).compactMap { column, value in
            guard let keyColumn = keyed[column] else { return nil }
            guard case .text(let text) = value else { return (keyColumn, .null) }
            return (keyColumn, .blob(Collation.localizedStandardSortKey(text)))
        }
    }

    /// Inserts `records` in order, assigning ids to those without. On SQLite, one prepared
    /// insert each; through another database's runner, rows without an id are bulk loaded
    /// when there are many (`QueryRunner.bulkInsert`: PostgreSQL's `COPY`), else go a few
    /// hundred to a statement (`INSERT … VALUES (…), (…) RETURNING id`: its rows come back
    /// in the order given), so a page of photos costs a few round trips, not one per photo.
    public func insert<R: Record>(_ records: inout [R]) throws {
        guard sqlite == nil else {
            for index in records.indices { try insert(&records[index]) }
            return
        }
        let entity = R.entity
        var unnumbered: [Int] = []
        for index in records.indices {
            if records[index].id == nil { unnumbered.append(index) } else { try insert(&records[index]) }
        }
        let values = try unnumbered.map { try records[$0].storedValues() }
        if values.count >= Self.bulkInsertRows, let ids = try bulkInsert(entity, rows: values) {
            for (offset, id) in ids.enumerated() { records[unnumbered[offset]].id = id }
            return
        }
        // PostgreSQL takes up to 65,535 parameters a statement; a photo has some twenty.
        let rowsPerStatement = max(1, min(500, 30_000 / max(1, entity.storedColumns.count * 2)))
        var start = 0
        while start < unnumbered.count {
            let end = min(start + rowsPerStatement, unnumbered.count)
            let ids = try insertReturningIDs(entity, rows: Array(values[start..<end]))
            for (offset, id) in ids.enumerated() { records[unnumbered[start + offset]].id = id }
            start = end
        }
    }

    /// Rows from which a bulk load is worth its extra round trip (numbering the rows first).
    public static let bulkInsertRows = 100

    /// Bulk loads `rows` with their sort keys; their ids, or nil when the runner has no bulk load.
    private func bulkInsert(_ entity: Entity, rows: [[SQLValue]]) throws -> [Int64]? {
        guard let first = rows.first else { return [] }
        let keyColumns = sortKeys(entity, columns: entity.storedColumns, values: first).map(\.column)
        let loaded = rows.lazy.map { row in row + self.sortKeys(entity, columns: entity.storedColumns, values: row).map(\.value) }
        let ids = try runner.bulkInsert(into: entity.name, primaryKey: entity.primaryKey,
                                        columns: entity.storedColumns + keyColumns, rows: Array(loaded))
        guard let ids else { return nil }
        guard ids.count == rows.count else {
            throw StoreError(.invalidRequest, "Loading \(rows.count) rows into \(entity.name) numbered \(ids.count)")
        }
        return ids
    }

    /// Inserts rows through the runner in one statement, under `givenIDs` when given (one
    /// per row) or the ids the database makes; their ids, in the rows' order.
    private func insertReturningIDs(_ entity: Entity, rows: [[SQLValue]], givenIDs: [Int64]? = nil) throws -> [Int64] {
        guard let first = rows.first else { return [] }
        let keyColumns = sortKeys(entity, columns: entity.storedColumns, values: first).map(\.column)
        let columns = (givenIDs == nil ? [] : [entity.primaryKey]) + entity.storedColumns + keyColumns
        var arguments: [SQLValue] = []
        var tuples: [String] = []
        for (index, row) in rows.enumerated() {
            let keys = sortKeys(entity, columns: entity.storedColumns, values: row).map(\.value)
            let start = arguments.count
            if let givenIDs { arguments.append(.integer(givenIDs[index])) }
            arguments += row + keys
            tuples.append("(" + (start..<arguments.count).map { dialect.parameter($0 + 1) }.joined(separator: ", ") + ")")
        }
        let sql = "INSERT INTO \(dialect.identifier(entity.name)) (\(columns.map(dialect.identifier).joined(separator: ", "))) "
            + "VALUES \(tuples.joined(separator: ", ")) RETURNING \(dialect.identifier(entity.primaryKey))"
        let ids = try self.rows(sql, arguments).compactMap { $0[0].int64 }
        guard ids.count == rows.count else {
            throw StoreError(.invalidRequest, "Inserting \(rows.count) rows into \(entity.name) returned \(ids.count) ids", sql: sql)
        }
        if let highest = givenIDs?.max(), dialect.isPostgreSQL {
            // PostgreSQL's identity sequence does not see an id given: moved past it, so that
            // a later row given none does not get it again.
            try execute("SELECT setval(pg_get_serial_sequence($1, $2), greatest(nextval(pg_get_serial_sequence($1, $2)), $3))",
                        [.text(dialect.identifier(entity.name)), .text(entity.primaryKey.lowercased()), .integer(highest)])
        }
        return ids
    }

    /// Inserts `record` and returns it with its id.
    @discardableResult
    public func inserted<R: Record>(_ record: R) throws -> R {
        var record = record
        try insert(&record)
        return record
    }

    // MARK: Update

    /// Writes the columns of `record` that differ from the stored row, and returns the keys
    /// that changed (none: nothing was written). Throws when the record is not stored.
    @discardableResult
    public func update<R: Record>(_ record: R) throws -> Set<String> {
        guard let id = record.id, let stored = try storedValues(R.self, id: id) else {
            throw StoreError(.recordNotFound, "\(R.entity.name) \(record.id.map(String.init) ?? "(no id)") is not in the store")
        }
        return try write(R.entity, id: id, from: stored, to: try record.storedValues())
    }

    /// Writes the columns of `record` that differ from `previous`, the stored state the
    /// caller already read (no query is made), and returns the keys that changed.
    @discardableResult
    public func update<R: Record>(_ record: R, from previous: R) throws -> Set<String> {
        guard let id = record.id, previous.id == id else {
            throw StoreError(.invalidRequest, "update(_:from:) needs the same stored \(R.entity.name) on both sides")
        }
        return try write(R.entity, id: id, from: try previous.storedValues(), to: try record.storedValues())
    }

    /// Inserts `record`, or updates the stored record whose `uniqueColumns` hold the same
    /// values (setting `record.id` to it).
    @discardableResult
    public func upsert<R: Record>(_ record: inout R, matching uniqueColumns: [String]) throws -> UpsertOutcome {
        let entity = R.entity
        let values = try record.storedValues()
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        for column in uniqueColumns {
            guard let index = entity.storedColumnIndex[column] else {
                throw StoreError(.invalidRequest, "\(entity.name) has no column \(column)")
            }
            arguments.append(values[index])
            conditions.append("\(dialect.identifier(column)) = \(dialect.parameter(arguments.count))")
        }
        let sql = "SELECT \(columnList(entity)) FROM \(dialect.identifier(entity.name)) WHERE \(conditions.joined(separator: " AND ")) LIMIT 1"
        guard let row = try rows(sql, arguments).first, let id = row[0].int64 else {
            record.id = nil
            try insert(&record)
            return .inserted
        }
        record.id = id
        let keys = try write(entity, id: id, from: Array(row.values.dropFirst()), to: values)
        return keys.isEmpty ? .unchanged : .updated(keys)
    }

    /// Upserts many records matched by one unique column, finding the existing ones with one
    /// query per few hundred records (`IN`) rather than one per record.
    public func upsert<R: Record>(_ records: inout [R], matching uniqueColumn: String) throws -> [UpsertOutcome] {
        let entity = R.entity
        guard let keyIndex = entity.storedColumnIndex[uniqueColumn] else {
            throw StoreError(.invalidRequest, "\(entity.name) has no column \(uniqueColumn)")
        }
        let newValues = try records.map { try $0.storedValues() }
        var stored: [SQLValue: (id: Int64, values: [SQLValue])] = [:]
        let keys = Array(Set(newValues.map { $0[keyIndex] }))
        for chunk in keys.chunked(SQL.maximumParametersPerStatement) {
            let parameters = (1...chunk.count).map(dialect.parameter).joined(separator: ", ")
            let sql = "SELECT \(columnList(entity)) FROM \(dialect.identifier(entity.name)) WHERE \(dialect.identifier(uniqueColumn)) IN (\(parameters))"
            for row in try rows(sql, Array(chunk)) {
                guard let id = row[0].int64 else { continue }
                let values = Array(row.values.dropFirst())
                stored[values[keyIndex]] = (id, values)
            }
        }
        var outcomes: [UpsertOutcome] = []
        outcomes.reserveCapacity(records.count)
        for index in records.indices {
            let key = newValues[index][keyIndex]
            if let existing = stored[key] {
                records[index].id = existing.id
                let changed = try write(entity, id: existing.id, from: existing.values, to: newValues[index])
                stored[key] = (existing.id, newValues[index])
                outcomes.append(changed.isEmpty ? .unchanged : .updated(changed))
            } else {
                records[index].id = nil
                try insert(&records[index])
                stored[key] = (records[index].id ?? 0, newValues[index])
                outcomes.append(.inserted)
            }
        }
        return outcomes
    }

    // MARK: Delete

    /// Deletes the record, applying the delete rules of its relationships.
    public func delete<R: Record>(_ record: R) throws {
        guard let id = record.id else { return }
        try delete(R.entity.name, ids: [id])
    }

    /// Deletes objects of an entity by id, applying delete rules (nullify, cascade, deny);
    /// ids not in the store are ignored. Returns how many objects of that entity were deleted.
    @discardableResult
    public func delete(_ entityName: String, ids: some Collection<Int64>) throws -> Int {
        let entity = try schema.entity(named: entityName)
        return try DeleteRules(transaction: self).delete(entity, ids: Array(ids))
    }

    /// Deletes every object that matches `request`, with delete rules. Returns the count.
    @discardableResult
    public func deleteAll(_ request: FetchRequest) throws -> Int {
        try delete(request.entityName, ids: try fetchIDs(request))
    }

    // MARK: Raw SQL

    /// Runs SQL: schema changes, or bulk statements. The rows it changes are in the
    /// transaction's change set like any other (SQLite reports them to the store).
    public func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        guard let connection = sqlite else { return try runner.forEachRow(sql, arguments) { _ in } }
        if arguments.isEmpty {
            try connection.execute(sql)
        } else {
            try connection.run(sql, arguments)
        }
    }

    /// Creates the tables and indexes of an entity (in a migration of a SQLite store).
    public func create(_ entity: Entity) throws {
        guard let connection = sqlite else {
            throw StoreError(.invalidRequest, "Only a SQLite store creates its tables in a migration; \(entity.name) was not created")
        }
        for statement in entity.createStatements() { try connection.execute(statement) }
    }

    private func storedValues<R: Record>(_ type: R.Type, id: Int64) throws -> [SQLValue]? {
        let entity = R.entity
        let sql = "SELECT \(entity.storedColumns.map(dialect.identifier).joined(separator: ", ")) FROM \(dialect.identifier(entity.name)) "
            + "WHERE \(dialect.identifier(entity.primaryKey)) = \(dialect.parameter(1))"
        return try rows(sql, [.integer(id)]).first?.values
    }

    /// Writes the columns whose value differs between `old` and `new`; returns the keys
    /// that changed (attribute names, and relationship names for foreign keys).
    private func write(_ entity: Entity, id: Int64, from old: [SQLValue], to new: [SQLValue]) throws -> Set<String> {
        let changed = entity.storedColumns.indices.filter { !Self.sameStoredValue(old[$0], new[$0]) }
        guard !changed.isEmpty else { return [] }
        let keys = sortKeys(entity, columns: changed.map { entity.storedColumns[$0] }, values: changed.map { new[$0] })
        let columns = changed.map { entity.storedColumns[$0] } + keys.map(\.column)
        let arguments = changed.map { new[$0] } + keys.map(\.value) + [.integer(id)]
        let assignments = columns.enumerated().map { "\(dialect.identifier($1)) = \(dialect.parameter($0 + 1))" }.joined(separator: ", ")
        let sql = "UPDATE \(dialect.identifier(entity.name)) SET \(assignments) WHERE \(dialect.identifier(entity.primaryKey)) = \(dialect.parameter(arguments.count))"
        try execute(sql, arguments)
        return Set(changed.map { index in
            let column = entity.storedColumns[index]
            return entity.relationship(forColumn: column)?.name ?? column
        })
    }

    /// Equality as SQLite stores values: numbers compare by value (an INTEGER column keeps
    /// 3.0 as 3, a REAL column keeps 3 as 3.0).
    static func sameStoredValue(_ left: SQLValue, _ right: SQLValue) -> Bool {
        switch (left, right) {
        case (.integer, .real), (.real, .integer):
            return left.double == right.double
        default:
            return left == right
        }
    }
}
