import Flickr
import TestSupport
import Foundation
import Testing

/// The real client, over real HTTP on loopback, against the Flickr-compatible test server.
@Suite("The client against the test server", .serialized)
struct ClientIntegrationTests {
    let server: FlickrTestServer

    init() throws {
        server = try FlickrTestServer(apiKey: "test-key-5f3a9")
    }

    func client(format: ResponseFormat = .json, attempts: Int = 3, timeout: TimeInterval = 5, maximumBytes: Int? = nil,
                concurrent: Int = 4, key: String = "test-key-5f3a9", rateLimiter: RateLimiter? = nil) -> FlickrClient {
        var configuration = FlickrConfiguration(endpoint: server.endpoint, apiKey: key, format: format, imageBase: server.imageBase)
        configuration.retry = RetryPolicy(maximumAttempts: attempts, baseDelay: 0.05, maximumDelay: 0.2)
        configuration.requestTimeout = timeout
        configuration.maximumConcurrentRequests = concurrent
        if let maximumBytes { configuration.maximumResponseBytes = maximumBytes }
        return FlickrClient(configuration: configuration, rateLimiter: rateLimiter)
    }

    func apiRequests() async throws -> [FlickrTestServer.LoggedRequest] {
        try await server.requests().filter { $0.method != nil }
    }

    @Test("Photos and places over HTTP, in both formats, equal what the files say", arguments: ResponseFormat.allCases)
    func happyPath(format: ResponseFormat) async throws {
        let client = client(format: format)
        let page = try await client.recentGeotaggedPhotos(page: 2, perPage: 100)
        let expected = try FlickrResponseDecoder.photoPage(Data(contentsOf: SampleDataFiles.pageFiles(.json)[1]), format: .json, page: 2)
        #expect(page.photos == expected.photos)
        let placeID = try #require(page.photos.compactMap(\.placeID).first)
        let info = try await client.placeInfo(placeID)
        #expect(info.placeID == placeID)
        let logged = try await apiRequests()
        #expect(logged.count == 2)
        #expect(logged.allSatisfy { $0.query["api_key"] == "test-key-5f3a9" })
        #expect(logged.first?.query["format"] == (format == .json ? "json" : "rest"))
    }

    @Test("HTTP 5xx is retried with backoff, then succeeds")
    func serverErrorRetried() async throws {
        try await server.addFault(["method": "flickr.photos.search", "status": 503, "times": 2])
        let page = try await client().recentGeotaggedPhotos(page: 1, perPage: 10)
        #expect(page.photos.count == 10)
        #expect(try await apiRequests().count == 3)
    }

