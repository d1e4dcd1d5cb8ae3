import Foundation
import PostgreSQL
import Store

/// A gallery's store in a PostgreSQL database: its schema, its version, and copies in from
/// and out to a SQLite store. The tables are the SQLite store's (`PostgresSchema`), so a
/// copy either way holds the same rows under the same ids.
///
/// One connection, used from one thread at a time.
public final class PostgresStore {
    /// The URL with its password hidden: what messages show.
    public let redactedLocation: String
    /// The tables the store holds.
    public let schema: PostgresSchema
    /// The connection: for a program's own queries of the store (`check`'s counts).
    public let connection: PostgresConnection
    /// The location as given, password included: for the store's other connections (a
    /// listener's). Never shown.
    package let location: String
    private let lockTimeout: TimeInterval

    /// How long a statement waits for a lock another session holds before it gives up
    /// (`busy`), unless told otherwise: as long as a SQLite store waits for another writer.
    public static let defaultLockTimeout: TimeInterval = 60

    /// Past this many rows, a transaction from outside this program (`psql`) is announced
    /// as changes unknown: watchers refetch once rather than read that many rows.
    public static let outsideWriteRowLimit = 10_000

    /// Connects to the database at `location` (a `postgresql://` URL; libpq's settings
    /// such as `PGPASSFILE` and `sslmode` apply). Nothing is read or created yet. A
    /// statement waits at most `lockTimeout` for a lock another session holds.
    public init(location: String, schema: PostgresSchema, lockTimeout: TimeInterval = defaultLockTimeout) throws {
        redactedLocation = PostgresLocation.redacted(location)
        self.schema = schema
        self.location = location
        self.lockTimeout = lockTimeout
        connection = try PostgresStoreError.wrapping("cannot connect to", location: redactedLocation) {
            let connection = try PostgresConnection(location)
            try Self.configure(connection, lockTimeout: lockTimeout)
            return connection
        }
    }

    /// Makes a session wait at most `lockTimeout` for a lock another session holds.
    static func configure(_ connection: PostgresConnection, lockTimeout: TimeInterval) throws {
        let milliseconds = Int(min(max(lockTimeout, 0.001), 86_400) * 1000)
        try connection.execute("SET lock_timeout = \(milliseconds)")
    }

    public func close() { connection.close() }

    /// What the database holds, as far as this program can tell.
    public enum State: Equatable, Sendable {
        /// None of the store's tables: `migrate` creates them.
        case empty
        /// This program's schema.
        case current
        /// Migrations this program does not know were applied: a newer program's store.
        case newer(unknown: [String])
        /// Some of this program's migrations are missing: an older program's store.
        case older(missing: [String])
        /// Tables named like the store's, not made by this program.
        case foreign(tables: [String])
    }

    /// Reads which schema the database holds.
    public func state() throws -> State {
        try PostgresStoreError.wrapping("cannot read the schema of", location: redactedLocation) { try readState() }
    }

