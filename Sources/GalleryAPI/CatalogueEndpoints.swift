import Foundation
import HTTPServer
import TopRegionsKit

// Regions, a region's photos, a photo, the status: read from the cache, which the store's
// next commit empties.
extension GalleryAPI {
    /// The most regions one request may ask for.
    static let regionsLimit = 1_000

    func catalogue(_ endpoint: Endpoint, _ request: HTTPRequest) throws -> HTTPResponse {
        let body: [UInt8]
        switch endpoint {
        case .regions:
            let query = try QueryArguments(request, allowed: ["limit", "byCountry"])
            let limit = try query.integer("limit", default: Gallery.topRegionsLimit, range: 1...Self.regionsLimit)
            let byCountry = try query.boolean("byCountry")
            body = try cache.bytes("regions?\(limit)&\(byCountry)") {
                try Self.encode(try gallery.topRegionRows(limit: limit, byCountry: byCountry))
            }
        case .regionPhotos(let placeID):
            let query = try QueryArguments(request, allowed: ["byPhotographer"])
            let byPhotographer = try query.boolean("byPhotographer")
            body = try cache.bytes("photos/\(placeID)?\(byPhotographer)") {
                let region = try region(placeID: placeID)
                return try Self.encode(try gallery.photoRows(inRegion: region.id ?? -1, byPhotographer: byPhotographer))
            }
        case .photo(let flickrID):
            _ = try QueryArguments(request, allowed: [])
            body = try cache.bytes("photo/\(flickrID)") {
                guard let detail = try gallery.photoDetail(flickrID: flickrID) else { throw APIError.notFound("no photo has id \(flickrID)") }
                return try Self.encode(detail)
            }
        default:
            _ = try QueryArguments(request, allowed: [])
            body = try Self.encode(StatusReport(try gallery.status(now: Date()), store: gallery.publicStoreName, showingHosts: false))
        }
        return response(status: 200, json: body, for: request, headers: [("Cache-Control", "no-cache")])
    }

    /// The region with this Flickr place id; 404 when the store has none (or no photo in it).
    func region(placeID: String) throws -> RegionRecord {
        guard let region = try gallery.region(placeID: placeID) else {
            throw APIError.notFound("no region has id \(placeID)")
        }
        return region
    }
}
