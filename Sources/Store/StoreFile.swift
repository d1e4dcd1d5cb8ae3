import CSQLite
import Foundation

/// Checks and creates the store's file before SQLite touches it, so that a file which is
/// not a store is refused without being changed.
enum StoreFile {
    static let header = Array("SQLite format 3\0".utf8)

    /// Creates an empty file with mode 0600 when none exists and `create` is set (else
    /// throws `notFound`). Throws `notADatabase` when the path holds something that is not
    /// a SQLite database.
    static func prepare(at path: String, create: Bool = true) throws {
        var status = stat()
        if stat(path, &status) != 0 {
            guard errno == ENOENT else { throw cannotOpen(path, "cannot read the store", errno: errno) }
            guard create else { throw StoreError(.notFound, "There is no store at \(path)") }
            try self.create(at: path)
            return
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw StoreError(.notADatabase, "The store path \(path) is not a regular file")
        }
        guard status.st_size > 0 else { return }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw cannotOpen(path, "cannot read the store", errno: access(path, R_OK) == 0 ? EIO : errno)
        }
        defer { try? handle.close() }
        let prefix = [UInt8]((try? handle.read(upToCount: header.count)) ?? Data())
        guard prefix == header, status.st_size >= 512 else {
            throw StoreError(.notADatabase, "The file at \(path) is not a SQLite database (its header is not SQLite's); it was left untouched",
                             resultCode: .notADatabase)
        }
    }

    /// `cannotOpen`, naming the cause in words and the path.
    static func cannotOpen(_ path: String, _ what: String, errno code: Int32) -> StoreError {
        StoreError(.cannotOpen, "\(what.prefix(1).uppercased() + what.dropFirst()) at \(path): \(cause(errno: code))", resultCode: .cantOpen)
    }

    /// The cause of a failed open in words a person knows.
    static func cause(errno code: Int32) -> String {
        switch code {
        case EACCES, EPERM: return "permission denied"
        case EROFS: return "read-only file system"
        case ENOENT: return "no such file or directory"
        case ENOTDIR: return "a part of the path is not a directory"
        case ENOSPC: return "no space left on the device"
        default: return String(cString: strerror(code))
        }
    }

    /// Whether the file system holding `path` is mounted read-only.
    static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && (info.f_flag & UInt(ST_RDONLY)) != 0
    }

    /// Why `path` cannot be written, in words, or nil when it can.
    static func writeObstacle(_ path: String) -> String? {
        if isOnReadOnlyFileSystem(path) { return cause(errno: EROFS) }
        let directory = (path as NSString).deletingLastPathComponent
        if access(path, W_OK) != 0 { return cause(errno: errno) }
        if access(directory.isEmpty ? "." : directory, W_OK) != 0 { return "\(cause(errno: errno)) (its directory)" }
        return nil
    }

    private static func create(at path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
        }
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            if errno == EEXIST { return }  // another process created it first
            throw cannotOpen(path, "cannot create the store", errno: errno)
        }
        // The umask may have removed bits; make the mode exactly 0600.
        fchmod(descriptor, 0o600)
        close(descriptor)
    }
}