    private func readState() throws -> State {
        // pg_class, not information_schema: the latter hides tables a role may not write.
        let tables = Set(try connection.query(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p', 'v', 'm', 'f')")
            .rows.compactMap { $0.first ?? nil })
        let ours = ([PostgresSchema.bookkeepingTable] + schema.schema.entities.map(\.name)).map { $0.lowercased() }
        guard tables.contains(PostgresSchema.bookkeepingTable) else {
            let clashing = ours.filter(tables.contains)
            return clashing.isEmpty ? .empty : .foreign(tables: clashing)
        }
        let applied = try connection.query("SELECT name FROM \(PostgresSchema.identifier(PostgresSchema.bookkeepingTable)) ORDER BY name")
            .rows.compactMap { $0.first ?? nil }
        guard applied.contains(PostgresSchema.ownMigrations[0]) else { return .foreign(tables: ours.filter(tables.contains)) }
        let unknown = applied.filter { !schema.migrationNames.contains($0) }
        if !unknown.isEmpty { return .newer(unknown: unknown) }
        let missing = schema.migrationNames.filter { !applied.contains($0) }
        return missing.isEmpty ? .current : .older(missing: missing)
    }

    /// Creates the store's tables in an empty database, upgrades a store of an older
    /// version of this program, or finds them current; says which.
    /// Refuses a newer or foreign schema, or one it cannot upgrade, changing nothing.
    /// What `migrate` did.
    public enum MigrationOutcome: Sendable, Equatable {
        /// The database was empty: the store was created.
        case created
        /// A store of an older version of this program: the missing migrations were applied.
        case upgraded
        /// The store was this program's already: nothing changed.
        case current
    }

    @discardableResult
    public func migrate() throws -> MigrationOutcome {
        try PostgresStoreError.wrapping("cannot create the store in", location: redactedLocation) {
            try connection.transaction(.readCommitted) { _ in try createIfEmpty() }
        }
    }

    /// Within a transaction: waits for any other program creating the store, then creates
    /// it if the database is empty. Throws for a schema this program cannot use.
    func createIfEmpty() throws -> MigrationOutcome {
        // Two programs creating the store at once would each find it empty.
        try connection.query("SELECT pg_advisory_xact_lock(hashtext('topregions.store.migrate'))")
        switch try readState() {
        case .current:
            // Triggers someone dropped or disabled are made again (without them no watcher
            // hears of a write), when they are all that differs from what this program made.
            var repaired = false
            let triggers = try triggerDifferences()
            if !triggers.isEmpty, try schemaDifferences().count == triggers.count {
                for statement in PostgresHistorySchema.triggerStatements(schema) { try connection.execute(statement) }
                repaired = true
            }
            try requireIntact()
            // A history entry written by hand past the token sequence: the sequence moves on.
            if let ahead = try PostgresHistory.tokenAheadOfSequence(on: connection) {
                try PostgresHistory.moveSequence(to: ahead, on: connection)
                repaired = true
            }
            return repaired ? .upgraded : .current
        case .empty:
            try schema.validateNames()
            try refuseEncoding()
            for statement in schema.createStatements() { try connection.execute(statement) }
            try recordApplied(schema.migrationNames)
            return .created
        case .older(let missing) where missing.allSatisfy({ schema.upgradeStatements($0) != nil }):
            for migration in missing {
                for statement in schema.upgradeStatements(migration) ?? [] { try connection.execute(statement) }
            }
            try recordApplied(missing)
            try requireIntact()
            return .upgraded
        case let other:
            throw refusal(other)
        }
    }

    private func recordApplied(_ migrations: [String]) throws {
        let now = Date().timeIntervalSince1970
        for name in migrations {
            try connection.query("INSERT INTO \(PostgresSchema.identifier(PostgresSchema.bookkeepingTable)) (name, applied_at) VALUES ($1, $2)",
                                 [.text(name), .real(now)])
        }
    }

    /// Refuses a database whose encoding cannot hold every character a gallery may store
    /// (titles come in every script): UTF-8 only, or SQL_ASCII, which keeps bytes as given.
    private func refuseEncoding() throws {
        let encoding = try connection.query("SHOW server_encoding").rows.first?.first ?? nil
        guard let encoding, !["UTF8", "SQL_ASCII"].contains(encoding) else { return }
        throw PostgresStoreError(.foreignDatabase, "\(redactedLocation) stores text as \(encoding), which cannot hold every title; "
                                 + "create the database with --encoding=UTF8 --template=template0")
    }

    /// What is wrong with the change history: an entry past the token sequence (`migrate`
    /// moves the sequence on).
    public func historyProblems() throws -> [String] {
        var problems = try PostgresOutsideWrites.recordingDefaults(on: connection)
        if let ahead = try PostgresHistory.tokenAheadOfSequence(on: connection) {
            problems.append("the history holds token \(ahead), which the token sequence has not reached (an entry written by hand?): "
                            + "new commits would take smaller tokens, which watchers ignore; `topregions migrate` moves the sequence past it")
        }
        return problems
    }

    /// Throws unless the database holds this program's schema.
    public func requireCurrent() throws {
        let state = try state()
        guard state == .current else { throw refusal(state) }
    }

    private func refusal(_ state: State) -> PostgresStoreError {
        switch state {
        case .current:
            return PostgresStoreError(.database, "the store in \(redactedLocation) is current")
        case .empty:
            return PostgresStoreError(.noStore, "there is no store in \(redactedLocation) yet")
        case .newer(let unknown):
            return PostgresStoreError(.newerSchema, "the store in \(redactedLocation) was written by a newer version of the program "
                                      + "(it has applied \(unknown.joined(separator: ", "))); upgrade this one to use it")
        case .older(let missing) where missing.allSatisfy({ schema.upgradeStatements($0) != nil }):
            return PostgresStoreError(.olderSchema, "the store in \(redactedLocation) was written by an older version of the program "
                                      + "(it lacks \(missing.joined(separator: ", "))): run `topregions migrate` to upgrade it")
        case .older(let missing):
            return PostgresStoreError(.olderSchema, "the store in \(redactedLocation) was written by an older version of the program, "
                                      + "which this one cannot upgrade (it lacks \(missing.joined(separator: ", ")))")
        case .foreign(let tables):
            return PostgresStoreError(.foreignDatabase, "\(redactedLocation) holds tables named like the store's (\(tables.joined(separator: ", "))) "
                                      + "that this program did not make; use an empty database")
        }
    }

    /// How many rows each entity's table holds, by entity name.
    public func rowCounts() throws -> [String: Int64] {
        try PostgresStoreError.wrapping("cannot count the rows of", location: redactedLocation) {
            var counts: [String: Int64] = [:]
            for entity in schema.schema.entities {
                let result = try connection.query("SELECT count(*) FROM \(PostgresSchema.identifier(entity.name))")
                let text = result.rows.first?.first ?? nil
                counts[entity.name] = text.flatMap { Int64($0) } ?? 0
            }
            return counts
        }
    }
}
