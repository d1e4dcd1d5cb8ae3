import Flickr
import Foundation
import HTTPServer
import TopRegionsKit

// One user's Recents and Favorites: every read and write is the token's user's, so no
// request can reach another user's lists.
extension GalleryAPI {
    func userList(_ endpoint: Endpoint, user: GalleryUser, _ request: HTTPRequest, access: StoreAccess) throws -> HTTPReply {
        _ = try QueryArguments(request, allowed: [])
        let headers: [(name: String, value: String)] = [("Cache-Control", "no-store"), ("Vary", "Authorization")]
        let gallery = gallery
        switch (endpoint, request.method) {
        case (.recents, _):
            try access.require()
            return .now(try json(try gallery.recentRows(for: user), for: request, headers: headers))
        case (.favorites, "GET"), (.favorites, "HEAD"):
            try access.require()
            return .now(try json(try gallery.favoriteRows(for: user), for: request, headers: headers))
        case (.view(let id), _):
            try JSONBody.expectNone(request)
            return later(request) { [self] in try json(try gallery.view(flickrID: id, for: user), for: request, headers: headers) }
        case (.favorites, "POST"):
            let id = try JSONBody(request).photoID("id")
            return later(request) { [self] in
                try gallery.addFavorite(flickrID: id, for: user)
                return try json(try gallery.favoriteRows(for: user), for: request, headers: headers)
            }
        case (.favorites, _):  // DELETE with {"id": …}
            let id = try JSONBody(request).photoID("id")
            return removeFavorite(id, user: user, request, headers)
        case (.favorite(let id), _):
            try JSONBody.expectNone(request)
            return removeFavorite(id, user: user, request, headers)
        case (.favoritesMove, _):
            let body = try JSONBody(request)
            let from = try body.position("from"), to = try body.position("to")
            try body.checkKeys(["from", "to"])
            return later(request) { [self] in
                try gallery.moveFavorite(fromPosition: from, toPosition: to, for: user)
                return try json(try gallery.favoriteRows(for: user), for: request, headers: headers)
            }
        default:
            throw APIError.methodNotAllowed(request.method, allowed: endpoint.methods)
        }
    }

    private func removeFavorite(_ id: String, user: GalleryUser, _ request: HTTPRequest,
                                _ headers: [(name: String, value: String)]) -> HTTPReply {
        let gallery = gallery
        return later(request) { [self] in
            try gallery.removeFavorite(flickrID: id, for: user)
            return try json(try gallery.favoriteRows(for: user), for: request, headers: headers)
        }
    }

    func startSync(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try QueryArguments(request, allowed: [])
        try JSONBody.expectNone(request)  // the pass takes no settings
        guard let syncRunner else {
            throw APIError(503, "sync_unavailable", "this server was started without a sync source")
        }
        switch syncRunner.start() {
        case .started:
            struct Started: Encodable { var started = true }
            return try json(Started(), status: 202, for: request)
        case .running(let pid):
            throw APIError(409, "sync_running", pid.map { "a sync pass is running (pid \($0))" } ?? "a sync pass is running",
                           headers: [APIError.Header(name: "Retry-After", value: "30")])
        case .stopped:
            throw APIError.shuttingDown
        case .unavailable:
            throw APIError.from(GalleryError(.storeUnreachable, "the store cannot be reached"))
        }
    }
}

/// A request's JSON object body, read field by field with errors that name the field.
struct JSONBody {
    /// A JSON value, as far as the API's bodies need to tell them apart.
    typealias Value = StrictJSON.Value

    private let object: [String: Value]

    init(_ request: HTTPRequest) throws(APIError) {
        let type = request.header("Content-Type") ?? ""
        let mediaType = type.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if mediaType != "application/json" {
            throw APIError(415, "unsupported_media_type", type.isEmpty ? "the body must be JSON, sent with Content-Type: application/json"
                           : "the body must be JSON (Content-Type: application/json), not \(LogText.escaped(type, limit: 64))")
        }
        guard !request.body.isEmpty else { throw .badRequest("the request needs a JSON object body") }
        // Strict RFC 8259 (no trailing comma, no comment), and each key once: two readers
        // of a body with a repeated key may each take a different one.
        let members: [(key: String, value: Value)]
        do { members = try StrictJSON.objectMembers(Data(request.body)) } catch {
            throw .badRequest("the body is not a JSON object: \(LogText.escaped(error.description, limit: 120))")
        }
        var object: [String: Value] = [:]
        for (key, value) in members {
            guard object.updateValue(value, forKey: key) == nil else {
                throw .badRequest("the body gives \"\(LogText.escaped(key, limit: 64))\" twice")
            }
        }
        self.object = object
    }

    /// A Flickr photo id (a string of digits; a whole number is taken too).
    func photoID(_ key: String) throws(APIError) -> String {
        try checkKeys([key])
        // A string only, as Flickr sends ids: a JSON number past 2^53 would arrive rounded.
        guard case .string(let text) = object[key], Endpoint.isPhotoID(text) else {
            throw .badRequest("\(key) must be a Flickr photo id: a string of digits")
        }
        return text
    }

    /// A position in a list, from 1.
    func position(_ key: String) throws(APIError) -> Int {
        guard case .integer(let number) = object[key], let value = Int(exactly: number), value >= 1, value <= 1_000_000 else {
            throw .badRequest("\(key) must be a position from 1 (a whole number)")
        }
        return value
    }

    /// For a request that takes no settings: no body, or an empty JSON object.
    static func expectNone(_ request: HTTPRequest) throws(APIError) {
        let body = String(decoding: request.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if !body.isEmpty { try JSONBody(request).checkKeys([]) }
    }

    /// Refuses keys other than these.
    func checkKeys(_ allowed: Set<String>) throws(APIError) {
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            let takes = allowed.isEmpty ? "takes no fields" : "takes \(allowed.sorted().joined(separator: ", "))"
            throw .badRequest("unknown field \"\(LogText.escaped(unknown, limit: 64))\"; the body \(takes)")
        }
    }
}
