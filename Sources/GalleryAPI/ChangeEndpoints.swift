import Foundation
import HTTPServer
import TopRegionsKit

// `…/changes`: a list as Server-Sent Events. The first event is the list (`snapshot`), each
// later one a batch (`batch`), as `watch --json` prints them; each event's id is the
// store's history token, so a client that reconnects with `Last-Event-ID` gets the batches
// it missed, or a snapshot when they are no longer kept.
extension GalleryAPI {
    func changes(_ endpoint: Endpoint, user: GalleryUser?, _ request: HTTPRequest, access: StoreAccess) throws -> HTTPResponse {
        let lastEventID = try Self.lastEventID(request)
        let key: String
        let makeList: () throws -> any FollowedList
        switch endpoint {
        case .regionsChanges:
            // No byCountry: a live list's rows are ranked within their section, which would
            // not be the ranks GET /api/regions?byCountry=true sends.
            let query = try QueryArguments(request, allowed: ["limit"])
            let limit = try query.integer("limit", default: Gallery.topRegionsLimit, range: 1...Self.regionsLimit)
            key = "regions/\(limit)"
            makeList = { [gallery] in try gallery.liveTopRegions(limit: limit) }
        case .regionPhotosChanges(let placeID):
            _ = try QueryArguments(request, allowed: [])
            try access.require()
            let regionID = try region(placeID: placeID).id ?? -1
            key = "photos/\(regionID)"
            makeList = { [gallery] in try gallery.liveRegionPhotos(regionID: regionID) }
        case .recentsChanges, .favoritesChanges:
            _ = try QueryArguments(request, allowed: [])
            guard let user else { throw APIError.unauthorized("this endpoint needs a user's token: Authorization: Bearer TOKEN") }
            if endpoint == .recentsChanges {
                key = "recents/\(user.id)"
                makeList = { [userLists] in try userLists.recents(for: user) }
            } else {
                key = "favorites/\(user.id)"
                makeList = { [userLists] in try userLists.favorites(for: user) }
            }
        default:
            throw APIError.notFound("no change stream at \(request.path)")
        }
        // Connection: close: a stream that ends (revoked, overflowing, the server stopping)
        // ends its connection too, so every client sees the end at once.
        var headers: [(name: String, value: String)] = [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                                                        ("X-Accel-Buffering", "no"), ("X-Content-Type-Options", "nosniff"),
                                                        ("Connection", "close")]
        headers += corsHeaders(request)
        if endpoint == .recentsChanges || endpoint == .favoritesChanges { headers.append(("Vary", "Authorization")) }
        if request.method == "HEAD" { return HTTPResponse(status: 200, headers: headers) }
        // A new list reads the store, and so may a subscriber's first snapshot.
        try access.require()
        let stream = try streams.open(key, for: request.clientAddress, lastEventID: lastEventID,
                                      isAuthorised: stillAuthorised(user, request), makeList: makeList)
        return HTTPResponse(status: 200, headers: headers, body: .stream(stream))
    }

    /// For a user's own list: whether the token the stream was opened with still names that
    /// user (a rotated token, or a removed user, ends the stream). Catalogue streams of a
    /// private server likewise end with their token. A public catalogue stream needs none.
    /// Asked of memory only (`TokenCache`), before every batch and heartbeat.
    private func stillAuthorised(_ user: GalleryUser?, _ request: HTTPRequest) -> @Sendable () -> Bool {
        guard let user, let token = Self.bearerToken(request) else { return { true } }
        return { [tokens] in tokens.stillNames(token, userID: user.id) }
    }

    /// The `Last-Event-ID` header: a history token (a whole number from 0).
    static func lastEventID(_ request: HTTPRequest) throws -> Int64? {
        guard let text = request.header("Last-Event-ID")?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        guard let token = Int64(text), token >= 0 else {
            throw APIError.badRequest("Last-Event-ID must be an event's id (a whole number), not \"\(LogText.escaped(text, limit: 32))\"")
        }
        return token
    }
}
