import Foundation
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
    /// The store the lists are written to, through transactions: for the gallery's own
    /// write methods (extensions of this protocol). Writing through it directly bypasses
    /// the rules they keep (20 Recents, Favorites' places, the counts).
    var writableStore: any StoreWriting { get }
    /// Opened read-only: writes throw, and the local user is not created on first use.
    var isReadOnly: Bool { get }
    /// Names the store among every store of the user (its file's path, its database's URL
    /// without password): what is cached outside it is kept apart by this.
    var storeIdentity: String { get }
}

/// A gallery whose commits can be followed, whoever makes them, on this host or another:
/// the SQLite `Gallery`, or a PostgreSQL store's (`PostgresGallery`). Results controllers
/// and live lists (`watch`, the HTTP change streams) run on either through the same
/// methods (extensions of this protocol).
public protocol GalleryObserving: GalleryReading {
    /// The store the results controllers fetch from and follow.
    var observableStore: any ObservableStore { get }
}

extension Gallery: GalleryWriting, GalleryObserving {
    public var storeIdentity: String { path ?? "" }
    public var readableStore: any StoreReading { store }
    public var writableStore: any StoreWriting { store }
    public var observableStore: any ObservableStore { store }
}

extension Gallery {
    /// Opens the gallery at `location` for reading: a PostgreSQL store for a
    /// `postgresql://` URL, else the SQLite store at that path (`open(path:for: .read)`).
    public static func openForReading(_ location: String, busyTimeout: TimeInterval? = nil, poolSize: Int = 1) throws -> any GalleryReading {
        if isPostgres(location) { return try PostgresGallery(location: location, busyTimeout: busyTimeout, poolSize: poolSize) }
        return try open(path: location, for: .read, busyTimeout: busyTimeout)
    }

    /// Opens the gallery at `location` for changing users' lists: a PostgreSQL store for a
    /// `postgresql://` URL, else the SQLite store at that path (`open(path:for: .write)`).
    public static func openForWriting(_ location: String, busyTimeout: TimeInterval? = nil, poolSize: Int = 1) throws -> any GalleryWriting {
        if isPostgres(location) { return try PostgresGallery(location: location, busyTimeout: busyTimeout, poolSize: poolSize) }
        return try open(path: location, for: .write, busyTimeout: busyTimeout)
    }

    /// Opens the gallery at `location` for following its lists: a PostgreSQL store for a
    /// `postgresql://` URL, else the SQLite store at that path (`open(path:for: .read)`).
    /// Throws for a SQLite store that can only be read as a snapshot (its directory cannot
    /// be written, so no other process's commits can be seen).
    public static func openForObserving(_ location: String, busyTimeout: TimeInterval? = nil,
                                        poolSize: Int = 1) throws -> any GalleryObserving & GalleryWriting {
        if isPostgres(location) { return try PostgresGallery(location: location, busyTimeout: busyTimeout, poolSize: poolSize) }
        let gallery = try open(path: location, for: .read, busyTimeout: busyTimeout)
        guard !gallery.isSnapshot else {
            gallery.close()
            throw GalleryError(.storeUnavailable, "the store at \(absolute(location)) can only be read as a snapshot here (its directory cannot be written, "
                               + "so no other process's commits can be seen): its lists cannot be followed")
        }
        return gallery
    }
}
