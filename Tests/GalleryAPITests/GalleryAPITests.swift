import Foundation
import HTTPServer
import TopRegionsKit
import Testing
@testable import GalleryAPI

@Suite("The API's parts: routes, query and body checks, escaping, listen addresses")
struct GalleryAPIPartsTests {
    @Test("Paths match their endpoints; an id that cannot be one matches nothing")
    func routes() {
        #expect(Endpoint.match("/api/regions") == .regions)
        #expect(Endpoint.match("/api/regions/changes") == .regionsChanges)
        #expect(Endpoint.match("/api/regions/vqv.q1mJOckQHEF4/photos") == .regionPhotos("vqv.q1mJOckQHEF4"))
        #expect(Endpoint.match("/api/regions/vqv.q1mJOckQHEF4/photos/changes") == .regionPhotosChanges("vqv.q1mJOckQHEF4"))
        #expect(Endpoint.match("/api/photos/53300015459/thumbnail") == .thumbnail("53300015459"))
        #expect(Endpoint.match("/api/favorites/53300015459") == .favorite("53300015459"))
        #expect(Endpoint.match("/api/favorites/move") == .favoritesMove)
        for path in ["/api/photos/../etc/passwd", "/api/photos/1%2F2", "/api/photos/12a", "/api/photos/" + String(repeating: "1", count: 33),
                     "/api/regions/a b/photos", "/api/regions/../photos", "/api/regions/", "/api//", "/regions", "/api/photos/1/image/x",
                     "/api/regions/x\u{0}y/photos"] {
            if path == "/api/regions/../photos" {
                // ".." is letters of a place id's alphabet, but it names a region to look up, never a file.
                #expect(Endpoint.match(path) == .regionPhotos(".."))
            } else {
                #expect(Endpoint.match(path) == nil, "\(path)")
            }
        }
        // The API's own index and description, search and the token's user.
        #expect(Endpoint.match("/api") == .index && Endpoint.match("/api/") == .index)
        #expect(Endpoint.match("/api/openapi.yaml") == .openAPIDocument)
        #expect(Endpoint.match("/api/search") == .search && Endpoint.match("/api/me") == .me && Endpoint.me.isPerUser)
        #expect(Endpoint.regions.methods == ["GET", "HEAD"])
        #expect(Endpoint.favorites.methods.contains("DELETE"))
        #expect(Endpoint.recents.isPerUser && !Endpoint.regions.isPerUser)
    }

