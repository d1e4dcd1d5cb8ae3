import Foundation
import Store

/// One sync at a time across processes: an exclusive `flock` on `<store>.sync-lock`, whose
/// content is the holder's pid. Released when the pass ends or its process dies.
public final class SyncLock: Sendable {
    /// Another process holds the lock.
    public struct Busy: Error, Sendable, CustomStringConvertible {
        public var pid: Int32?
        public init(pid: Int32?) { self.pid = pid }
        public var description: String {
            "another sync is running" + (pid.map { " (pid \($0))" } ?? "")
        }
    }

    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Takes the lock for `store`; waits for it, or throws `Busy` at once.
    public static func acquire(for store: Store, wait: Bool) throws -> SyncLock {
        guard let path = store.path else { return SyncLock(descriptor: -1) }
        let lockPath = path + ".sync-lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreError(.sqlite, "Cannot open the sync lock \(lockPath): \(String(cString: strerror(errno)))")
        }
        while flock(descriptor, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0 {
            if errno == EINTR { continue }
            let holder = holderPID(descriptor)
            close(descriptor)
            throw Busy(pid: holder)
        }
        let pid = "\(getpid())\n"
        ftruncate(descriptor, 0)
        _ = pid.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        return SyncLock(descriptor: descriptor)
    }

    /// The pid written in the lock file by the process holding it.
    public static func holder(of store: Store) -> Int32? {
        guard let path = store.path else { return nil }
        let descriptor = open(path + ".sync-lock", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // Held only if a non-blocking shared lock fails.
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return nil
        }
        return holderPID(descriptor)
    }

    private static func holderPID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(descriptor, &buffer, 31, 0)
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    public func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
