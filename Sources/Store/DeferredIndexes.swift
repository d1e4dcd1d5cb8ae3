import Foundation

/// Dropping a table's indexes for a bulk load and building them again after it.
///
/// SQLite keeps an index up to date one row at a time, each insert a descent into a B-tree
/// at a random place; `CREATE INDEX` over rows already stored sorts them first and writes
/// the B-tree once, in order, which is much faster for a large load into a table that
/// holds few rows yet (`topregions-bench sync.ceiling` measures it). Meanwhile, queries that would
/// have used the dropped indexes scan the table instead: right, but slower.
///
/// The statements that recreate the indexes are kept in `store_metadata` in the very
/// transaction that drops them, so a process that dies before it builds them again leaves
/// them noted, and `buildDeferredIndexes()` in any later process builds them. Opening a
/// store does not: another process may be in the middle of its load, and a reader that
/// opened the file would then build a million rows' indexes in its place. The loader
/// builds what is noted before its next load (the sync does, under its lock). UNIQUE
/// indexes are never dropped: they enforce constraints that the load itself relies on.
enum DeferredIndexes {
    static let metadataKey = "deferred_indexes"

    /// Drops `table`'s non-unique indexes and notes how to create them again; returns their
    /// names. Indexes already deferred stay noted.
    static func drop(on table: String, _ connection: Connection) throws -> [String] {
        let rows = try connection.rows("""
            SELECT name, sql FROM sqlite_schema
            WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE %'
            ORDER BY name
            """, [.text(table)])
        let dropped = rows.compactMap { row in row[0].string.flatMap { name in row[1].string.map { (name, $0) } } }
        guard !dropped.isEmpty else { return [] }
        let noted = try statements(connection) + dropped.map(\.1)
        try connection.run("INSERT INTO store_metadata (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                           [.text(metadataKey), .text(try encode(noted))])
        for (name, _) in dropped { try connection.execute("DROP INDEX \(SQL.quote(name))") }
        return dropped.map(\.0)
    }

    /// Creates every noted index and forgets the notes; returns how many it created.
    static func build(_ connection: Connection) throws -> Int {
        let noted = try statements(connection)
        guard !noted.isEmpty else { return 0 }
        for statement in noted { try connection.execute(statement) }
        try connection.run("DELETE FROM store_metadata WHERE key = ?", [.text(metadataKey)])
        return noted.count
    }

    /// The noted `CREATE INDEX` statements, oldest first.
    static func statements(_ connection: Connection) throws -> [String] {
        guard let text = try connection.scalar("SELECT value FROM store_metadata WHERE key = ?", [.text(metadataKey)])?.string else {
            return []
        }
        // The file is input like any other: run nothing from it but one CREATE INDEX each.
        guard let statements = try? JSONDecoder().decode([String].self, from: Data(text.utf8)),
              statements.allSatisfy({ $0.hasPrefix("CREATE INDEX ") && !$0.contains(";") }) else {
            throw StoreError(.corrupt, "store_metadata's \(metadataKey) (\(text.utf8.count) bytes) is not a list of CREATE INDEX statements")
        }
        return statements
    }

    private static func encode(_ statements: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(statements), as: UTF8.self)
    }
}

extension Store {
    /// Drops the non-unique indexes of `entity`'s table for a bulk load, in one committed
    /// transaction; `buildDeferredIndexes()` creates them again. Returns the dropped
    /// indexes' names (none when there were none). If the process dies before it builds
    /// them, they stay noted in the file for the next `buildDeferredIndexes()`.
    @discardableResult
    public func deferIndexes(of entity: Entity) throws -> [String] {
        try pool.withWriter { connection in
            try Self.changingSchema(connection) { try DeferredIndexes.drop(on: entity.name, connection) }
        }
    }

    /// Creates the indexes `deferIndexes(of:)` dropped, in one transaction; returns how many
    /// (0 when none are deferred, without taking the write lock).
    @discardableResult
    public func buildDeferredIndexes() throws -> Int {
        try pool.withWriter { connection in
            guard try !DeferredIndexes.statements(connection).isEmpty else { return 0 }
            return try Self.changingSchema(connection) { try DeferredIndexes.build(connection) }
        }
    }

    /// `deferIndexes(of:)` on a background thread.
    @discardableResult
    public func deferIndexes(of entity: Entity) async throws -> [String] {
        try await self.onWriterThread { try self.deferIndexes(of: entity) }
    }

    /// `buildDeferredIndexes()` on a background thread (building a million rows' indexes
    /// takes seconds).
    @discardableResult
    public func buildDeferredIndexes() async throws -> Int {
        try await self.onWriterThread { try self.buildDeferredIndexes() }
    }

    /// The `CREATE INDEX` statements of the indexes deferred and not built yet, oldest first.
    public func deferredIndexStatements() throws -> [String] {
        try pool.withWriter { try DeferredIndexes.statements($0) }
    }

    /// The names of the indexes `deferredIndexStatements()` would create.
    public func deferredIndexNames() throws -> [String] {
        try deferredIndexStatements().map { statement in
            let name = statement.dropFirst("CREATE INDEX ".count).prefix { $0 != " " && $0 != "(" }
            return name.trimmingCharacters(in: CharacterSet(charactersIn: "\"`[]"))
        }
    }

    /// `body` in one transaction, then the connection's cached statements dropped: they were
    /// prepared against the schema before it.
    private static func changingSchema<T>(_ connection: Connection, _ body: () throws -> T) throws -> T {
        let value = try connection.inImmediateTransaction(body)
        connection.clearStatementCache()
        return value
    }
}
