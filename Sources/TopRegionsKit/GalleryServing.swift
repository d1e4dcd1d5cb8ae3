import Foundation
import PostgreSQL

/// A gallery the HTTP API serves: read, written, followed and synced; the SQLite `Gallery`
/// or a PostgreSQL store's (`PostgresGallery`).
public protocol GalleryServing: GallerySyncing, GalleryObserving {
    /// What the store holds, its last sync and rate limit.
    func status(now: Date) throws -> GalleryStatus
    /// How long a write waits for another process's lock before it gives up as busy.
    var busyTimeout: TimeInterval { get }
    /// The store's name as the API shows it: a file's name, a database's name.
    var publicStoreName: String { get }
}

extension Gallery: GalleryServing {
    public var publicStoreName: String { path.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "memory" }
}

extension PostgresGallery: GalleryServing {
    /// Read in one snapshot, on a connection of the gallery's pool.
    public func status(now: Date) throws -> GalleryStatus {
        var status = try read { context in
            // A pass on any host holds the sync lock (pg_locks is the present, not the snapshot's).
            let holder = try context.rows(PostgresConnection.advisoryLockHolderQuery, [.integer(PostgresSyncLock.key)])
            return try Gallery.status(now: now, syncRunning: !holder.isEmpty, daemons: try PostgresDaemonPresence.running(in: context)) {
                try context.rows($0).map(\.values)
            }
        }
        status.observation = "LISTEN/NOTIFY"
        return status
    }

    /// The database's name (the URL's path), never its host or user.
    public var publicStoreName: String {
        URLComponents(string: location)?.path.split(separator: "/").last.map(String.init) ?? "postgresql"
    }
}