    @Test("Query arguments: unknown, repeated or out of range is an error that names it")
    func queryArguments() throws {
        let request = HTTPRequest(method: "GET", path: "/api/regions", arguments: [("limit", "5"), ("byCountry", nil)])
        let query = try QueryArguments(request, allowed: ["limit", "byCountry"])
        #expect(try query.integer("limit", default: 50, range: 1...1000) == 5)
        #expect(try query.boolean("byCountry"))
        #expect(try query.integer("other", default: 7, range: 1...10) == 7)
        #expect(throws: APIError.self) { try QueryArguments(request, allowed: ["limit"]) }
        let repeated = HTTPRequest(method: "GET", path: "/", arguments: [("limit", "1"), ("limit", "2")])
        #expect(throws: APIError.self) { try QueryArguments(repeated, allowed: ["limit"]) }
        let sized = try QueryArguments(HTTPRequest(method: "GET", path: "/", arguments: [("size", "z")]), allowed: ["size"])
        #expect(try sized.choice("size", default: "b", among: ["s", "z", "b"]) == "z")
        #expect(try query.choice("size", default: "b", among: ["s", "z", "b"]) == "b", "absent: the default")
        for bad in ["x", "", "Z", "zz"] {
            let query = try QueryArguments(HTTPRequest(method: "GET", path: "/", arguments: [("size", bad)]), allowed: ["size"])
            #expect("\(bad)") { try query.choice("size", default: "b", among: ["s", "z", "b"]) } throws: { error in
                (error as? APIError)?.status == 400 && (error as? APIError)?.message.contains("size must be one of s, z, b") == true
            }
        }
        for bad in ["0", "1001", "-1", "1e3", "", "ten"] {
            let query = try QueryArguments(HTTPRequest(method: "GET", path: "/", arguments: [("limit", bad)]), allowed: ["limit"])
            #expect(throws: APIError.self, "\(bad)") { try query.integer("limit", default: 50, range: 1...1000) }
        }
    }

    @Test("JSON bodies: fields by type, unknown fields refused, booleans are not numbers")
    func bodies() throws {
        func body(_ text: String, type: String? = "application/json") -> HTTPRequest {
            HTTPRequest(method: "POST", path: "/", headers: type.map { ["content-type": $0] } ?? [:], body: Array(text.utf8))
        }
        #expect(try JSONBody(body(#"{"id": "53300015459"}"#)).photoID("id") == "53300015459")
        #expect(throws: APIError.self, "an id is a string: a number past 2^53 would arrive rounded") {
            try JSONBody(body(#"{"id": 53300015459}"#, type: nil)).photoID("id")
        }
        #expect(try JSONBody(body(#"{"from": 2, "to": 1}"#)).position("from") == 2)
        for bad in [#"{"from": true}"#, #"{"from": 0}"#, #"{"from": 1.5}"#, #"{"from": "1"}"#, #"{}"#] {
            #expect(throws: APIError.self, "\(bad)") { try JSONBody(body(bad)).position("from") }
        }
        #expect(throws: APIError.self) { try JSONBody(body(#"{"id": "1", "x": 2}"#)).photoID("id") }
        #expect(throws: APIError.self) { try JSONBody(body(#"{"id": "../1"}"#)).photoID("id") }
        #expect(throws: APIError.self) { try JSONBody(body("[1]")) }
        #expect(throws: APIError.self) { try JSONBody(body("")) }
        #expect { try JSONBody(body("{}", type: "text/plain")) } throws: { ($0 as? APIError)?.status == 415 }
        #expect { try JSONBody(body("{}", type: nil)) } throws: { ($0 as? APIError)?.status == 415 }
        #expect { try JSONBody(body("{}", type: "application/jsonx")) } throws: { ($0 as? APIError)?.status == 415 }
        #expect(throws: Never.self) { try JSONBody(body("{}", type: "Application/JSON; charset=utf-8")) }
        for bad in [#"{"id": "1",}"#, #"{"id": "1", "id": "2"}"#, #"{"id": "1"} x"#, #"{"id": "1" /* c */}"#, #"{'id': "1"}"#] {
            #expect { try JSONBody(body(bad)) } throws: { ($0 as? APIError)?.status == 400 }
        }
        #expect(throws: APIError.self, "a position is a JSON integer") { try JSONBody(body(#"{"from": 1.0}"#)).position("from") }
    }

    @Test("Credential-shaped text in a request line is hidden from the log, in any case and anywhere")
    func secretsAreHidden() {
        let body = "Ab3_dE5-fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC"  // 43 base64url characters, as a token's
        #expect(LogText.hidingSecrets("/api/photos/trk_\(body)") == "/api/photos/trk_REDACTED")
        #expect(LogText.hidingSecrets("/api/TRK_\(body)?x=1") == "/api/trk_REDACTED?x=1")
        #expect(LogText.hidingSecrets("trk_\(body)") == "trk_REDACTED", "a token sent as the method")
        #expect(LogText.hidingSecrets("/api/x;token=\(body)") == "/api/x;token=REDACTED", "a token's body without its prefix")
        #expect(LogText.hidingSecrets("/api/regions/say.f458JOqui3Fq/photos?limit=50") == "/api/regions/say.f458JOqui3Fq/photos?limit=50")
        #expect(LogText.hidingSecrets("/api/photos/12345678901234567890123456789012") == "/api/photos/12345678901234567890123456789012",
                "a photo id (32 digits at most) stays")
        #expect(LogText.hidingSecrets("/ünïcode/trk") == "/ünïcode/trk")
    }

    @Test("Text for the log is escaped and bounded")
    func logText() {
        #expect(LogText.escaped("plain") == "plain")
        #expect(LogText.escaped("a\u{1B}[31mb\n\"") == "a\\u{1b}[31mb\\n\\\"")
        #expect(LogText.escaped("\u{202E}evil") == "\\u{202e}evil")
        #expect(LogText.escaped(String(repeating: "x", count: 300), limit: 10) == String(repeating: "x", count: 10) + "…")
    }

    @Test("Listen addresses are numeric, with a port; loopback is told apart")
    func listenAddresses() throws {
        let v4 = try ListenAddress.parse("127.0.0.1:8080").get()
        #expect(v4 == ListenAddress(host: "127.0.0.1", port: 8080) && v4.isLoopback)
        let v6 = try ListenAddress.parse("[::1]:0").get()
        #expect(v6.host == "::1" && v6.isLoopback && v6.hostForURL == "[::1]")
        #expect(try !ListenAddress.parse("0.0.0.0:80").get().isLoopback)
        for bad in ["localhost:80", "127.0.0.1", "127.0.0.1:65536", "127.0.0.1:-1", "[::1]8080", "1.2.3:80", ":80", "127.0.0.1:http"] {
            #expect((try? ListenAddress.parse(bad).get()) == nil, "\(bad)")
        }
    }

    @Test("Errors of the gallery map to statuses and stable codes")
    func errorMapping() {
        #expect(APIError.from(APIError.notFound("x")).status == 404)
        #expect(APIError.from(CocoaError(.fileNoSuchFile)).status == 500)
        #expect(APIError.methodNotAllowed("PUT", allowed: ["GET", "HEAD"]).headers.first?.value == "GET, HEAD")
        // Another pass holding the sync lock is 409; a write that waited out another
        // session's lock on the store is 503, to be tried again.
        let syncRunning = APIError.from(GalleryError(.syncRunning(pid: 12), SyncLock.Busy(pid: 12, holder: "sync").description))
        #expect(syncRunning.status == 409 && syncRunning.code == "sync_running")
        let lockWaited = APIError.from(GalleryError(.busy(pid: nil), "cannot write to postgresql://u:***@db.example/g: another session held a lock"))
        #expect(lockWaited.status == 503 && lockWaited.code == "store_unavailable" && lockWaited.headers.contains { $0.name == "Retry-After" })
        // Where the store is never reaches a client.
        for kind in [GalleryError.Kind.storeUnreachable, .storeUnavailable, .noStore] {
            let answer = APIError.from(GalleryError(kind, "cannot connect to postgresql://u:***@db.example:5432/g: refused"))
            #expect(answer.status == 503 && !answer.message.contains("db.example") && !answer.message.contains("postgresql"))
        }
    }
}
