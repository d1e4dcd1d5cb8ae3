import Flickr
import Foundation
import Store

/// A gallery a sync pass can fill: the SQLite `Gallery`, or a PostgreSQL store's
/// (`PostgresGallery`). The pass is written once (`sync`, an extension of this protocol);
/// what differs is the sync lock (a lock file beside a SQLite file, an advisory lock in a
/// PostgreSQL database) and bulk loads (SQLite's alone).
public protocol GallerySyncing: GalleryWriting {
    /// Takes the gallery's sync lock at once, held until `release()`, or throws
    /// `SyncLock.Busy` when another pass (in any process, on any host) holds it (the
    /// store's own errors when it cannot be reached).
    func tryAcquireSyncLock() throws -> any SyncLockHold

    /// Drops Photo's indexes for a bulk load, if the store does bulk loads; returns whether
    /// it did (`buildDeferredIndexes` builds them again).
    func deferPhotoIndexes() async throws -> Bool

    /// Builds the indexes a bulk load dropped (one that died left them noted).
    func buildDeferredIndexes() async throws

    /// Whether several daemons may keep this gallery fresh at once (a database many hosts
    /// share: each takes a pass when no other is running one, and skips it otherwise), or
    /// only one (a file: one daemon per store, `holdDaemonLock`).
    var takesManyDaemons: Bool { get }

    /// Takes the lock that keeps a second daemon off the gallery, held until `release()`;
    /// throws `busy` when another daemon runs. A gallery that takes many daemons holds none.
    func holdDaemonLock() throws -> any SyncLockHold

    /// Makes a write that waits for another process's lock give up now (for a process that
    /// is stopping).
    func interruptWaits()
}

extension GallerySyncing {
    /// Takes the gallery's sync lock (`tryAcquireSyncLock`); with `wait`, tries again every
    /// `pollInterval` until it is free, telling `waiting` the holder each time, else throws
    /// `SyncLock.Busy` at once. The wait ends with `CancellationError` as soon as the task
    /// is cancelled: no thread is blocked waiting.
    public func acquireSyncLock(wait: Bool, pollInterval: TimeInterval = 0.2,
                                waiting: (@Sendable (SyncLock.Busy) -> Void)? = nil) async throws -> any SyncLockHold {
        while true {
            do {
                return try tryAcquireSyncLock()
            } catch let busy as SyncLock.Busy where wait {
                waiting?(busy)
                // Polled: the lock may be held by a process on another host (an advisory
                // lock), whose release sends no event this process could wait on.
                try await Task.sleep(nanoseconds: UInt64(pollInterval * 1_000_000_000))
            }
        }
    }
}

/// A held sync lock.
public protocol SyncLockHold: Sendable {
    /// Throws when the lock is no longer held (a database lock goes with its connection:
    /// a restart or a terminated session ends it), so that a pass stops writing rather
    /// than run beside the one that took it next.
    func confirm() throws
    /// Releases the lock (a process that ends releases it too).
    func release()
}

extension ProcessLock: SyncLockHold {
    /// A lock file's lock lasts as long as the process holds its descriptor.
    public func confirm() {}
}

extension Gallery: GallerySyncing {
    public var takesManyDaemons: Bool { false }

    public func holdDaemonLock() throws -> any SyncLockHold {
        let lock: ProcessLock = try holdDaemonLock()
        return lock
    }

    public func tryAcquireSyncLock() throws -> any SyncLockHold {
        try SyncLock.acquire(for: store)
    }

    public func deferPhotoIndexes() async throws -> Bool {
        try await !store.deferIndexes(of: TopRegionsSchema.photo).isEmpty
    }

    public func buildDeferredIndexes() async throws {
        _ = try await store.buildDeferredIndexes()
    }
}

extension GalleryWriting {
    /// The gallery's ledger of API calls (table `APICall`), shared by every process that
    /// syncs it.
    public var callLedger: CallLedger { StoreCallLedger(store: writableStore) }
}
