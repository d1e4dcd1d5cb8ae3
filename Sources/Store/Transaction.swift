/// Access to the store inside `Store.write`: a unit of work that commits whole or not at
/// all. Every row it changes, by whatever means (records, delete rules, raw SQL), is in the
/// transaction's change set, which observers and the history receive after commit: SQLite
/// tells the store of each one (`ChangeRecorder`).
public final class Transaction: ReadContext {
    /// What this transaction has changed so far.
    public var changes: ChangeSet { connection.changeRecorder?.changes ?? ChangeSet() }

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
            conditions.append("\(SQL.quote(column)) = ?")
            arguments.append(values[index])
        }
        let sql = "SELECT \(Self.columnList(entity)) FROM \(SQL.quote(entity.name)) WHERE \(conditions.joined(separator: " AND ")) LIMIT 1"
        guard let row = try connection.rows(sql, arguments).first, let id = row[0].int64 else {
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
            let sql = "SELECT \(Self.columnList(entity)) FROM \(SQL.quote(entity.name)) WHERE \(SQL.quote(uniqueColumn)) IN (\(SQL.placeholders(chunk.count)))"
            for row in try connection.rows(sql, Array(chunk)) {
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
        if arguments.isEmpty {
            try connection.execute(sql)
        } else {
            try connection.run(sql, arguments)
        }
    }

    /// Creates the tables and indexes of an entity (in a migration).
    public func create(_ entity: Entity) throws {
        for statement in entity.createStatements() { try connection.execute(statement) }
    }

    private func storedValues<R: Record>(_ type: R.Type, id: Int64) throws -> [SQLValue]? {
        let entity = R.entity
        let sql = "SELECT \(entity.storedColumns.map(SQL.quote).joined(separator: ", ")) FROM \(SQL.quote(entity.name)) WHERE \(SQL.quote(entity.primaryKey)) = ?"
        return try connection.rows(sql, [.integer(id)]).first?.values
    }

    /// Writes the columns whose value differs between `old` and `new`; returns the keys
    /// that changed (attribute names, and relationship names for foreign keys).
    private func write(_ entity: Entity, id: Int64, from old: [SQLValue], to new: [SQLValue]) throws -> Set<String> {
        let changed = entity.storedColumns.indices.filter { !Self.sameStoredValue(old[$0], new[$0]) }
        guard !changed.isEmpty else { return [] }
        let assignments = changed.map { "\(SQL.quote(entity.storedColumns[$0])) = ?" }.joined(separator: ", ")
        let sql = "UPDATE \(SQL.quote(entity.name)) SET \(assignments) WHERE \(SQL.quote(entity.primaryKey)) = ?"
        try connection.run(sql, changed.map { new[$0] } + [.integer(id)])
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
