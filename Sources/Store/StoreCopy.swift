import CSQLite
import Foundation

extension Store {
    /// Writes a copy of the whole store to `destination`, a file that must not exist yet:
    /// what was committed when the copy began, whatever other processes commit meanwhile
    /// (SQLite's `VACUUM INTO`, on a connection of its own, so that neither this store's
    /// writer nor another process's is held up). The copy is a store like this one; it is
    /// switched to WAL when it is first opened.
    public func copy(to destination: String) throws {
        guard let path else { throw StoreError(.invalidRequest, "A store in memory has no file to copy") }
        try Self.copy(storeAt: path, to: destination, busyTimeout: configuration.busyTimeout)
    }

    /// Writes a copy of the store file at `path` to `destination` as `copy(to:)` does,
    /// without opening it as a store: the source is read only, never migrated (a store of
    /// an older version stays usable by that version; the copy is migrated when it is
    /// first opened for writing).
    public static func copy(storeAt path: String, to destination: String, busyTimeout: TimeInterval = StoreConfiguration().busyTimeout) throws {
        guard FileManager.default.fileExists(atPath: path) else { throw StoreError(.notFound, "no store at \(path)") }
        try refuseCopyDestination(destination)
        let connection = try StoreOpening.connect(path, flags: SQLITE_OPEN_READONLY, displayPath: path)
        defer { connection.close() }
        connection.setBusyTimeout(milliseconds: Int32(clamping: Int(busyTimeout * 1000)))
        try StoreOpening.verifyReadable(connection, path: path)
        try StoreOpening.refuseForeignDatabase(connection, path: path, create: false)
        try createCopyFile(destination)
        do {
            try connection.run("VACUUM INTO ?", [.text(destination)])
        } catch let error as StoreError {
            // A copy cut short (a full disk) is not left behind as if it were a store.
            try? FileManager.default.removeItem(atPath: destination)
            throw StoreError(.cannotOpen, "Cannot copy the store to \(destination): \(error.message)", resultCode: error.resultCode)
        }
    }

    /// Throws `cannotOpen` unless `destination` is a fit name for a new store file: nothing
    /// there (not even a symbolic link or a directory), not named like SQLite's own files
    /// beside a store, none of those left there, in a directory that exists.
    public static func refuseCopyDestination(_ destination: String) throws {
        var status = stat()
        if lstat(destination, &status) == 0 {
            let what = (status.st_mode & S_IFMT) == S_IFDIR ? "a directory" : (status.st_mode & S_IFMT) == S_IFLNK ? "a symbolic link" : "a file"
            throw StoreError(.cannotOpen, "Cannot copy the store to \(destination): \(what) is there already; a copy overwrites nothing")
        }
        // SQLite's companions of a store file: a copy named like one would be deleted or
        // misread when that store is opened; one whose own companions exist would open with
        // another database's journal.
        if let suffix = ["-wal", "-shm", "-journal"].first(where: { destination.hasSuffix($0) }) {
            throw StoreError(.cannotOpen, "Cannot copy the store to \(destination): a name ending in \(suffix) is SQLite's own file beside a store; choose another")
        }
        if let companion = ["-wal", "-shm", "-journal"].map({ destination + $0 }).first(where: { lstat($0, &status) == 0 }) {
            throw StoreError(.cannotOpen, "Cannot copy the store to \(destination): \(companion) is there already, left by another database")
        }
        let directory = URL(fileURLWithPath: destination).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw StoreError(.cannotOpen, "Cannot copy the store to \(destination): there is no directory \(directory)")
        }
    }

    /// Creates the copy's file, empty (which `VACUUM INTO` fills) and readable by this user
    /// only, as a store is: it holds users' lists and token hashes. Never through a
    /// symbolic link, dangling or not, and never over a file that appeared meanwhile.
    private static func createCopyFile(_ destination: String) throws {
        let descriptor = open(destination, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = errno == EEXIST ? "a file or a symbolic link is there already; a copy overwrites nothing"
                : String(cString: strerror(errno))
            throw StoreError(.cannotOpen, "Cannot copy the store to \(destination): \(reason)")
        }
        fchmod(descriptor, 0o600)
        Glibc.close(descriptor)
    }
}