    @Test("A failure that outlasts the attempts is reported with its status")
    func serverErrorGivesUp() async throws {
        try await server.addFault(["status": 500, "times": -1])
        let client = client(attempts: 3)
        await #expect { try await client.recentGeotaggedPhotos(page: 4, perPage: 10) } throws: { error in
            let error = error as? FlickrError
            return error?.kind == .http(status: 500) && error?.page == 4 && error?.method == "flickr.photos.search"
        }
        #expect(try await apiRequests().count == 3)
        #expect(client.statistics.calls == 3 && client.statistics.retries == 2)
    }

    @Test("429 with Retry-After is honoured before the retry")
    func rateLimitedByServer() async throws {
        try await server.addFault(["status": 429, "retry_after": 1, "times": 1])
        _ = try await client().recentGeotaggedPhotos(page: 1, perPage: 5)
        let logged = try await apiRequests()
        #expect(logged.count == 2)
        #expect(logged[1].time - logged[0].time >= 0.95, "waited \(logged[1].time - logged[0].time) s, asked 1 s")
    }

    @Test("The server's own rate limit (429 past N calls) is waited out, not failed")
    func serverRateLimitMode() async throws {
        try await server.setRateLimit(calls: 2, window: 3)
        let client = client(attempts: 4)
        // At once: three calls in a row could take longer than the window on a loaded
        // machine, and none would be refused.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for page in 1...3 { group.addTask { _ = try await client.recentGeotaggedPhotos(page: page, perPage: 5) } }
            try await group.waitForAll()
        }
        let logged = try await apiRequests()
        #expect(logged.count >= 4, "one call at least was refused and retried")
    }

    @Test("A request that times out is retried")
    func timeoutRetried() async throws {
        try await server.addFault(["method": "flickr.places.getInfo", "delay": 1.5, "times": 1])
        let page = try await client().recentGeotaggedPhotos(page: 1, perPage: 3)
        let placeID = try #require(page.photos.compactMap(\.placeID).first)
        let info = try await client(timeout: 0.5).placeInfo(placeID)
        #expect(info.placeID == placeID)
        #expect(try await apiRequests().filter { $0.method == "flickr.places.getInfo" }.count == 2)
    }

    @Test("A timeout that persists is reported as a timeout")
    func timeoutGivesUp() async throws {
        try await server.addFault(["delay": 1.0, "times": -1])
        let client = client(attempts: 2, timeout: 0.3)
        await #expect { try await client.recentGeotaggedPhotos(page: 1, perPage: 3) } throws: { ($0 as? FlickrError)?.kind == .timeout }
    }

    @Test("A transfer cut short (connection closed early) is a transient failure, retried", arguments: ResponseFormat.allCases)
    func truncatedTransfer(format: ResponseFormat) async throws {
        try await server.addFault(["method": "flickr.photos.search", "page": 3, "truncate": 0.5, "times": 1])
        let page = try await client(format: format).recentGeotaggedPhotos(page: 3, perPage: 100)
        #expect(page.photos.count == 100)
        #expect(try await apiRequests().count == 2)
    }

    @Test("A body that is whole to HTTP but truncated is malformed, names method and page, and is not retried",
          arguments: ResponseFormat.allCases)
    func truncatedBody(format: ResponseFormat) async throws {
        try await server.addFault(["method": "flickr.photos.search", "page": 3, "truncate": -0.5, "times": 1])
        let client = client(format: format)
        await #expect { try await client.recentGeotaggedPhotos(page: 3, perPage: 100) } throws: { error in
            let error = error as? FlickrError
            return error?.kind == .malformedResponse && error?.page == 3 && "\(error!)".contains("flickr.photos.search page 3")
        }
        #expect(try await apiRequests().count == 1)
    }

    @Test("Malformed JSON and XML are reported as malformed", arguments: ResponseFormat.allCases)
    func malformedBody(format: ResponseFormat) async throws {
        try await server.addFault(["malformed": true, "times": 1])
        let client = client(format: format)
        await #expect { try await client.recentGeotaggedPhotos(page: 1, perPage: 10) } throws: { error in
            (error as? FlickrError)?.kind == .malformedResponse && "\(error)".contains("flickr.photos.search page 1")
        }
        #expect(try await apiRequests().count == 1)
    }

    @Test("stat=fail 105 is retried; other codes are not, and arrive typed")
    func apiFailures() async throws {
        try await server.addFault(["fail_code": 105, "fail_message": "Service currently unavailable", "times": 1])
        _ = try await client().recentGeotaggedPhotos(page: 1, perPage: 5)
        #expect(try await apiRequests().count == 2)
        try await server.clearRequests()
        let badKey = client(key: "wrong-key")
        await #expect { try await badKey.recentGeotaggedPhotos(page: 1, perPage: 5) } throws: { error in
            (error as? FlickrError)?.kind == .api(code: 100) && "\(error)".contains("Invalid API Key")
        }
        #expect(try await apiRequests().count == 1, "an invalid key is not retried")
    }

    @Test("A place Flickr does not know is a permanent error, asked once")
    func unknownPlace() async throws {
        let client = client()
        await #expect { try await client.placeInfo("NoSuchPlace42") } throws: { error in
            (error as? FlickrError)?.isPermanentForPlace == true
        }
        #expect(try await apiRequests().count == 1)
    }

    @Test("A body over the size limit is refused")
    func oversizedBody() async throws {
        try await server.addFault(["body_bytes": 300_000, "times": 1])
        let client = client(maximumBytes: 100_000)
        await #expect { try await client.recentGeotaggedPhotos(page: 1, perPage: 5) } throws: { error in
            (error as? FlickrError)?.kind == .responseTooLarge
        }
    }

    @Test("An XML response with a DTD is refused without expanding it")
    func dtdOverHTTP() async throws {
        try await server.addFault(["dtd": true, "times": 1])
        let client = client(format: .xml)
        await #expect { try await client.recentGeotaggedPhotos(page: 1, perPage: 5) } throws: { "\($0)".contains("DTD") }
    }

    @Test("The API key never appears in errors")
    func keyRedacted() async throws {
        try await server.addFaults([["status": 404, "times": -1]])
        let secretKey = "test-key-5f3a9"
        let client = client(attempts: 1, key: secretKey)
        do {
            _ = try await client.recentGeotaggedPhotos(page: 1, perPage: 5)
            Issue.record("expected a failure")
        } catch {
            #expect(!"\(error)".contains(secretKey))
            #expect(!String(reflecting: error).contains(secretKey))
        }
        let unreachable = FlickrClient(configuration: FlickrConfiguration(endpoint: URL(string: "http://127.0.0.1:9/services/rest/")!, apiKey: secretKey))
        do {
            _ = try await unreachable.placeInfo("x")
            Issue.record("expected a failure")
        } catch {
            #expect((error as? FlickrError)?.kind == .transport)
            #expect(!String(reflecting: error).contains(secretKey))
        }
    }

    @Test("No more requests in flight than configured")
    func concurrencyBound() async throws {
        // Long enough that two requests started together overlap at the server even on a
        // machine busy with the other suites (with 0.2 s, one full run in seven saw only 1).
        try await server.addFault(["method": "flickr.places.getInfo", "delay": 1.0, "times": -1])
        let client = client(concurrent: 2)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask { _ = try? await client.placeInfo("place\(index)") }
            }
            try await group.waitForAll()
        }
        #expect(try await server.maximumInFlight() == 2)
    }

    @Test("Images download over HTTP; a missing one is a 404 error")
    func images() async throws {
        let client = client()
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: SampleDataFiles.directory.appendingPathComponent("images").path)
            .first { $0.hasSuffix("_s.jpg") })
        let parts = file.dropLast(6).split(separator: "_")
        let photo = FlickrPhoto(id: String(parts[0]), owner: "o", secret: String(parts[1]), server: "65535")
        let bytes = try await client.image(of: photo, size: .square)
        #expect(bytes == (try Data(contentsOf: SampleDataFiles.directory.appendingPathComponent("images/\(file)"))))
        var missing = photo
        missing.secret = "0000000000"
        await #expect { try await client.image(of: missing, size: .square) } throws: { ($0 as? FlickrError)?.kind == .http(status: 404) }
        #expect(try await apiRequests().isEmpty, "images are not API calls")
    }

    @Test("Every call goes through the rate limiter, retries included")
    func rateLimiterCountsEveryCall() async throws {
        try await server.addFault(["status": 502, "times": 2])
        let limiter = RateLimiter(limit: 100, window: 3600, burst: 100)
        _ = try await client(rateLimiter: limiter).recentGeotaggedPhotos(page: 1, perPage: 5)
        #expect(try await limiter.callsInWindow() == 3)
    }

    @Test("A call whose transfer fails is still a call in the client's count, as in the limiter's")
    func failedTransfersCount() async throws {
        try await server.addFault(["truncate": 0.5, "times": 2])
        let limiter = RateLimiter(limit: 100, window: 3600, burst: 100)
        let flickr = client(rateLimiter: limiter)
        _ = try await flickr.recentGeotaggedPhotos(page: 1, perPage: 5)
        #expect(flickr.statistics.calls == 3)
        #expect(try await limiter.callsInWindow() == 3)
    }
}
