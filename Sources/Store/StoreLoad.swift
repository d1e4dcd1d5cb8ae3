import Foundation

extension Store {
    /// Runs `body` in a write transaction whose rows go unrecorded: no history entry, no
    /// change batch. For filling a new store that nobody observes yet from a copy of
    /// another (`Transaction.insertRow`): a history entry naming every row of a large
    /// gallery would be all cost, and no reader has a token from before it to catch up from.
    public func loadWithoutHistory<T>(_ body: (Transaction) throws -> T) throws -> T {
        if configuration.access == .readOnly {
            throw StoreError(.readOnly, "The store at \(path ?? "memory") is open read-only; nothing was written")
        }
        return try pool.withWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            let recorder = connection.changeRecorder
            recorder?.isSuspended = true
            defer {
                recorder?.isSuspended = false
                recorder?.reset()
            }
            do {
                let result = try body(Transaction(connection: connection, schema: schema))
                try connection.execute("COMMIT")
                return result
            } catch {
                if connection.isInTransaction { try? connection.execute("ROLLBACK") }
                throw error
            }
        }
    }
}

extension Transaction {
    /// Inserts a row of `entity` as it was stored elsewhere: its id and its stored columns'
    /// values in `Entity.storedColumns` order.
    public func insertRow(_ entity: Entity, id: Int64, values: [SQLValue]) throws {
        guard values.count == entity.storedColumns.count else {
            throw StoreError(.invalidRequest, "\(entity.name) \(id): \(values.count) values for \(entity.storedColumns.count) columns")
        }
        guard let connection = sqlite else {
            throw StoreError(.invalidRequest, "insertRow loads a SQLite store; \(entity.name) \(id) was not inserted")
        }
        let statement = try connection.statement(entity.insertWithPrimaryKeySQL)
        try statement.bind(.integer(id), at: 1)
        for (offset, value) in values.enumerated() {
            try statement.bind(value, at: Int32(offset + 2))
        }
        while try statement.step() {}
    }
}
