import Foundation
import HTTPServer
import TopRegionsKit

// Regions, a region's photos, a photo, the status: read from the cache, which the store's
// next commit empties.
extension GalleryAPI {
    /// The most regions one request may ask for.
    static let regionsLimit = 1_000

    func catalogue(_ endpoint: Endpoint, _ request: HTTPRequest, access: StoreAccess) throws -> HTTPResponse {
        let body: [UInt8]
        switch endpoint {
        case .regions:
            let query = try QueryArguments(request, allowed: ["limit", "byCountry", "after"])
            let limit = try query.integer("limit", default: Gallery.topRegionsLimit, range: 1...Self.regionsLimit)
            let byCountry = try query.boolean("byCountry")
            if byCountry {
                guard !query.has("after") else { throw APIError.badRequest("byCountry lists are not paged: leave out after, or byCountry") }
                body = try cache.bytes("regions?\(limit)&true", access: access) { try Self.encode(try gallery.topRegionRows(limit: limit, byCountry: true)) }
                break
            }
            let after = try query.text("after").map { try ListCursor(text: $0, list: ListCursor.regionsList) }
            return try listPage("regions?\(limit)&\(after?.text ?? "")", request, access: access) { try gallery.regionPage(limit: limit, after: after) }
        case .regionPhotos(let placeID):
            let query = try QueryArguments(request, allowed: ["byPhotographer", "limit", "after"])
            let byPhotographer = try query.boolean("byPhotographer")
            if query.has("limit") || query.has("after") {
                guard !byPhotographer else { throw APIError.badRequest("byPhotographer lists are not paged: leave out limit and after, or byPhotographer") }
                let limit = try query.integer("limit", default: Self.photosPageSize, range: 1...Self.regionsLimit)
                let afterText = query.text("after")
                // The cursor is checked against the region when the page is made: a kept
                // page's cursor was.
                return try listPage("photos/\(placeID)?\(limit)&\(afterText ?? "")", request, access: access) {
                    let region = try region(placeID: placeID)
                    let after = try afterText.map { try ListCursor(text: $0, list: ListCursor.photosList(region)) }
                    return try gallery.photoPage(inRegion: region, limit: limit, after: after)
                }
            }
            body = try cache.bytes("photos/\(placeID)?\(byPhotographer)", access: access) {
                let region = try region(placeID: placeID)
                return try Self.encode(try gallery.photoRows(inRegion: region.id ?? -1, byPhotographer: byPhotographer))
            }
        case .photo(let flickrID):
            _ = try QueryArguments(request, allowed: [])
            body = try cache.bytes("photo/\(flickrID)", access: access) {
                guard let detail = try gallery.photoDetail(flickrID: flickrID) else { throw APIError.notFound("no photo has id \(flickrID)") }
                return try Self.encode(detail)
            }
        default:
            _ = try QueryArguments(request, allowed: [])
            try access.require()
            body = try Self.encode(StatusReport(try gallery.status(now: Date()), store: gallery.publicStoreName, showingHosts: false))
        }
        return response(status: 200, json: body, for: request, headers: [("Cache-Control", "no-cache")])
    }

    /// A region's photos a page holds when `after` is given without `limit`.
    static let photosPageSize = 100

    /// A page of a list, from the cache under `key` (its rows and its next cursor), with the
    /// link to the next page made from this request.
    private func listPage<Row: Encodable>(_ key: String, _ request: HTTPRequest, access: StoreAccess,
                                          _ make: () throws -> ListPage<Row>) throws -> HTTPResponse {
        let page = try cache.page(key, access: access) {
            let page = try make()
            return (try Self.encode(page.rows), page.next?.text)
        }
        return pageResponse((page.body, page.next.map { nextLink(request, cursor: $0) }), for: request)
    }

    /// The request's own path and query with `after` set to `cursor` (and every other
    /// argument kept): where the next page is.
    func nextLink(_ request: HTTPRequest, cursor: String) -> String {
        var components = URLComponents()
        components.path = request.path
        components.queryItems = request.arguments.filter { $0.name != "after" }.map { URLQueryItem(name: $0.name, value: $0.value) }
            + [URLQueryItem(name: "after", value: cursor)]
        return components.string ?? request.path
    }

    /// A page's rows as the list's JSON array, and, when there is a next page, where it is
    /// (`Link: <…>; rel="next"`, RFC 8288): the body keeps the shape the list always had.
    func pageResponse(_ page: (body: [UInt8], next: String?), for request: HTTPRequest) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("Cache-Control", "no-cache")]
        if let next = page.next { headers.append(("Link", "<\(next)>; rel=\"next\"")) }
        return response(status: 200, json: page.body, for: request, headers: headers)
    }

    /// The region with this Flickr place id; 404 when the store has none (or no photo in it).
    func region(placeID: String) throws -> RegionRecord {
        guard let region = try gallery.region(placeID: placeID) else {
            throw APIError.notFound("no region has id \(placeID)")
        }
        return region
    }
}
