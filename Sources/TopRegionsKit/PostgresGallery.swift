import Foundation
import PostgreSQL
import PostgresStore
import Store

/// A gallery in a PostgreSQL database: its lists, photos, regions and users read, and its
/// users' Recents and Favorites written, as `Gallery` does with a SQLite store. Its errors
/// are the gallery's (`GalleryError`), as a SQLite gallery's are.
public final class PostgresGallery: GalleryWriting, GalleryObserving {
    private let store: PostgresRecordStore
    let location: String
    /// How long a statement waits for a lock another session holds.
    public let busyTimeout: TimeInterval
    public var readableStore: any StoreReading { self }
    public var writableStore: any StoreWriting { self }
    public var observableStore: any ObservableStore { self }
    public var storeIdentity: String { PostgresLocation.redacted(location) }
    public var isReadOnly: Bool { false }

    /// Opens the gallery in the database at `location` (a `postgresql://` URL). Throws
    /// `noStore` when the database holds none, `storeUnavailable` when it cannot be reached
    /// or holds another program's schema, `busy` when a lock was waited for too long. Reads
    /// and writes share up to `poolSize` connections (1 to 64).
    public init(location: String, busyTimeout: TimeInterval? = nil, poolSize: Int = 1) throws {
        self.location = location
        let lockTimeout = busyTimeout ?? PostgresStore.defaultLockTimeout
        self.busyTimeout = lockTimeout
        store = try Gallery.withPostgresErrors(location) {
            let database = try PostgresStore(location: location, schema: TopRegionsSchema.postgres, lockTimeout: lockTimeout)
            do {
                return try PostgresRecordStore(database, poolSize: poolSize, lockTimeout: lockTimeout)
            } catch {
                database.close()
                throw error
            }
        }
    }

    public func close() { store.close() }

    /// Opens the gallery at `location` for a sync: creates the store in an empty database
    /// (as `migrate` does) or upgrades an older one first.
    public static func openForSyncing(location: String, busyTimeout: TimeInterval? = nil, poolSize: Int = 1) throws -> PostgresGallery {
        _ = try Gallery.migratePostgres(location, busyTimeout: busyTimeout)
        return try PostgresGallery(location: location, busyTimeout: busyTimeout, poolSize: poolSize)
    }
}

extension PostgresGallery: GallerySyncing {
    public func tryAcquireSyncLock() throws -> any SyncLockHold {
        try Gallery.withPostgresErrors(location) { try PostgresSyncLock.acquire(location: location) }
    }

    /// PostgreSQL keeps its indexes up to date row by row: no bulk loads.
    public func deferPhotoIndexes() async throws -> Bool { false }

    public func buildDeferredIndexes() async throws {}

    /// Daemons on any number of hosts: the sync lock lets one pass run at a time.
    public var takesManyDaemons: Bool { true }

    /// Shows the daemon to `status` on every host (`PostgresDaemonPresence`); takes no
    /// lock from other daemons.
    public func holdDaemonLock() throws -> any SyncLockHold {
        try Gallery.withPostgresErrors(location) { try PostgresDaemonPresence.register(location: location) }
    }

    /// A statement waits at most the lock timeout (`TOPREGIONS_BUSY_TIMEOUT`) anyway.
    public func interruptWaits() {}
}

/// The record store with the gallery's errors (`GalleryError`), for the lists' methods and
/// results controllers.
extension PostgresGallery: ObservableStore {
    public var schema: Schema { store.schema }

    public func read<T>(_ body: (ReadContext) throws -> T) throws -> T {
        try Gallery.withPostgresErrors(location) { try store.read(body) }
    }

    @discardableResult
    public func write<T>(author: String?, _ body: (Transaction) throws -> T) throws -> T {
        try Gallery.withPostgresErrors(location) { try store.write(author: author, body) }
    }

    @discardableResult
    public func commit<T>(author: String?, _ body: (Transaction) throws -> T) throws -> Commit<T> {
        try Gallery.withPostgresErrors(location) { try store.commit(author: author, body) }
    }

    public func observe(_ handler: @escaping @Sendable (StoreEvent) -> Void) -> StoreObservation {
        store.observe(handler)
    }

    public func currentToken() throws -> Int64 {
        try Gallery.withPostgresErrors(location) { try store.currentToken() }
    }

    public func commitCounter() -> UInt64 { store.commitCounter() }

    public func history(since token: Int64) throws -> [HistoryEntry] {
        try Gallery.withPostgresErrors(location) { try store.history(since: token) }
    }

    public func cachedValue(named name: String) throws -> CachedValue? {
        try Gallery.withPostgresErrors(location) { try store.cachedValue(named: name) }
    }

    public func setCachedValue(_ value: CachedValue, named name: String) throws {
        try Gallery.withPostgresErrors(location) { try store.setCachedValue(value, named: name) }
    }

    public func deleteCachedValue(named name: String) throws {
        try Gallery.withPostgresErrors(location) { try store.deleteCachedValue(named: name) }
    }
}
