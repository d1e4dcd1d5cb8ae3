import Foundation
import Synchronization

/// The photos a SampleData folder holds, by id, and the regions of their places: what
/// decides which image URLs SampleData answers and what their pictures look like. Read
/// from the search pages once per folder and process, on the first image asked for
/// (every image client makes its own transport, so the index outlives them).
final class SampleDataPhotoIndex: Sendable {
    /// What an image URL of a photo must match, and where the photo was taken.
    struct Photo: Sendable {
        let secret: String
        let placeID: String?
    }

    private let directory: URL
    private let format: ResponseFormat
    private let photos: [String: Photo]
    /// Place id → region id (nil: the place has no region, or no file).
    private let regions = Mutex<[String: String?]>([:])

    private static let loaded = Mutex<[String: SampleDataPhotoIndex]>([:])

    /// The index of the folder's `pages` search pages in `format`, read once per process.
    static func of(_ directory: URL, pages: Int, format: ResponseFormat) throws -> SampleDataPhotoIndex {
        let key = directory.standardizedFileURL.path + "\n" + format.rawValue
        if let index = loaded.withLock({ $0[key] }) { return index }
        // Read outside the lock: two first requests may both read, and read the same.
        let index = try SampleDataPhotoIndex(directory: directory, pages: pages, format: format)
        return loaded.withLock { indexes in
            if let earlier = indexes[key] { return earlier }
            indexes[key] = index
            return index
        }
    }

    private init(directory: URL, pages: Int, format: ResponseFormat) throws {
        self.directory = directory
        self.format = format
        var photos: [String: Photo] = [:]
        for page in 1...max(pages, 1) {
            let name = String(format: "page-%04d.%@", page, format == .json ? "json" : "xml")
            let file = directory.appendingPathComponent(format.rawValue).appendingPathComponent(FlickrMethod.photosSearch).appendingPathComponent(name)
            guard let data = try? Data(contentsOf: file) else {
                throw FlickrError(.notInSampleData, "SampleData's \(file.path) cannot be read")
            }
            for photo in try FlickrResponseDecoder.photoPage(data, format: format, page: page).photos {
                guard let secret = photo.secret, !secret.isEmpty else { continue }
                photos[photo.id] = Photo(secret: secret, placeID: photo.placeID)
            }
        }
        self.photos = photos
    }

    /// The photo with this id, or nil when SampleData has none.
    func photo(_ id: String) -> Photo? {
        photos[id]
    }

    /// The region of a place, from its `places.getInfo` file; nil when the place has no
    /// region or no file (a photo at sea, a country-level place).
    func region(of placeID: String?) -> String? {
        guard let placeID, SampleDataTransport.isSafeFileName(placeID) else { return nil }
        if let known = regions.withLock({ $0[placeID] }) { return known }
        let file = directory.appendingPathComponent(format.rawValue).appendingPathComponent(FlickrMethod.placeInfo)
            .appendingPathComponent("\(placeID).\(format == .json ? "json" : "xml")")
        let region = (try? Data(contentsOf: file)).flatMap { try? FlickrResponseDecoder.placeInfo($0, format: format) }?.region?.placeID
        regions.withLock { $0[placeID] = .some(region) }
        return region
    }
}
