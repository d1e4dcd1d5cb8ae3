import Foundation
import PostgreSQL
import PostgresStore
import Store

/// What the PostgreSQL store does today: created or checked for its schema (`migrate`),
/// filled from a SQLite store and copied back (`copy`, in Gallery+Copy.swift), checked
/// (`check`) and summed up (`status`). The other commands need a SQLite store for now.
extension Gallery {
    /// Whether `location` names a PostgreSQL store (a `postgresql://` or `postgres://` URL)
    /// rather than a SQLite file.
    public static func isPostgres(_ location: String) -> Bool { PostgresLocation.isURL(location) }

    /// `location` as messages show it: a URL without its password, a path made absolute.
    public static func displayed(_ location: String) -> String {
        isPostgres(location) ? PostgresLocation.redacted(location) : absolute(location)
    }

    /// Creates the store's tables in the PostgreSQL database at `location`, or finds them
    /// current; refuses a newer, older or foreign schema. Returns whether it created them.
    @discardableResult
    public static func migratePostgres(_ location: String, busyTimeout: TimeInterval? = nil) throws -> PostgresStore.MigrationOutcome {
        let outcome = try withPostgresStore(location, lockTimeout: busyTimeout) { try $0.migrate() }
        if outcome == .created { try createLocalUser(location, busyTimeout: busyTimeout) }
        if outcome == .upgraded { try fillSearchColumns(location, busyTimeout: busyTimeout) }
        return outcome
    }

    /// Photos stored before search get their search terms (computed here, in Swift, as every
    /// store's are), so an upgraded store finds them at once.
    static func fillSearchColumns(_ location: String, busyTimeout: TimeInterval?) throws {
        let gallery = try PostgresGallery(location: location, busyTimeout: busyTimeout)
        defer { gallery.close() }
        try gallery.writableStore.write { try SearchIndex.backfill(in: $0) }
    }

    /// Makes the local user in a store just created, as a SQLite store's first migration
    /// does: the same users on both.
    static func createLocalUser(_ location: String, busyTimeout: TimeInterval?) throws {
        let gallery = try PostgresGallery(location: location, busyTimeout: busyTimeout)
        defer { gallery.close() }
        _ = try gallery.user(named: GalleryUser.localName)
    }

    /// The problems `check` finds in the PostgreSQL store at `location`: tables, columns,
    /// indexes or foreign keys not as this program made them (then nothing else is
    /// checked), else the same recomputed counts as a SQLite store's, and sort keys that
    /// differ from this program's (PostgreSQL checks its own foreign keys and indexes).
    public static func checkPostgres(_ location: String, busyTimeout: TimeInterval? = nil) throws -> [String] {
        try withPostgresStore(location, lockTimeout: busyTimeout) { try problems(in: $0) }
    }

    static func problems(in store: PostgresStore) throws -> [String] {
        try store.requireCurrent()
        let differences = try store.schemaDifferences()
        if !differences.isEmpty { return differences }
        let rows = { (sql: String) in try PostgresRows.values(of: sql, on: store.connection) }
        var problems = try RegionCounts.check(rows: rows) + (try photosAwayFromTheirPlaces(rows: rows)) + (try store.historyProblems())
        let stale = try store.staleSortKeys()
        if !stale.isEmpty {
            let examples = stale.prefix(5).map { "\($0.entity) \($0.id) \($0.attribute)" }.joined(separator: ", ")
            problems.append("\(stale.count) sort \(stale.count == 1 ? "key differs" : "keys differ") from this program's order "
                            + "(\(examples)\(stale.count > 5 ? ", …" : "")): rows are listed out of order")
        }
        return problems
    }

    /// What the PostgreSQL store at `location` holds and its last sync, read in one
    /// snapshot (as `status()` reads a SQLite store's).
    public static func postgresStatus(_ location: String, now: Date = Date(), busyTimeout: TimeInterval? = nil) throws -> GalleryStatus {
        let gallery = try PostgresGallery(location: location, busyTimeout: busyTimeout)
        defer { gallery.close() }
        return try gallery.status(now: now)
    }

    /// Runs `body` on the PostgreSQL store at `location`, closing it after; its errors
    /// become the gallery's (`withPostgresErrors`).
    static func withPostgresStore<T>(_ location: String, lockTimeout: TimeInterval? = nil, _ body: (PostgresStore) throws -> T) throws -> T {
        try withPostgresErrors(location) {
            let store = try PostgresStore(location: location, schema: TopRegionsSchema.postgres,
                                          lockTimeout: lockTimeout ?? PostgresStore.defaultLockTimeout)
            defer { store.close() }
            return try body(store)
        }
    }

    /// Runs `body`, turning the PostgreSQL store's errors into the gallery's:
    /// `storeUnavailable`, `noStore` for a database without a store, `busy` for a lock
    /// waited on too long. The client's own errors are the database's words, never the
    /// program's SQL.
    static func withPostgresErrors<T>(_ location: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw postgresError(error, location: location)
        }
    }

    /// `withPostgresErrors` for an asynchronous body.
    static func withPostgresErrors<T>(_ location: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw postgresError(error, location: location)
        }
    }

    /// A PostgreSQL client's or store's error as the gallery's; any other error as it is.
    private static func postgresError(_ error: Error, location: String) -> Error {
        var error = error
        if let client = error as? PostgresError {
            error = PostgresStoreError(client, doing: "cannot read", location: PostgresLocation.redacted(location))
        }
        if let error = error as? PostgresStoreError {
            switch (error.kind, error.underlying) {
            case (.noStore, _): return GalleryError(.noStore, error.message, hint: "run `topregions migrate --store URL` or `topregions copy --to URL` first")
            case (.busy, _): return GalleryError(.busy(pid: nil), error.message)
            case (_, let underlying?) where underlying.isConnectionGone:
                return GalleryError(.storeUnreachable, error.message,
                                    hint: "the connection went during the command: a change it was making may or may not have been made; look, then try again")
            case (_, let underlying?) where underlying.isTransientConnectionFailure:
                return GalleryError(.storeUnreachable, error.message, hint: "try again when the server takes connections")
            default: return GalleryError(.storeUnavailable, error.message)
            }
        }
        if let error = error as? StoreError { return GalleryError(.storeUnavailable, error.message) }
        return error
    }
}
