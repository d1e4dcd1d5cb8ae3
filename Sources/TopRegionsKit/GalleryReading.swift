import Foundation
import PostgreSQL
import PostgresStore
import Store

/// A gallery that can be read: the SQLite `Gallery`, or a PostgreSQL store's
/// (`PostgresGallery`). The lists, photos, regions and users are read through the same
/// methods (extensions of this protocol), so they answer the same on both stores.
public protocol GalleryReading: AnyObject, Sendable {
    /// The store the lists are read from (reads only: a gallery's writes go through its
    /// own methods, which keep its counts and lists consistent).
    var readableStore: any StoreReading { get }
    /// Closes the store: later calls throw.
    func close()
}

/// A gallery whose users' lists can be changed: the SQLite `Gallery`, or a PostgreSQL
/// store's (`PostgresGallery`). Views, Favorites and the local user are written through
/// the same methods (extensions of this protocol), with the same rules on both stores.
public protocol GalleryWriting: GalleryReading {
    /// The store the lists are written to, through transactions.
    var writableStore: any StoreWriting { get }
    /// Opened read-only: writes throw, and the local user is not created on first use.
    var isReadOnly: Bool { get }
}

extension Gallery: GalleryWriting {
    public var readableStore: any StoreReading { store }
    public var writableStore: any StoreWriting { store }
}

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

extension Gallery {
    /// Opens the gallery at `location` for reading: a PostgreSQL store for a
    /// `postgresql://` URL, else the SQLite store at that path (`open(path:for: .read)`).
    public static func openForReading(_ location: String, busyTimeout: TimeInterval? = nil) throws -> any GalleryReading {
        if isPostgres(location) { return try PostgresGallery(location: location, busyTimeout: busyTimeout) }
        return try open(path: location, for: .read, busyTimeout: busyTimeout)
    }

    /// Opens the gallery at `location` for changing users' lists: a PostgreSQL store for a
    /// `postgresql://` URL, else the SQLite store at that path (`open(path:for: .write)`).
    public static func openForWriting(_ location: String, busyTimeout: TimeInterval? = nil) throws -> any GalleryWriting {
        if isPostgres(location) { return try PostgresGallery(location: location, busyTimeout: busyTimeout) }
        return try open(path: location, for: .write, busyTimeout: busyTimeout)
    }
}
