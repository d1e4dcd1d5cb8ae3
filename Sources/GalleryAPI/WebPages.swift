import Foundation
import HTTPServer

// The web page: `index.html` for every route the page knows (so deep links load), its
// scripts and styles at `/app/NAME`, all embedded in the binary. The page is public (it is
// code, not data); what it shows comes from the API, with the user's token.
extension GalleryAPI {
    /// The page's own routes, besides `/app/…`.
    static func isPageRoute(_ path: String) -> Bool {
        if ["/", "/recents", "/favorites", "/search"].contains(path) { return true }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty else { return false }
        switch parts[1] {
        case "regions": return Endpoint.isPlaceID(String(parts[2]))
        case "photos": return Endpoint.isPhotoID(String(parts[2]))
        default: return false
        }
    }

    /// No inline script or style, nothing from elsewhere, never framed.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// A path outside `/api/`: a file of the page, the page for its routes, or the page with
    /// status 404 for any other path (it shows its own "not found" view).
    func page(_ request: HTTPRequest) throws -> HTTPResponse {
        let name: String
        var status = 200
        if request.path.hasPrefix("/app/") {
            name = String(request.path.dropFirst(5))
        } else {
            name = "index.html"
            if !Self.isPageRoute(request.path) { status = 404 }
        }
        guard let file = WebAssets.file(named: name) else { throw APIError.notFound("no file at \(LogText.escaped(request.path, limit: 128))") }
        guard ["GET", "HEAD"].contains(request.method) else { throw APIError.methodNotAllowed(request.method, allowed: ["GET", "HEAD"]) }
        if status == 404 { return pageNotFound(file) }
        // A query is ignored here, unlike the API's: a shared link carries tracking
        // parameters (`?utm_source=…`), a cache-busting asset URL a version; neither means
        // anything to a static file.
        let bytes = Array(file.text.utf8) + [UInt8(ascii: "\n")]
        let tag = "\"\(Self.digest(bytes).prefix(32))\""
        var headers: [(name: String, value: String)] = [("Content-Type", file.type), ("ETag", tag), ("Cache-Control", "no-cache"),
                                                        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer")]
        if name == "index.html" { headers += [("Content-Security-Policy", Self.contentSecurityPolicy), ("X-Frame-Options", "DENY")] }
        if let match = request.header("If-None-Match"), Self.matches(match, tag) {
            return HTTPResponse(status: 304, headers: headers, body: .bytes(bytes))  // not sent: it sets the 200's Content-Length
        }
        return HTTPResponse(status: 200, headers: headers, body: .bytes(bytes))  // libmicrohttpd sends no body for HEAD, with the GET length
    }
}

extension GalleryAPI {
    /// The page, answered 404: no validator, so no cache keeps it as the path's answer.
    private func pageNotFound(_ file: (type: String, text: String)) -> HTTPResponse {
        HTTPResponse(status: 404, headers: [("Content-Type", file.type), ("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff"),
                                            ("Referrer-Policy", "no-referrer"), ("Content-Security-Policy", Self.contentSecurityPolicy),
                                            ("X-Frame-Options", "DENY")],
                     body: .bytes(Array(file.text.utf8) + [UInt8(ascii: "\n")]))
    }

    /// The OpenAPI document the API is described by (docs/openapi.yaml, embedded).
    func openAPIDocument(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try QueryArguments(request, allowed: [])
        let bytes = Array(WebAssets.openAPIDocument.utf8) + [UInt8(ascii: "\n")]
        var headers: [(name: String, value: String)] = [("Content-Type", "application/yaml; charset=utf-8"), ("Cache-Control", "no-cache"),
                                                        ("X-Content-Type-Options", "nosniff")]
        headers += corsHeaders(request)
        return HTTPResponse(status: 200, headers: headers, body: .bytes(bytes))
    }
}

/// What `GET /api` answers: where the API's description is.
struct APIIndex: Encodable {
    var description = "The TopRegions gallery API; every endpoint is described by the OpenAPI document."
    var openapi = "/api/openapi.yaml"
}

/// Who a token belongs to (`GET /api/me`).
struct Me: Encodable {
    var name: String
}

extension WebAssets {
    /// The page's file by name: from `$TOPREGIONS_WEB_DIR` when that is set (a developer
    /// editing the page sees a change on reload, without a build), else the embedded copy.
    static func file(named name: String) -> (type: String, text: String)? {
        guard let folder = ProcessInfo.processInfo.environment["TOPREGIONS_WEB_DIR"], !folder.isEmpty else { return files[name] }
        let types = ["html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
                     "svg": "image/svg+xml"]
        guard !name.contains("/"), !name.hasPrefix("."), let type = types[URL(fileURLWithPath: name).pathExtension],
              let data = FileManager.default.contents(atPath: URL(fileURLWithPath: folder).appendingPathComponent(name).path) else {
            return nil
        }
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return (type, text)
    }
}
