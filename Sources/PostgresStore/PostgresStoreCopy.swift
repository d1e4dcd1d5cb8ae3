import Foundation
import PostgreSQL
import Store

extension PostgresStore {
    /// Rows read or written per round trip of a copy.
    static let pageSize = 1000
    /// Rows per round trip of a table whose rows hold bytes (`PostgresColumns.holdsBytes`).
    static let pageSizeWithBytes = 50
    /// Rows read from SQLite and sent in one `COPY` while copying into PostgreSQL.
    static let copyPageSize = 5000

    /// Copies every row of `source` into this database, which must hold no gallery yet
    /// (the store is created when missing): one transaction, so a copy that fails leaves
    /// the database as it was. `source` must be at this program's schema; its history is
    /// not copied (this store's begins with the copy). Returns the rows copied per entity.
    ///
    /// `created`: per entity, a condition (SQL) that the rows creating a store writes meet
    /// (`migrate` makes a first user and settings). A store holding only such rows is as
    /// empty: they are replaced by the copied ones, and its history trimmed.
    @discardableResult
    public func copy(from source: Store, replacing created: [String: String] = [:]) throws -> [String: Int] {
        try PostgresStoreError.wrapping("cannot copy into", location: redactedLocation) {
            try connection.transaction(.readCommitted, attempts: 1) { _ in
                // The store's history begins after the copy: its rows are not announced
                // as a write from outside either.
                try connection.execute("SET LOCAL \(PostgresHistorySchema.recordingSetting) = 'off'")
                _ = try createIfEmpty()
                try refuseRows(except: created)
                try removeRows(of: Array(created.keys))
                var copied: [String: Int] = [:]
                try source.read { context in
                    for entity in schema.schema.entities {
                        copied[entity.name] = try copyRows(of: PostgresColumns(entity, in: schema), from: context)
                    }
                }
                for entity in schema.schema.entities { try restartIdentity(entity) }
                return copied
            }
        }
    }

    /// Throws `notEmpty` when any table of the store holds a row, other than one meeting
    /// its entity's condition in `created`.
    private func refuseRows(except created: [String: String]) throws {
        for entity in schema.schema.entities {
            let condition = created[entity.name].map { " WHERE NOT (\($0))" } ?? ""
            let result = try connection.query("SELECT EXISTS (SELECT 1 FROM \(PostgresSchema.identifier(entity.name))\(condition)) AS held")
            if try result.boolean(0, "held") == true {
                throw PostgresStoreError(.notEmpty, "\(redactedLocation) holds a gallery already (\(entity.name) has rows); a copy overwrites nothing: "
                                         + "give an empty database")
            }
        }
    }

    /// Deletes the rows of `entities` (those creating the store wrote) and trims the
    /// history of their writing: the copy's rows take their place.
    private func removeRows(of entities: [String]) throws {
        guard !entities.isEmpty else { return }
        for name in entities { try connection.execute("DELETE FROM \(PostgresSchema.identifier(name))") }
        _ = try PostgresHistory.trim(before: .distantFuture, on: connection)
    }

    /// Copies an entity's rows a page at a time, each page one `COPY … FROM STDIN`.
    private func copyRows(of columns: PostgresColumns, from context: ReadContext) throws -> Int {
        let copy = columns.postgresCopy()
        var last = Int64.min
        var copied = 0
        while true {
            let limit = columns.holdsBytes ? Self.pageSizeWithBytes : Self.copyPageSize
            let rows = try context.rows(columns.sqlitePageQuery(limit: limit), [.integer(last)])
            guard let lastID = rows.last?[0].int64 else { return copied }
            try connection.copyIn(copy, rows: try rows.map(columns.postgresValues))
            copied += rows.count
            last = lastID
        }
    }

    /// Sets an entity's id sequence past the ids copied, so the next insert takes a new one.
    private func restartIdentity(_ entity: Entity) throws {
        let table = PostgresSchema.identifier(entity.name), key = PostgresSchema.identifier(entity.primaryKey)
        try connection.query("SELECT setval(pg_get_serial_sequence($1, $2), (SELECT coalesce(max(\(key)), 0) + 1 FROM \(table)), false)",
                             [.text(table), .text(entity.primaryKey)])
    }

    /// Copies every row of this database into `destination`, a new store at this program's
    /// schema: what was committed when the copy began (one snapshot), in one write
    /// transaction of `destination`, without history. The rows a new store's migrations
    /// wrote (its first user, its settings) are replaced by the copied ones; give no store
    /// that holds anything else. Returns the rows copied per entity.
    @discardableResult
    public func copy(into destination: Store) throws -> [String: Int] {
        try requireIntact()
        return try PostgresStoreError.wrapping("cannot copy out of", location: redactedLocation) {
            try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            defer { if connection.isInTransaction { _ = try? connection.execute("ROLLBACK") } }
            let copied = try destination.loadWithoutHistory { transaction in
                for entity in schema.schema.entities {
                    try transaction.execute("DELETE FROM \(PostgresSchema.identifier(entity.name))")
                }
                var copied: [String: Int] = [:]
                for entity in schema.schema.entities {
                    copied[entity.name] = try copyRows(of: PostgresColumns(entity, in: schema), into: transaction)
                }
                return copied
            }
            try connection.execute("COMMIT")
            return copied
        }
    }

    private func copyRows(of columns: PostgresColumns, into transaction: Transaction) throws -> Int {
        var last = Int64.min
        var copied = 0
        while true {
            let limit = columns.holdsBytes ? Self.pageSizeWithBytes : Self.pageSize
            let result = try connection.query(columns.postgresPageQuery(limit: limit), [.integer(last)])
            guard !result.rows.isEmpty else { return copied }
            for row in result.rows.indices {
                let (id, values) = try columns.sqliteValues(result, row: row)
                try transaction.insertRow(columns.entity, id: id, values: values)
                last = id
            }
            copied += result.rows.count
        }
    }
}
