import Foundation

/// Where a copy keeps what it builds on the way, and the clearing of what a killed copy
/// left. A copy holds an exclusive `flock` on a lock file of its own while it runs; what
/// another copy finds unlocked (and not just made) belongs to a copy that is gone, in this
/// process namespace or another, on this host or another sharing the directory.
enum CopyScratch {
    /// What a copy builds beside its destination: `<prefix><uuid>.sqlite` and its lock.
    static let buildingPrefix = ".topregions-copy-"
    /// A scratch directory in `TMPDIR`, its lock file inside.
    static let directoryPrefix = "topregions-copy-"
    /// Younger leftovers are left alone: a copy may be between creating its lock and taking it.
    static let leftoverAge: TimeInterval = 10

    /// A lock held for as long as a copy runs.
    final class Lock {
        let path: String
        private let descriptor: Int32

        init(creating path: String) throws {
            descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                throw GalleryError(.storeUnavailable, "cannot make \(path) for the copy: \(String(cString: strerror(errno)))")
            }
            self.path = path
        }

        /// Deletes the lock file, then lets the lock go.
        func release() {
            try? FileManager.default.removeItem(atPath: path)
            close(descriptor)
        }
    }

    /// Runs `body` with the path of a store to build beside `destination` (locked while it
    /// runs); deletes what is left of it after.
    static func withBuilding<T>(beside destination: String, _ body: (String) throws -> T) throws -> T {
        let directory = URL(fileURLWithPath: Gallery.absolute(destination)).deletingLastPathComponent().path
        removeLeftovers(in: directory)
        let base = directory + "/" + buildingPrefix + UUID().uuidString
        let lock: Lock
        do { lock = try Lock(creating: base + ".lock") } catch let error as GalleryError {
            throw GalleryError(.storeUnavailable, "cannot copy the store to \(Gallery.absolute(destination)): cannot write in \(directory): "
                               + (error.message.components(separatedBy: ": ").last ?? error.message))
        }
        defer {
            removeStore(base + ".sqlite")
            lock.release()
        }
        return try body(base + ".sqlite")
    }

    /// Runs `body` with a new scratch directory of this user's only, deleted after.
    static func withDirectory<T>(_ body: (String) throws -> T) throws -> T {
        let temporary = NSTemporaryDirectory()
        var template = Array((temporary + "/" + directoryPrefix + "XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw GalleryError(.storeUnavailable, "cannot make a scratch directory for the copy in \(temporary): \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        let lock = try Lock(creating: directory + "/lock")
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            lock.release()
        }
        return try body(directory)
    }

    /// Deletes a store file and SQLite's files beside it.
    static func removeStore(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Deletes what copies that are gone left in `directory` (beside a destination) and in
    /// `TMPDIR`: they hold a gallery's users and lists.
    static func removeLeftovers(in directory: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(buildingPrefix) && name.hasSuffix(".lock") {
            let base = directory + "/" + name.dropLast(".lock".count)
            if isAbandoned(lock: directory + "/" + name) {
                removeStore(base + ".sqlite")
                try? FileManager.default.removeItem(atPath: directory + "/" + name)
            }
        }
        let temporary = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where name.hasPrefix(directoryPrefix) {
            let scratch = temporary + "/" + name
            if isAbandoned(lock: scratch + "/lock") { try? FileManager.default.removeItem(atPath: scratch) }
        }
    }

    /// Whether the lock file at `path` is old enough and nobody holds it.
    private static func isAbandoned(lock path: String) -> Bool {
        guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
              Date().timeIntervalSince(modified) > leftoverAge else { return false }
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }
}
