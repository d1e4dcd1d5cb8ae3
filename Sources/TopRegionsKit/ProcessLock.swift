import Foundation
import Store

/// A lock one process at a time may hold: an exclusive `flock` on a file whose content is
/// the holder's pid. Released by `release()`, or by the kernel when the process dies.
public final class ProcessLock: Sendable {
    /// Another process holds the lock.
    public struct Busy: Error, Sendable, CustomStringConvertible {
        public var pid: Int32?
        /// What the holder is doing ("sync", "daemon"), for the message.
        public var holder: String

        public init(pid: Int32?, holder: String) {
            self.pid = pid
            self.holder = holder
        }

        public var description: String {
            "another \(holder) is running" + (pid.map { " (pid \($0))" } ?? "")
        }
    }

    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// A lock that guards nothing (for an in-memory store, which no other process can see).
    static let unshared = ProcessLock(descriptor: -1)

    /// Takes the lock at `path`; waits for it, or throws `Busy` at once.
    public static func acquire(path: String, holder: String, wait: Bool) throws -> ProcessLock {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreError(.sqlite, "Cannot open the lock \(path): \(String(cString: strerror(errno)))")
        }
        while flock(descriptor, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0 {
            if errno == EINTR { continue }
            let pid = pid(in: descriptor)
            close(descriptor)
            throw Busy(pid: pid, holder: holder)
        }
        let pid = "\(getpid())\n"
        ftruncate(descriptor, 0)
        _ = pid.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        return ProcessLock(descriptor: descriptor)
    }

    /// The pid of the process holding the lock at `path`, or nil when nobody holds it.
    public static func holderPID(path: String) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // Held only if a non-blocking shared lock fails.
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return nil
        }
        return pid(in: descriptor)
    }

    private static func pid(in descriptor: Int32) -> Int32? {
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

/// One sync at a time across processes: the process lock `<store>.sync-lock`.
public enum SyncLock {
    public typealias Busy = ProcessLock.Busy

    /// Takes the sync lock of `store`; waits for it, or throws `Busy` at once.
    public static func acquire(for store: Store, wait: Bool) throws -> ProcessLock {
        guard let path = store.path else { return .unshared }
        return try ProcessLock.acquire(path: path + ".sync-lock", holder: "sync", wait: wait)
    }

    /// The pid of the process running a sync on `store`, or nil.
    public static func holder(of store: Store) -> Int32? {
        store.path.flatMap { ProcessLock.holderPID(path: $0 + ".sync-lock") }
    }
}
