import CSQLite
import Foundation

/// Checks and creates the store's file before SQLite touches it, so that a file which is
/// not a store is refused without being changed.
enum StoreFile {
    static let header = Array("SQLite format 3\0".utf8)

    /// Creates an empty file with mode 0600 when none exists. Throws `notADatabase` when
    /// the path holds something that is not a SQLite database.
    static func prepare(at path: String) throws {
        var status = stat()
        if stat(path, &status) != 0 {
            guard errno == ENOENT else {
                throw StoreError(.sqlite, "Cannot read the store at \(path): \(String(cString: strerror(errno)))",
                                 resultCode: .cantOpen)
            }
            try create(at: path)
            return
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw StoreError(.notADatabase, "The store path \(path) is not a regular file")
        }
        guard status.st_size > 0 else { return }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StoreError(.sqlite, "Cannot read the store at \(path)", resultCode: .cantOpen)
        }
        defer { try? handle.close() }
        let prefix = [UInt8]((try? handle.read(upToCount: header.count)) ?? Data())
        guard prefix == header, status.st_size >= 512 else {
            throw StoreError(.notADatabase, "The file at \(path) is not a SQLite database (its header is not SQLite's); it was left untouched",
                             resultCode: .notADatabase)
        }
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
            throw StoreError(.sqlite, "Cannot create the store at \(path): \(String(cString: strerror(errno)))",
                             resultCode: .cantOpen)
        }
        // The umask may have removed bits; make the mode exactly 0600.
        fchmod(descriptor, 0o600)
        close(descriptor)
    }
}
