import Flickr
import Foundation
import Store

/// Where images come from: an image base given by the caller, else the one the gallery's
/// photos were synced with (the bundled SampleData, or a server's). Images are public URLs:
/// no API key is needed.
public struct ImageSource: Sendable {
    /// Given explicitly (`--image-base`, `FLICKR_IMAGE_BASE`).
    public var imageBase: URL?
    /// Where `TOPREGIONS_SAMPLEDATA` is looked up, for photos synced from SampleData.
    public var environment: [String: String]

    /// A source with these values; by default, the process's environment.
    public init(imageBase: URL? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.imageBase = imageBase
        self.environment = environment
    }
}

extension GalleryWriting {
    /// The photo's square thumbnail: from the store, else downloaded once and kept there.
    public func thumbnail(flickrID: String, from source: ImageSource) async throws -> Data {
        let id = try photoRowID(flickrID: flickrID)
        let recorded = try setting(.imageBase)
        let client = try imageClient(source, recorded: recorded)
        let key = ["thumbnail", storeIdentity, source.imageBase?.absoluteString ?? recorded ?? "", String(id)].joined(separator: "\n")
        return try await imageErrors(flickrID, client: client) {
            try await ImageDownloads.shared.load(key) {
                try await ThumbnailLoader(gallery: self, client: client.client).thumbnail(photoID: id)
            }
        }
    }

    /// The photo's image in `size` (one of `PhotoSize.gallerySizes`): the square thumbnail
    /// from the store, as `thumbnail` gives it; any other size from the file cache in
    /// `cacheDirectory`, else downloaded, decoded whole, and cached there (bounded, oldest
    /// used dropped first); never kept in the store. Concurrent requests for one image
    /// share one download.
    public func image(flickrID: String, size: PhotoSize = .large, from source: ImageSource, cacheDirectory: URL) async throws -> Data {
        guard PhotoSize.gallerySizes.contains(size) else {
            throw GalleryError(.invalidArgument, "no image of size \(size.rawValue) is served; the sizes are "
                               + PhotoSize.gallerySizes.map(\.rawValue).joined(separator: ", "))
        }
        if size == .square { return try await thumbnail(flickrID: flickrID, from: source) }
        let id = try photoRowID(flickrID: flickrID)
        let cache = try ImageCache(directory: cacheDirectory)
        guard let record = try await writableStore.reading({ try $0.fetchOne(PhotoRecord.self, id: id) }) else {
            throw GalleryError(.notFound, "no photo has id \(flickrID)")
        }
        // One cache serves every store of the user: an image is kept under where it came
        // from (this store, the image base, the photo's secret), so that what one server
        // sent for an id is never given for another store's photo of that id.
        let recorded = try setting(.imageBase)
        let base = source.imageBase?.absoluteString ?? recorded ?? ""
        let origin = [storeIdentity, base, record.secret ?? "", record.server ?? ""].joined(separator: "\n")
        let originKey = String(try APIToken.hash(origin).prefix(16))
        if let cached = try cache.data(flickrID: flickrID, size: size, origin: originKey) { return cached }
        let client = try imageClient(source, recorded: recorded)
        let photo = FlickrPhoto(id: record.flickrID, owner: "", secret: record.secret, server: record.server, farm: record.farm.map(Int.init))
        let file = try cache.fileURL(flickrID: flickrID, size: size, origin: originKey)
        return try await imageErrors(flickrID, client: client) {
            try await ImageDownloads.shared.load(file.path) {
                // A download that ended just before this one began has kept the bytes.
                if let cached = try cache.data(flickrID: flickrID, size: size, origin: originKey) { return cached }
                let data = try await client.client.image(of: photo, size: size)
                try cache.store(data, flickrID: flickrID, size: size, origin: originKey)
                return data
            }
        }
    }

    /// A client for images: SampleData's files, or HTTP under an image base (the one given,
    /// else `recorded`, the one the photos were synced with).
    private func imageClient(_ source: ImageSource, recorded: String?) throws -> ImageClient {
        if let url = source.imageBase ?? recorded.flatMap({ $0 == Gallery.sampleDataImageBase ? nil : URL(string: $0) }) {
            return ImageClient(client: FlickrClient(configuration: FlickrConfiguration(imageBase: url)), fromSampleData: false)
        }
        guard recorded == Gallery.sampleDataImageBase else {
            return ImageClient(client: FlickrClient(configuration: FlickrConfiguration()), fromSampleData: false)
        }
        guard let directory = SampleDataLocation.find(environment: source.environment) else {
            throw GalleryError(.noImage, "the photos came from SampleData, which was not found", hint: "set TOPREGIONS_SAMPLEDATA, or give --image-base")
        }
        return ImageClient(client: FlickrClient(configuration: FlickrConfiguration(), transport: try SampleDataTransport(directory: directory)),
                           fromSampleData: true)
    }

    /// Image failures in words: a photo SampleData does not hold, a server's answer naming
    /// the URL.
    private func imageErrors(_ flickrID: String, client: ImageClient,
                             _ body: () async throws -> Data) async throws -> Data {
        do {
            return try await body()
        } catch let error as FlickrError where client.fromSampleData && error.kind == .http(status: 404) {
            // Every photo SampleData holds has images: this one came from another SampleData.
            throw GalleryError(.noImage, "SampleData holds no photo \(flickrID): the store was synced from other data",
                               hint: "give --image-base URL to fetch it from a server")
        } catch let error as FlickrError where client.fromSampleData && error.kind == .notInSampleData {
            throw GalleryError(.noImage, error.message)
        } catch let error as FlickrError where error.kind == .missingURLPiece {
            // Flickr did not say where the photo's images are (no secret or server): no
            // server was asked, and none failed.
            throw GalleryError(.noImage, "\(error)")
        } catch let error as FlickrError {
            throw GalleryError(.source(temporary: error.isTransient), "\(error)")
        }
    }
}

/// Where images come from: the client, and whether it reads SampleData's files.
private struct ImageClient: Sendable {
    let client: FlickrClient
    let fromSampleData: Bool
}
