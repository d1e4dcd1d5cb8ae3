import Foundation
import Store

/// A lock one process at a time may hold: an exclusive `flock` on a file whose content is
/// the holder's pid. Released by `release()`, or by the kernel when the process dies.
public final class ProcessLock: Sendable {
    /// Another process holds the lock.
    public struct Busy: Error, Sendable, CustomStringConvertible {
        /// The holder's pid, as its lock file says; nil when the file did not say.
        public var pid: Int32?
        /// What the holder is doing ("sync", "daemon"), for the message.
        public var holder: String

        /// A busy error with these values.
        public init(pid: Int32?, holder: String) {
            self.pid = pid
            self.holder = holder
        }

        /// Names the holder and its pid: "another sync is running (pid 123)".
        public var description: String {
            "another \(holder) is running" + (pid.map { " (pid \($0))" } ?? "")
        }
    }

    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// A lock that guards nothing (for an in-memory store, which no other process can see).
    static let unshared = ProcessLock(descriptor: -1)

    /// A lock file that cannot be used: what is wrong, and the path.
    public struct FileError: Error, Sendable, CustomStringConvertible {
        /// The lock file's path.
        public var path: String
        /// What is wrong with it, in words.
        public var reason: String
        /// The path and the reason.
        public var description: String { "cannot use the lock file \(path): \(reason)" }
    }

    /// Takes the lock at `path`; waits for it, or throws `Busy` at once.
    ///
    /// The file is opened without following a symbolic link, and only a regular file of
    /// this user's with one link and a pid's length is written to, so that a link planted
    /// beside a store in a shared directory cannot make us overwrite another file.
    public static func acquire(path: String, holder: String, wait: Bool) throws -> ProcessLock {
        let descriptor = try openLockFile(path)
        while flock(descriptor, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0 {
            if errno == EINTR { continue }
            let pid = pid(in: descriptor)
            close(descriptor)
            throw Busy(pid: pid, holder: holder)
        }
        let pid = "\(getpid())\n"
        _ = pid.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        ftruncate(descriptor, off_t(pid.utf8.count))
        return ProcessLock(descriptor: descriptor)
    }

    /// Longest content a lock file of ours has (a pid and a newline).
    static let maximumLockFileSize = 32

    private static func openLockFile(_ path: String) throws -> Int32 {
        let flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW
        var descriptor = open(path, flags | O_CREAT | O_EXCL, 0o600)
        if descriptor < 0 && errno == EEXIST { descriptor = open(path, flags) }
        guard descriptor >= 0 else {
            let reason = errno == ELOOP ? "it is a symbolic link" : String(cString: strerror(errno))
            throw FileError(path: path, reason: reason)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw FileError(path: path, reason: reason)
        }
        let problem: String?
        if info.st_mode & S_IFMT != S_IFREG {
            problem = "it is not a regular file"
        } else if info.st_uid != geteuid() {
            problem = "it belongs to another user (uid \(info.st_uid))"
        } else if info.st_nlink > 1 {
            problem = "it has \(info.st_nlink) hard links, so it may be another file too"
        } else if info.st_size > maximumLockFileSize {
            problem = "it holds \(info.st_size) bytes, more than a lock file's pid"
        } else {
            problem = nil
        }
        if let problem {
            close(descriptor)
            throw FileError(path: path, reason: problem + "; remove it if it is a stale lock")
        }
        return descriptor
    }

    /// The pid of the process holding the lock at `path`, or nil when nobody holds it.
    public static func holderPID(path: String) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
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

    /// Gives the lock up and closes its file; call it once.
    public func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

/// One sync at a time across processes: the process lock `<store>.sync-lock`.
public enum SyncLock {
    /// Another process runs a sync on the store.
    public typealias Busy = ProcessLock.Busy

    /// Takes the sync lock of `store` at once, or throws `Busy`.
    public static func acquire(for store: Store) throws -> ProcessLock {
        guard let path = store.path else { return .unshared }
        return try ProcessLock.acquire(path: path + ".sync-lock", holder: "sync", wait: false)
    }

    /// The pid of the process running a sync on `store`, or nil.
    public static func holder(of store: Store) -> Int32? {
        store.path.flatMap { ProcessLock.holderPID(path: $0 + ".sync-lock") }
    }
}
