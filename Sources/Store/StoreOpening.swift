import CSQLite
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
            case _ where error.resultCode?.primary == .cantOpen || error.resultCode?.primary == .readonly:
                // WAL needs to write its shared-memory file even to read.
                let cause = StoreFile.writeObstacle(path).map { "cannot write beside it: \($0)" } ?? error.message
                throw StoreError(.cannotOpen, "Cannot open the store at \(path): \(cause)", resultCode: error.resultCode)
            default:
                error.message = "The store at \(path) cannot be read: \(error.message)"
            }
            throw error
        }
    }

    /// Refuses a store that has applied migrations this program does not know.
    /// Refuses a file that is not a store: a SQLite database with tables of its own and no
    /// store tables (another program's), which migrating would fill with ours; and, unless
    /// the store may be created, an empty database (a file someone made with `touch`).
    /// Either is left untouched.
    static func refuseForeignDatabase(_ connection: Connection, path: String, create: Bool) throws {
        guard try !hasMigrationsTable(connection) else { return }
        let tables = try connection.scalar("SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'")?.int64 ?? 0
        if tables > 0 {
            throw StoreError(.notADatabase, "\(path) is a SQLite database of another program's, not a store (it has tables of its own); it was left untouched")
        }
        if !create {
            throw StoreError(.notFound, "no store at \(path) (the file is an empty database)")
        }
    }

    static func refuseNewerSchema(_ connection: Connection, migrator: Migrator, path: String) throws {
        let applied = try appliedMigrations(connection)
        let known = Set(migrator.names)
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else {
            throw StoreError(.newerSchema,
                             "The store at \(path) was written by a newer version: it has migrations this program does not know (\(unknown.joined(separator: ", "))); it was left untouched")
        }
    }

    /// The first connection, read and checked: for writing, refused as `cannotOpen` when
    /// the file or its directory cannot be written; for reading only, opened as immutable
    /// when WAL's shared-memory file neither exists nor can be made (a read-only file
    /// system, or a directory of another user's while no process has the store open). Also
    /// returns the path or URI the store's other connections open.
    static func open(_ path: String, readOnly: Bool, busyMilliseconds: Int32) throws -> (Connection, String) {
        guard readOnly else {
            let writer = try connect(path, flags: SQLITE_OPEN_READWRITE, displayPath: path)
            writer.setBusyTimeout(milliseconds: busyMilliseconds)
            if writer.isReadOnly {
                throw StoreError(.cannotOpen, "Cannot write the store at \(path): \(StoreFile.writeObstacle(path) ?? "SQLite opened it read-only")",
                                 resultCode: .readonly)
            }
            try verifyReadable(writer, path: path)
            return (writer, path)
        }
        let reader = try connect(path, flags: SQLITE_OPEN_READONLY, displayPath: path)
        reader.setBusyTimeout(milliseconds: busyMilliseconds)
        do {
            try verifyReadable(reader, path: path)
            return (reader, path)
        } catch let error as StoreError where error.kind == .cannotOpen && !FileManager.default.fileExists(atPath: path + "-shm") {
            // A snapshot of the main file only: right when no committed changes wait in the
            // WAL (they would be silently missed).
            let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            guard wal == 0 else {
                throw StoreError(.cannotOpen, "Cannot read the store at \(path): changes committed to \(path)-wal need \(path)-shm, which cannot be made here (\(StoreFile.writeObstacle(path) ?? "no write access")); open it once as a user who can write beside it")
            }
            let uri = immutableURI(path)
            let immutable = try connect(uri, flags: SQLITE_OPEN_READONLY, displayPath: path)
            try verifyReadable(immutable, path: path)
            return (immutable, uri)
        }
    }

    /// A connection, or `cannotOpen` naming the cause and the path.
    static func connect(_ openPath: String, flags: Int32, displayPath: String) throws -> Connection {
        do {
            return try Connection(path: openPath, flags: flags)
        } catch let error as StoreError where error.resultCode?.primary == .cantOpen || error.resultCode?.primary == .readonly {
            let cause = StoreFile.writeObstacle(displayPath).map { "cannot write it: \($0)" } ?? error.message
            throw StoreError(.cannotOpen, "Cannot open the store at \(displayPath): \(cause)", resultCode: error.resultCode)
        }
    }

    /// The URI that opens `path` as immutable (for a read-only file system).
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?immutable=1"
    }

    /// Refuses, for a read-only store, migrations this program would apply.
    static func refuseMigrationNeeded(_ connection: Connection, migrator: Migrator, path: String) throws {
        let applied = Set(try appliedMigrations(connection))
        let missing = migrator.names.filter { !applied.contains($0) }
        guard missing.isEmpty else {
            throw StoreError(.migrationNeeded,
                             "The store at \(path) needs migrations (\(missing.joined(separator: ", "))) that cannot be applied while it is open read-only: open it once with write access (topregions migrate)")
        }
    }

    static func configure(_ connection: Connection, path: String) throws {
        let mode: String?
        do {
            mode = try connection.scalar("PRAGMA journal_mode = WAL")?.string?.lowercased()
        } catch let error as StoreError where error.resultCode?.primary == .readonly || error.resultCode?.primary == .cantOpen {
            let cause = StoreFile.writeObstacle(path) ?? error.message
            throw StoreError(.cannotOpen, "Cannot write the store at \(path): \(cause)", resultCode: error.resultCode)
        }
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
        // A store that has every migration needs no write lock to open: a reader is not
        // held up by another process's long write.
        if try isUpToDate(connection, migrator: migrator) { return }
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

    /// Whether every bookkeeping table and every migration is there already.
    private static func isUpToDate(_ connection: Connection, migrator: Migrator) throws -> Bool {
        let names = StoreTables.createdNames
        let placeholders = names.map { _ in "?" }.joined(separator: ", ")
        let present = try connection.rows("SELECT name FROM sqlite_schema WHERE name IN (\(placeholders))", names.map { .text($0) })
        guard present.count == names.count else { return false }
        return Set(try appliedMigrations(connection)).isSuperset(of: migrator.names)
    }

    static func appliedMigrations(_ connection: Connection) throws -> [String] {
        guard try hasMigrationsTable(connection) else { return [] }
        return try connection.rows("SELECT name FROM store_migrations ORDER BY rowid").compactMap { $0[0].string }
    }

    /// Whether the file has the store's table of applied migrations: whether it is a store.
    static func hasMigrationsTable(_ connection: Connection) throws -> Bool {
        try (connection.scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'store_migrations'")?.int64 ?? 0) > 0
    }
}
