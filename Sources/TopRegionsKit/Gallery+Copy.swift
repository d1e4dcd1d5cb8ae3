import Foundation
import PostgreSQL
import PostgresStore
import Store

/// What a copy holds, as it reports it: checked (as `check` does) before it was put in place.
public struct CopyOutcome: Sendable, Equatable {
    /// `check`'s problems with the copy (the source's own, copied with it); empty when sound.
    public var problems: [String]
    /// Photos copied.
    public var photos: Int64
    /// Regions with photos.
    public var regions: Int64
}

extension Gallery {
    /// Copies a whole gallery between any two stores, each a SQLite file path or a
    /// PostgreSQL URL, and checks the copy. The destination must be new: a file that does
    /// not exist, or a database with no gallery. A copy to a file is built, brought to this
    /// version and checked under a temporary name beside it, then linked into place: a
    /// failed or killed copy leaves nothing at the destination, and nothing beside the
    /// destination is ever read.
    /// The rows `migrate` writes into a new PostgreSQL store, which a copy into it replaces
    /// (as a copy into a new SQLite file replaces its first user and settings): the local
    /// user (no other), and settings.
    static let rowsMigrateWrites = [
        TopRegionsSchema.user.name: "\"name\" = '\(GalleryUser.localName)'",
        TopRegionsSchema.setting.name: "TRUE",
    ]

    @discardableResult
    public static func copyStore(from source: String, to destination: String, busyTimeout: TimeInterval? = nil) throws -> CopyOutcome {
        CopyScratch.removeLeftovers(in: NSTemporaryDirectory())
        switch (PostgresLocation.isURL(source), PostgresLocation.isURL(destination)) {
        case (false, false):
            return try buildFile(destination) { building in try copy(storeAt: source, to: building, busyTimeout: busyTimeout) }
        case (false, true):
            // Connected first: an unreachable database fails before the source is read.
            return try withPostgresStore(destination, lockTimeout: busyTimeout) { store in
                try withCurrentStore(at: source, busyTimeout: busyTimeout) { gallery in
                    _ = try store.copy(from: gallery.store, replacing: rowsMigrateWrites)
                }
                let status = try postgresStatus(destination, busyTimeout: busyTimeout)
                return CopyOutcome(problems: try problems(in: store), photos: status.photos, regions: status.regions)
            }
        case (true, false):
            return try buildFile(destination) { building in
                let gallery = try open(path: building, for: .create)
                defer { gallery.close() }
                do {
                    try withPostgresStore(source, lockTimeout: busyTimeout) { _ = try $0.copy(into: gallery.store) }
                } catch let error as GalleryError {
                    throw SourceFailure(error: error)  // names the database already
                }
            }
        case (true, true):
            return try CopyScratch.withDirectory { directory in
                try copyStore(from: source, to: directory + "/gallery.sqlite", busyTimeout: busyTimeout)
                return try copyStore(from: directory + "/gallery.sqlite", to: destination, busyTimeout: busyTimeout)
            }
        }
    }

    /// Builds a store file with `build` under a temporary name beside `destination`,
    /// brings it to this version and checks it there, then links it into place.
    private static func buildFile(_ destination: String, _ build: (String) throws -> Void) throws -> CopyOutcome {
        try refuseCopyDestination(destination)
        return try CopyScratch.withBuilding(beside: destination) { building in
            let outcome: CopyOutcome
            do {
                try build(building)
                let copy = try open(path: building, for: .write)
                defer { copy.close() }
                let status = try copy.status()
                outcome = CopyOutcome(problems: try copy.check(), photos: status.photos, regions: status.regions)
            } catch let failure as SourceFailure {
                throw failure.error
            } catch let error as GalleryError where error.kind == .storeUnavailable {
                // SQLite's words (a full disk) name no file, or the temporary one: the copy's is the one asked for.
                let message = error.message.replacingOccurrences(of: building, with: absolute(destination))
                let named = message.range(of: "copy the store to \(absolute(destination)):", options: .caseInsensitive) != nil
                throw GalleryError(.storeUnavailable, named ? message : "cannot copy the store to \(absolute(destination)): \(message)")
            }
            try linkCopy(building, to: destination)
            return outcome
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

    private static func refuseCopyDestination(_ destination: String) throws {
        do { try Store.refuseCopyDestination(destination) } catch let error as StoreError {
            throw GalleryError(.storeUnavailable, error.message.replacingOccurrences(of: "copy the store to \(destination):",
                                                                                   with: "copy the store to \(absolute(destination)):"))
        }
    }

    /// Puts the store built at `building` (closed) in place at `destination`, which must not
    /// exist: a hard link, which never replaces a file that appeared meanwhile.
    private static func linkCopy(_ building: String, to destination: String) throws {
        // Closing the last connection folds SQLite's journal into the file; linked alone, a
        // file whose journal still held commits would be a copy without them.
        if let size = (try? FileManager.default.attributesOfItem(atPath: building + "-wal"))?[.size] as? NSNumber, size.intValue > 0 {
            throw GalleryError(.storeUnavailable, "cannot copy the store to \(absolute(destination)): the copy's journal was not folded into it")
        }
        if link(building, destination) == 0 { return }
        var reason = errno
        // A file system without hard links (vfat, some network shares): renamed instead,
        // after one more look that nothing is there (rename would replace it).
        if [EPERM, ENOTSUP, EOPNOTSUPP, EMLINK].contains(reason) {
            var status = stat()
            if lstat(destination, &status) == 0 {
                reason = EEXIST
            } else if rename(building, destination) == 0 {
                return
            } else {
                reason = errno
            }
        }
        let words = reason == EEXIST ? "a file is there already; a copy overwrites nothing" : String(cString: strerror(reason))
        throw GalleryError(.storeUnavailable, "cannot copy the store to \(absolute(destination)): \(words)")
    }
}

/// An error of the store a copy reads, passed through the copy's own wording.
private struct SourceFailure: Error {
    let error: GalleryError
}

extension Gallery {
    /// Copies the whole gallery (users, Recents, Favorites, thumbnails, history) to a new
    /// store file at `destination`, consistent while other processes write. Large images
    /// live in the image cache, not the store, and are not copied.
    public func copy(to destination: String) throws {
        try Self.refusePostgres(destination, cannot: "write", hint: "copy to a SQLite file path")
        do {
            try store.copy(to: destination)
        } catch let error as StoreError {
            throw GalleryError(.storeUnavailable, error.message)
        }
    }

    /// Copies the gallery in the store file at `source` as `copy(to:)` does, reading the
    /// source only: it is not migrated, so a store of an older version stays that
    /// version's. The copy is brought to this version when it is first opened for writing.
    public static func copy(storeAt source: String, to destination: String, busyTimeout: TimeInterval? = nil) throws {
        try refusePostgres(source, cannot: "read", hint: "copy from a SQLite file path")
        try refusePostgres(destination, cannot: "write", hint: "copy to a SQLite file path")
        do {
            try Store.copy(storeAt: source, to: destination, busyTimeout: busyTimeout ?? StoreConfiguration().busyTimeout)
        } catch let error as StoreError where error.kind == .notFound {
            throw GalleryError(.noStore, "no store at \(absolute(source))", hint: "run `topregions sync` first")
        } catch let error as StoreError {
            throw GalleryError(.storeUnavailable, error.message)
        }
    }
}
