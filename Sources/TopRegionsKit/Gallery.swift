import Flickr
import Foundation
import PostgreSQL
import Store

/// The product: a store of photos, photographers, places, regions, Recents and Favorites,
/// filled by a Flickr sync and read through plain fetches or results controllers.
public final class Gallery: Sendable {
    /// The store beneath. Not public: what the gallery holds is read and changed through
    /// the gallery's own methods, which keep its counts and lists consistent.
    let store: Store
    /// The store file's path, or nil in memory.
    public var path: String? { store.path }
    /// Opened as a snapshot of the file (read-only, where WAL's shared memory cannot be
    /// made): it sees no commit made after it opened.
    public var isSnapshot: Bool { store.isSnapshot }
    /// Opened read-only: writes throw.
    public var isReadOnly: Bool { store.configuration.access == .readOnly }

    /// Opens (or creates) the store at `path`.
    public init(path: String, configuration: StoreConfiguration = StoreConfiguration()) throws {
        store = try Store(path: path, schema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator, configuration: configuration)
    }

    /// How a SQLite gallery notices other processes' commits: inotify where the file system
    /// shows every writer, else polling; `TOPREGIONS_OBSERVATION=polling` polls always (for
    /// a shared file system the mount table does not name as one).
    public static var observationMethod: ObservationMethod {
        ProcessInfo.processInfo.environment["TOPREGIONS_OBSERVATION"] == "polling" ? .polling : .automatic
    }

    /// What a caller does with a gallery it opens.
    public enum Use: Sendable {
        /// Reads only: an existing store, opened read-only when it cannot be written.
        case read
        /// Writes an existing store.
        case write
        /// Writes, creating the store (and its directory) when missing.
        case create
    }

    /// Opens the gallery at `path` for `use`. Reading or writing never creates a store: a
    /// missing one is `noStore`; one that cannot be opened is `storeUnavailable`, its
    /// message naming the cause and the path.
    ///
    /// `busyTimeout` is how long a write waits for another process's (default: the store's
    /// 60 seconds).
    public static func open(path: String, for use: Use, busyTimeout: TimeInterval? = nil) throws -> Gallery {
        // Checked before anything touches the file system: such a "path" would otherwise
        // become a directory named `postgresql:`.
        try refusePostgres(path, cannot: "open", hint: "give a SQLite file path")
        var configuration = StoreConfiguration()
        configuration.access = use == .create ? .readWriteCreate : .readWrite
        if let busyTimeout { configuration.busyTimeout = busyTimeout }
        configuration.observationMethod = observationMethod
        do {
            do {
                return try Gallery(path: path, configuration: configuration)
            } catch let error as StoreError where error.kind == .cannotOpen && use == .read {
                configuration.access = .readOnly
                return try Gallery(path: path, configuration: configuration)
            }
        } catch let error as StoreError where error.isBusy {
            // Another process holds the file locked (an exclusive transaction or locking mode).
            throw GalleryError(.busy(pid: nil), "the store at \(Self.absolute(path)) is busy: another process has held it locked "
                               + "for longer than this command waits; try again")
        } catch let error as StoreError {
            switch error.kind {
            case .notFound:
                throw GalleryError(.noStore, "no store at \(Self.absolute(path))", hint: "run `topregions sync` first")
            case .cannotOpen, .readOnly, .notADatabase, .corrupt, .newerSchema, .migrationNeeded:
                throw GalleryError(.storeUnavailable, error.message)
            default:
                throw GalleryError(.storeUnavailable, "the store at \(Self.absolute(path)) cannot be opened: \(error.message)")
            }
        }
    }

    /// Refuses a PostgreSQL URL where a SQLite file is needed (`cannot`: open, write),
    /// naming it without its password.
    static func refusePostgres(_ location: String, cannot verb: String, hint: String) throws {
        guard PostgresLocation.isURL(location) else { return }
        throw GalleryError(.storeUnavailable, "\(PostgresLocation.redacted(location)) is a PostgreSQL store, which this call cannot \(verb): it takes a SQLite file",
                           hint: "\(hint), or open the database with PostgresGallery (Gallery.openForReading, openForWriting, openForObserving)")
    }

    /// A path as a person can find it again from anywhere.
    public static func absolute(_ path: String) -> String {
        let joined = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        // The directory as the kernel resolves it (`..` after a link or a missing directory
        // means what it means to open(2)); kept as written when it does not exist.
        let url = URL(fileURLWithPath: joined)
        guard !["..", "."].contains(url.lastPathComponent), let resolved = realpath(url.deletingLastPathComponent().path, nil) else { return joined }
        defer { free(resolved) }
        let directory = String(cString: resolved)
        return (directory == "/" ? "" : directory) + "/" + url.lastPathComponent
    }

    /// A gallery in memory, for tests.
    public init(inMemory: Void = ()) throws {
        store = try Store(inMemorySchema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator)
    }

    /// Closes the gallery's store: later calls throw.
    public func close() { store.close() }

    /// A write waiting for another process's lock gives up now, and later ones at once
    /// (`Store.interruptWaits`): for a daemon or a server that is stopping.
    public func interruptWaits() { store.interruptWaits() }

    /// How long a write waits for another process's lock before it fails as busy.
    public var busyTimeout: TimeInterval { store.configuration.busyTimeout }
}
