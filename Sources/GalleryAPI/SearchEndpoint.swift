import Foundation
import HTTPServer
import TopRegionsKit

// `GET /api/search?q=…[&region=ID][&limit=N][&after=CURSOR]`: regions and a page of photos
// whose text holds every word; cached like the catalogue until the next commit.
extension GalleryAPI {
    /// Photos a search page holds unless `limit` says otherwise.
    static let searchPageSize = 24

    func search(_ request: HTTPRequest, access: StoreAccess) throws -> HTTPResponse {
        let query = try QueryArguments(request, allowed: ["q", "region", "limit", "after"])
        guard let text = query.text("q") else { throw APIError.badRequest("search needs q=WORDS (words of a title, description, photographer, region or country)") }
        if let problem = Gallery.searchQueryProblem(text) { throw APIError.badRequest("q: \(problem)") }
        let limit = try query.integer("limit", default: Self.searchPageSize, range: 1...Self.regionsLimit)
        let placeID = query.text("region")
        if let placeID, !Endpoint.isPlaceID(placeID) { throw APIError.badRequest("region must be a region's Flickr place id") }
        let after = query.text("after")
        let key = "search?\(text.utf8.count):\(text)&\(placeID ?? "")&\(limit)&\(after ?? "")"
        let page = try cache.page(key, access: access) { () throws -> ResponseCache.Page in
            let within: RegionRecord? = try placeID.map { try self.region(placeID: $0) }
            let results = try gallery.search(text, region: within, limit: limit, after: after)
            let next: String? = results.next.map { self.nextLink(request, cursor: $0.text) }
            return (try Self.encode(SearchAnswer(results: results, next: next)), next)
        }
        return pageResponse(page, for: request)
    }
}
