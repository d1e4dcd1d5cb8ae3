import Foundation
import TopRegionsKit

/// Runs sync passes for the server: on request (`POST /api/sync`), and every interval when
/// `serve --sync-interval` is given. One pass at a time, in this process and across
/// processes (the gallery's sync lock).
///
/// `@unchecked Sendable`: `running` is guarded by `lock`.
public final class SyncRunner: @unchecked Sendable {
    private let gallery: any GalleryServing
    private let pass: @Sendable (any GalleryServing, any SyncLockHold) async -> Void
    private let lock = NSLock()
    private var running: Task<Void, Never>?
    private var stopped = false

    /// `pass` runs one pass on the gallery, holding the sync lock it is given (and
    /// releasing it), and reports it (the server's log).
    public init(gallery: any GalleryServing, pass: @escaping @Sendable (any GalleryServing, any SyncLockHold) async -> Void) {
        self.gallery = gallery
        self.pass = pass
    }

    /// What `start` did.
    public enum Start: Sendable, Equatable {
        case started
        /// A pass runs already, in the process with this pid (nil: not known).
        case running(pid: Int32?)
        /// The runner was stopped: the server is shutting down.
        case stopped
        /// The store could not be reached to take the sync lock.
        case unavailable
    }

    /// Starts a pass unless one is running here or in another process.
    @discardableResult
    public func start() -> Start {
        lock.withLock {
            if stopped { return .stopped }
            if running != nil { return .running(pid: getpid()) }
            // Taken here, before answering: of two servers asked at once, one starts the
            // pass and the other says one runs.
            let syncLock: any SyncLockHold
            do {
                syncLock = try gallery.tryAcquireSyncLock()
            } catch let busy as SyncLock.Busy {
                return .running(pid: busy.pid)
            } catch {
                return .unavailable
            }
            running = Task { [self] in
                await pass(gallery, syncLock)
                lock.withLock { running = nil }
            }
            return .started
        }
    }

    /// Whether this process runs a pass now.
    public var isRunning: Bool { lock.withLock { running != nil } }

    /// Starts no more passes and cancels the one in progress, if any, without waiting.
    public func cancel() {
        let task = lock.withLock {
            stopped = true
            return running
        }
        task?.cancel()
    }

    /// Cancels the pass in progress, if any, and waits for it to end.
    public func stop() async {
        cancel()
        let task = lock.withLock { running }
        await task?.value
    }
}
