import Foundation

/// The steps of opening a store file, in the order that keeps a refused file untouched:
/// read-only checks first, then settings that write, then migrations.
enum StoreOpening {
    /// Reads the schema, which fails on a file that is not a database or is damaged.
    static func verifyReadable(_ connection: Connection, path: String) throws {
        do {
            _ = try connection.scalar("SELECT count(*) FROM sqlite_schema")
        } catch var error as StoreError {
            switch error.kind {
            case .notADatabase:
                error.message = "The file at \(path) is not a SQLite database; it was left untouched"
            case .corrupt:
                error.message = "The store at \(path) is corrupt (\(error.message)); it was left untouched"
            default:
                error.message = "The store at \(path) cannot be read: \(error.message)"
            }
            throw error
        }
    }

    /// Refuses a store that has applied migrations this program does not know.
    static func refuseNewerSchema(_ connection: Connection, migrator: Migrator, path: String) throws {
        let applied = try appliedMigrations(connection)
        let known = Set(migrator.names)
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else {
            throw StoreError(.newerSchema,
                             "The store at \(path) was written by a newer version: it has migrations this program does not know (\(unknown.joined(separator: ", "))); it was left untouched")
        }
    }

    static func configure(_ connection: Connection) throws {
        let mode = try connection.scalar("PRAGMA journal_mode = WAL")?.string?.lowercased()
        guard mode == "wal" else {
            throw StoreError(.sqlite, "The store could not switch to WAL journaling (it reports \(mode ?? "nothing"))")
        }
        try connection.execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
        // Checkpoints at 10,000 WAL pages or more rather than SQLite's 1,000: a page of
        // photos dirties pages all over the indexes, so with the default nearly every sync
        // commit also ran a checkpoint (a third of the commit time of a large first sync).
        try CheckpointPolicy.install(on: connection)
    }

    /// Applies each migration not yet applied, each in its own transaction.
    static func migrate(_ connection: Connection, schema: Schema, migrator: Migrator) throws {
        try connection.inImmediateTransaction { try connection.execute(StoreTables.create) }
        for migration in migrator.migrations {
            do {
                try connection.inImmediateTransaction {
                    // Read inside the transaction: another process may have just applied it.
                    guard try !appliedMigrations(connection).contains(migration.name) else { return }
                    try migration.body(Transaction(connection: connection, schema: schema))
                    try connection.run("INSERT INTO store_migrations (name, applied_at) VALUES (?, ?)",
                                       [.text(migration.name), .real(Date().timeIntervalSince1970)])
                }
            } catch {
                throw StoreError(.migrationFailed, "Migration \(migration.name) failed and was rolled back: \(error)",
                                 resultCode: (error as? StoreError)?.resultCode, sql: (error as? StoreError)?.sql)
            }
            connection.clearStatementCache()
        }
    }

    static func appliedMigrations(_ connection: Connection) throws -> [String] {
        let exists = try connection.scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'store_migrations'")?.int64 ?? 0
        guard exists > 0 else { return [] }
        return try connection.rows("SELECT name FROM store_migrations ORDER BY rowid").compactMap { $0[0].string }
    }
}
