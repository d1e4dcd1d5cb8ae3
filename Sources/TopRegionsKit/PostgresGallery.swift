import Foundation
import PostgreSQL
import PostgresStore
import Store

/// A gallery in a PostgreSQL database: its lists, photos, regions and users read, and its
/// users' Recents and Favorites written, as `Gallery` does with a SQLite store. Its errors
/// are the gallery's (`GalleryError`), as a SQLite gallery's are.
public final class PostgresGallery: GalleryWriting {
    private let store: PostgresRecordStore
    private let location: String
    public var readableStore: any StoreReading { self }
    public var writableStore: any StoreWriting { self }
    public var isReadOnly: Bool { false }

    /// Opens the gallery in the database at `location` (a `postgresql://` URL). Throws
    /// `noStore` when the database holds none, `storeUnavailable` when it cannot be reached
    /// or holds another program's schema, `busy` when a lock was waited for too long.
    public init(location: String, busyTimeout: TimeInterval? = nil) throws {
        self.location = location
        store = try Gallery.withPostgresErrors(location) {
            let database = try PostgresStore(location: location, schema: TopRegionsSchema.postgres,
                                             lockTimeout: busyTimeout ?? PostgresStore.defaultLockTimeout)
            do {
                return try PostgresRecordStore(database)
            } catch {
                database.close()
                throw error
            }
        }
    }

    public func close() { store.close() }
}

extension PostgresGallery: StoreWriting {
    public func read<T>(_ body: (ReadContext) throws -> T) throws -> T {
        try Gallery.withPostgresErrors(location) { try store.read(body) }
    }

    @discardableResult
    public func write<T>(author: String?, _ body: (Transaction) throws -> T) throws -> T {
        try Gallery.withPostgresErrors(location) { try store.write(author: author, body) }
    }
}
