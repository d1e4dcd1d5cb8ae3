import Foundation
import PostgreSQL
import PostgresStore
import Store

/// What the PostgreSQL store does today: created or checked for its schema (`migrate`),
/// filled from a SQLite store and copied back (`copy`), and checked (`check`). The other
/// commands need a SQLite store for now.
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
    public static func migratePostgres(_ location: String) throws -> Bool {
        try withPostgresStore(location) { try $0.migrate() }
    }

    /// The problems `check` finds in the PostgreSQL store at `location`: the same recomputed
    /// counts as a SQLite store's, and sort keys that differ from this program's
    /// (PostgreSQL checks its own foreign keys and indexes).
    public static func checkPostgres(_ location: String) throws -> [String] {
        try withPostgresStore(location) { store in
            try store.requireCurrent()
            let rows = { (sql: String) in Self.sqlValues(try store.connection.query(sql)) }
            var problems = try RegionCounts.check(rows: rows) + (try photosAwayFromTheirPlaces(rows: rows))
            let stale = try store.staleSortKeys()
            if !stale.isEmpty {
                let examples = stale.prefix(5).map { "\($0.entity) \($0.id) \($0.attribute)" }.joined(separator: ", ")
                problems.append("\(stale.count) sort \(stale.count == 1 ? "key differs" : "keys differ") from this program's order "
                                + "(\(examples)\(stale.count > 5 ? ", …" : "")): rows are listed out of order")
            }
            return problems
        }
    }

    /// What a PostgreSQL store holds, as a copy reports it: photos and regions with photos.
    public static func postgresCounts(_ location: String) throws -> (photos: Int64, regions: Int64) {
        try withPostgresStore(location) { store in
            try store.requireCurrent()
            let count = { (sql: String) in Int64((try store.connection.query(sql)).rows.first?.first.flatMap { $0 } ?? "0") ?? 0 }
            return (try count("SELECT count(*) FROM Photo"), try count("SELECT count(*) FROM Region WHERE photoCount > 0"))
        }
    }

    /// Copies a whole gallery between any two stores, each a SQLite file path or a
    /// PostgreSQL URL. The destination must be new: a file that does not exist, or a
    /// database with no gallery. A failed copy leaves nothing at the destination.
    public static func copyStore(from source: String, to destination: String, busyTimeout: TimeInterval? = nil) throws {
        switch (PostgresLocation.isURL(source), PostgresLocation.isURL(destination)) {
        case (false, false):
            try copy(storeAt: source, to: destination, busyTimeout: busyTimeout)
        case (false, true):
            // Connected first: an unreachable database fails before the source is copied.
            try withPostgresStore(destination) { store in
                try withMigratedCopy(of: source, busyTimeout: busyTimeout) { gallery in _ = try store.copy(from: gallery.store) }
            }
        case (true, false):
            try copyPostgres(source, toFile: destination)
        case (true, true):
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try copyPostgres(source, toFile: directory + "/gallery.sqlite")
            try copyStore(from: directory + "/gallery.sqlite", to: destination)
        }
    }

    /// Runs `body` on a gallery at this program's schema holding what the SQLite store at
    /// `source` holds: a copy of it, so the source is only read (never migrated).
    private static func withMigratedCopy(of source: String, busyTimeout: TimeInterval?, _ body: (Gallery) throws -> Void) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let copy = directory + "/gallery.sqlite"
        try Self.copy(storeAt: source, to: copy, busyTimeout: busyTimeout)
        let gallery = try open(path: copy, for: .write)
        defer { gallery.close() }
        try body(gallery)
    }

    /// Writes the PostgreSQL store at `location` into a new SQLite store at `destination`:
    /// built beside it under a temporary name and linked into place only when whole, so a
    /// file that appeared meanwhile is never overwritten and a failed copy leaves nothing.
    private static func copyPostgres(_ location: String, toFile destination: String) throws {
        try refuseExisting(destination)
        let directory = URL(fileURLWithPath: absolute(destination)).deletingLastPathComponent().path
        let building = directory + "/.topregions-copy-\(UUID().uuidString).sqlite"
        defer { ["", "-wal", "-shm", "-journal"].forEach { try? FileManager.default.removeItem(atPath: building + $0) } }
        do {
            let gallery = try open(path: building, for: .create)
            defer { gallery.close() }
            try withPostgresStore(location) { _ = try $0.copy(into: gallery.store) }
        }
        // Closing the last connection folds SQLite's journal into the file; linked alone, a
        // file whose journal still held commits would be a copy without them.
        if let size = (try? FileManager.default.attributesOfItem(atPath: building + "-wal"))?[.size] as? NSNumber, size.intValue > 0 {
            throw GalleryError(.storeUnavailable, "cannot copy the store to \(absolute(destination)): the copy's journal was not folded into it")
        }
        guard link(building, destination) == 0 else {
            let reason = errno == EEXIST ? "a file is there already; a copy overwrites nothing" : String(cString: strerror(errno))
            throw GalleryError(.storeUnavailable, "cannot copy the store to \(absolute(destination)): \(reason)")
        }
    }

    private static func refuseExisting(_ destination: String) throws {
        var status = stat()
        if lstat(destination, &status) == 0 {
            throw GalleryError(.storeUnavailable, "cannot copy the store to \(absolute(destination)): a file or a symbolic link is there already; a copy overwrites nothing")
        }
        let directory = URL(fileURLWithPath: absolute(destination)).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw GalleryError(.storeUnavailable, "cannot copy the store to \(absolute(destination)): there is no directory \(directory)")
        }
    }

    private static func temporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/topregions-copy-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw GalleryError(.storeUnavailable, "cannot make a temporary directory for the copy: \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// Runs `body` on the PostgreSQL store at `location`, closing it after; its errors
    /// become the gallery's (`storeUnavailable`, or `noStore` for a database without one).
    static func withPostgresStore<T>(_ location: String, _ body: (PostgresStore) throws -> T) throws -> T {
        do {
            let store = try PostgresStore(location: location, schema: TopRegionsSchema.postgres)
            defer { store.close() }
            return try body(store)
        } catch let error as PostgresStoreError {
            switch error.kind {
            case .noStore: throw GalleryError(.noStore, error.message, hint: "run `topregions migrate --store URL` or `topregions copy --to URL` first")
            default: throw GalleryError(.storeUnavailable, error.message)
            }
        } catch let error as StoreError {
            throw GalleryError(.storeUnavailable, error.message)
        }
    }

    /// PostgreSQL's rows (text) as the values the checks read: integers where the text is
    /// one, else text.
    private static func sqlValues(_ result: PostgresResult) -> [[SQLValue]] {
        result.rows.map { row in
            row.map { text in
                guard let text else { return .null }
                return Int64(text).map(SQLValue.integer) ?? .text(text)
            }
        }
    }
}
