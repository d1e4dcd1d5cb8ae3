import Foundation
import PostgreSQL
import PostgresStore
import Store

extension Gallery {
    /// Copies a whole gallery between any two stores, each a SQLite file path or a
    /// PostgreSQL URL. The destination must be new: a file that does not exist, or a
    /// database with no gallery. A failed copy leaves nothing at the destination.
    public static func copyStore(from source: String, to destination: String, busyTimeout: TimeInterval? = nil) throws {
        switch (PostgresLocation.isURL(source), PostgresLocation.isURL(destination)) {
        case (false, false):
            try copy(storeAt: source, to: destination, busyTimeout: busyTimeout)
        case (false, true):
            // Connected first: an unreachable database fails before the source is read.
            try withPostgresStore(destination, lockTimeout: busyTimeout) { store in
                try withCurrentStore(at: source, busyTimeout: busyTimeout) { gallery in _ = try store.copy(from: gallery.store) }
            }
        case (true, false):
            try copyPostgres(source, toFile: destination, busyTimeout: busyTimeout)
        case (true, true):
            try CopyScratch.withDirectory { directory in
                try copyPostgres(source, toFile: directory + "/gallery.sqlite", busyTimeout: busyTimeout)
                try copyStore(from: directory + "/gallery.sqlite", to: destination, busyTimeout: busyTimeout)
            }
        }
    }

    /// Runs `body` on the SQLite store at `source`, opened read-only (it reads one snapshot
    /// in one read transaction, whatever others write meanwhile). A store of an older
    /// version is read from a copy brought to this version: the store itself is only read.
    private static func withCurrentStore(at source: String, busyTimeout: TimeInterval?, _ body: (Gallery) throws -> Void) throws {
        var configuration = StoreConfiguration()
        configuration.access = .readOnly
        if let busyTimeout { configuration.busyTimeout = busyTimeout }
        let gallery: Gallery
        do {
            gallery = try Gallery(path: source, configuration: configuration)
        } catch let error as StoreError where error.kind == .migrationNeeded {
            return try withMigratedCopy(of: source, busyTimeout: busyTimeout, body)
        } catch let error as StoreError where error.kind == .notFound {
            throw GalleryError(.noStore, "no store at \(absolute(source))", hint: "run `topregions sync` first")
        } catch let error as StoreError {
            throw GalleryError(.storeUnavailable, error.message)
        }
        defer { gallery.close() }
        try body(gallery)
    }

    /// Runs `body` on a copy of the SQLite store at `source` brought to this version, made
    /// in a scratch directory (`TMPDIR`) and deleted after.
    private static func withMigratedCopy(of source: String, busyTimeout: TimeInterval?, _ body: (Gallery) throws -> Void) throws {
        try CopyScratch.withDirectory { directory in
            let copy = directory + "/gallery.sqlite"
            do {
                try Self.copy(storeAt: source, to: copy, busyTimeout: busyTimeout)
            } catch let error as GalleryError where error.kind == .storeUnavailable {
                throw GalleryError(.storeUnavailable, "cannot bring \(absolute(source)) to this version in a copy in \(directory) "
                                   + "(set TMPDIR to a directory with room): \(error.message)")
            }
            let gallery = try open(path: copy, for: .write)
            defer { gallery.close() }
            try body(gallery)
        }
    }

    /// Writes the PostgreSQL store at `location` into a new SQLite store at `destination`:
    /// built beside it under a temporary name and linked into place only when whole, so a
    /// file that appeared meanwhile is never overwritten and a failed copy leaves nothing.
    private static func copyPostgres(_ location: String, toFile destination: String, busyTimeout: TimeInterval?) throws {
        do { try Store.refuseCopyDestination(destination) } catch let error as StoreError {
            throw GalleryError(.storeUnavailable, error.message)
        }
        let directory = URL(fileURLWithPath: absolute(destination)).deletingLastPathComponent().path
        CopyScratch.removeLeftovers(in: directory, prefix: CopyScratch.buildingPrefix)
        let building = directory + "/" + CopyScratch.buildingPrefix + "\(getpid())-\(UUID().uuidString).sqlite"
        defer { CopyScratch.removeStore(building) }
        do {
            let gallery = try open(path: building, for: .create)
            defer { gallery.close() }
            try withPostgresStore(location, lockTimeout: busyTimeout) { _ = try $0.copy(into: gallery.store) }
        } catch let error as GalleryError where error.kind == .storeUnavailable && !error.message.contains(PostgresLocation.redacted(location)) {
            // SQLite's words (a full disk) name no file: the copy's is the one asked for.
            throw GalleryError(.storeUnavailable, "cannot copy the store to \(absolute(destination)): \(error.message)")
        }
        // Closing the last connection folds SQLite's journal into the file; linked alone, a
        // file whose journal still held commits would be a copy without them.
        if let size = (try? FileManager.default.attributesOfItem(atPath: building + "-wal"))?[.size] as? NSNumber, size.intValue > 0 {
            throw GalleryError(.storeUnavailable, "cannot copy the store to \(absolute(destination)): the copy's journal was not folded into it")
        }
        guard link(building, destination) == 0 else {
            let reason = errno == EEXIST ? "a file is there already; a copy overwrites nothing" : String(cString: strerror(errno))
            throw GalleryError(.storeUnavailable, "cannot copy the store to \(absolute(destination)): \(reason)")
        }
    }
}

/// Where a copy keeps what it builds on the way, and the clearing of what a killed copy
/// left: each name holds its process's id, and only those of processes gone are removed.
enum CopyScratch {
    /// A copy out of PostgreSQL built beside its destination.
    static let buildingPrefix = ".topregions-copy-"
    /// A scratch directory in `TMPDIR`.
    static let directoryPrefix = "topregions-copy-"

    /// Runs `body` with a new scratch directory of this user's only, deleted after.
    static func withDirectory<T>(_ body: (String) throws -> T) throws -> T {
        let temporary = NSTemporaryDirectory()
        removeLeftovers(in: temporary, prefix: directoryPrefix)
        var template = Array((temporary + "/" + directoryPrefix + "\(getpid())-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw GalleryError(.storeUnavailable, "cannot make a scratch directory for the copy in \(temporary): \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        return try body(directory)
    }

    /// Deletes a store file and SQLite's files beside it.
    static func removeStore(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Deletes the entries of `directory` named `prefix` + a process id + "-" whose process
    /// is gone (killed during a copy): they hold a gallery's users and lists.
    static func removeLeftovers(in directory: String, prefix: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let pid = Int32(rest.prefix { $0.isASCII && $0.isNumber }), rest.dropFirst(String(pid).count).first == "-",
                  kill(pid, 0) != 0 && errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
    }
}
