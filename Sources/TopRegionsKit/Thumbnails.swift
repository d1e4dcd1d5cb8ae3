import Flickr
import Foundation
import Store

/// Square thumbnails (75×75), downloaded the first time one is asked for and kept in the
/// store; concurrent requests for one photo share one download.
public actor ThumbnailLoader {
    private let gallery: any GalleryWriting
    private let client: FlickrClient
    private var inFlight: [Int64: Task<Data, Error>] = [:]
    /// Downloads that have hit the network, for tests and reports.
    public private(set) var downloads = 0

    /// A loader that keeps thumbnails in `gallery`'s store and downloads them with `client`.
    public init(gallery: any GalleryWriting, client: FlickrClient) {
        self.gallery = gallery
        self.client = client
    }

    /// The square thumbnail of the photo with row id `photoID`: stored, else downloaded and
    /// kept. Throws `notFound` for no such photo, or what the download throws.
    public func thumbnail(photoID: Int64) async throws -> Data {
        if let stored = try await gallery.writableStore.reading({ context in
            try context.rows("SELECT bytes FROM Thumbnail WHERE photo_id = \(context.dialect.parameter(1))", [.integer(photoID)])
                .first?.optionalBytes("bytes")
        }) {
            return Data(stored)
        }
        if let running = inFlight[photoID] { return try await running.value }
        let task = Task { try await download(photoID: photoID) }
        inFlight[photoID] = task
        defer { inFlight[photoID] = nil }
        return try await task.value
    }

    private func download(photoID: Int64) async throws -> Data {
        guard let record = try await gallery.writableStore.reading({ try $0.fetchOne(PhotoRecord.self, id: photoID) }) else {
            throw GalleryError(.notFound, "no photo has row id \(photoID)")
        }
        let photo = FlickrPhoto(id: record.flickrID, owner: "", secret: record.secret, server: record.server)
        downloads += 1
        let bytes = try await client.image(of: photo, size: .square)
        guard !gallery.isReadOnly else { return bytes }  // given, not kept
        do {
            try await gallery.writableStore.writing { transaction in
                var thumbnail = ThumbnailRecord(bytes: [UInt8](bytes), fetchedAt: Date(), photoID: photoID)
                try transaction.upsert(&thumbnail, matching: ["photo_id"])
            }
        } catch let error as StoreError where error.isBusy {
            // Another process kept the store locked: the bytes are given all the same, and
            // kept by the next request that finds the store free.
        } catch let error as GalleryError where error.kind == .busy(pid: nil) || error.kind == .storeUnreachable {
            // The same on a database server: busy, or gone for now.
        }
        return bytes
    }
}

/// A photo's square thumbnail, kept in the store.
struct ThumbnailRecord: TableRecord {
    var id: Int64?
    var bytes: [UInt8] = []
    var fetchedAt = Date(timeIntervalSince1970: 0)
    var photoID: Int64?

    static let table = RecordTable<ThumbnailRecord>("Thumbnail", columns: [
        .column("bytes", \.bytes),
        .column("fetchedAt", \.fetchedAt),
        .toOne("photo", "Photo", \.photoID, inverse: "thumbnail"),
    ], indexes: [TableIndex("thumbnail_photo", columns: ["photo_id"], unique: true)])

    init() {}

    init(bytes: [UInt8], fetchedAt: Date, photoID: Int64?) {
        self.bytes = bytes
        self.fetchedAt = fetchedAt
        self.photoID = photoID
    }
}

/// Full-size images as files in a cache directory, never in the store: bounded in bytes
/// (default 50 MB), least recently used dropped first, file names made only of the photo's
/// id digits and the size letter, so no name can leave the directory.
public struct ImageCache: Sendable {
    /// The folder the image files are kept in (created, owner-only, if missing).
    public let directory: URL
    /// The most bytes the cached files may take together.
    public let maximumBytes: Int

    /// A cache in `directory`, which is created if missing; throws when it cannot be.
    public init(directory: URL, maximumBytes: Int = 50 * 1024 * 1024) throws {
        self.directory = directory
        self.maximumBytes = maximumBytes
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw GalleryError(.storeUnavailable, "cannot create the image cache \(directory.path): \(Self.reason(error, creating: directory))",
                               hint: "set XDG_CACHE_HOME to a directory you can write")
        }
    }

    /// Foundation's file error in words (its own text is an NSCocoaErrorDomain dump).
    private static func reason(_ error: Error, creating directory: URL) -> String {
        let error = error as NSError
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        switch error.code {
        case NSFileWriteNoPermissionError: return "permission denied"
        case NSFileWriteVolumeReadOnlyError: return "read-only file system"
        case NSFileWriteFileExistsError: return "a file is in the way"
        default: return probedReason(creating: directory) ?? "it cannot be created"
        }
    }

    /// Why a folder cannot be made, from its nearest existing ancestor.
    private static func probedReason(creating directory: URL) -> String? {
        var ancestor = directory.deletingLastPathComponent()
        while ancestor.path != "/" {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: ancestor.path, isDirectory: &isDirectory) {
                if !isDirectory.boolValue { return "\(ancestor.path) is not a directory" }
                return access(ancestor.path, W_OK) == 0 ? nil : "permission denied"
            }
            ancestor = ancestor.deletingLastPathComponent()
        }
        return nil
    }

    /// The file for a photo id and, when given, the key of where its image came from (hex
    /// digits); throws for an id that is not a Flickr id (digits) or a key that is not hex.
    public func fileURL(flickrID: String, size: PhotoSize, origin: String = "") throws -> URL {
        guard !flickrID.isEmpty, flickrID.count <= 32, flickrID.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw GalleryError(.invalidArgument, "\"\(flickrID)\" is not a Flickr photo id (digits only)")
        }
        guard origin.count <= 64, origin.allSatisfy({ $0.isASCII && $0.isHexDigit }) else {
            throw GalleryError(.invalidArgument, "\"\(origin)\" is not an image origin key (hex digits)")
        }
        return directory.appendingPathComponent(origin.isEmpty ? "\(flickrID)_\(size.rawValue).img" : "\(flickrID)_\(origin)_\(size.rawValue).img")
    }

    /// The cached bytes, marking them used; nil when not cached.
    public func data(flickrID: String, size: PhotoSize, origin: String = "") throws -> Data? {
        let url = try fileURL(flickrID: flickrID, size: size, origin: origin)
        guard let data = try? Data(contentsOf: url) else { return nil }
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: url.path)
        return data
    }

    /// Keeps the bytes, then drops the least recently used files until the total fits.
    public func store(_ data: Data, flickrID: String, size: PhotoSize, origin: String = "") throws {
        let url = try fileURL(flickrID: flickrID, size: size, origin: origin)
        try data.write(to: url, options: .atomic)
        try evict()
    }

    /// The bytes the cached files take now.
    public var totalBytes: Int {
        files().reduce(0) { $0 + $1.size }
    }

    private func files() -> [(url: URL, size: Int, used: Date)] {
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        let urls = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: keys)) ?? []
        return urls.filter { $0.pathExtension == "img" }.compactMap { url in
            let values = try? url.resourceValues(forKeys: Set(keys))
            return (url, values?.fileSize ?? 0, values?.contentModificationDate ?? .distantPast)
        }
    }

    private func evict() throws {
        var entries = files().sorted { $0.used < $1.used }
        var total = entries.reduce(0) { $0 + $1.size }
        while total > maximumBytes, !entries.isEmpty {
            let oldest = entries.removeFirst()
            try? FileManager.default.removeItem(at: oldest.url)
            total -= oldest.size
        }
    }
}
