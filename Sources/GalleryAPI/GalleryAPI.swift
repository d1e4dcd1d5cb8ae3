import Foundation
import Store
import HTTPServer
import TopRegionsKit

/// The gallery's HTTP API (docs/openapi.yaml): catalogue reads, each user's Recents and
/// Favorites, images, sync, and every list as a live change stream. It answers each
/// request of an `HTTPServer`; nothing here parses HTTP.
///
/// Catalogue reads answer from a cache the store's commits invalidate; writes, images and
/// sync answer later, off the server's polling threads.
public final class GalleryAPI: HTTPHandler, Sendable {
    let gallery: any GalleryServing
    let configuration: APIConfiguration
    let cache: ResponseCache
    let streams: ChangeStreams
    let syncRunner: SyncRunner?
    /// Where requests that need the store are answered: never on the server's threads.
    let workers: StoreWorkers
    /// Which user each token names, renewed when users change.
    let tokens: TokenCache
    /// Every user's Recents and Favorites streams, from one controller of each kind.
    let userLists: UserLists
    /// Where writes run: one at a time (SQLite has one writer), on a thread of their own.
    /// A write waiting for another process's lock blocks its thread; on the shared pool's
    /// few threads it would hold up reads, images and the server's own shutdown.
    let writes = DispatchQueue(label: "topregions.api.writes")
    /// Where a request that waited `storeWait` for its worker is answered 503.
    private let patience = DispatchQueue(label: "topregions.api.store-wait")

    /// An API over `gallery`; without `sync`, `POST /api/sync` answers 503.
    public init(gallery: any GalleryServing, configuration: APIConfiguration, sync: SyncRunner? = nil) {
        self.gallery = gallery
        self.configuration = configuration
        self.syncRunner = sync
        cache = ResponseCache(gallery: gallery)
        userLists = UserLists(gallery: gallery)
        workers = StoreWorkers(count: configuration.workers)
        let streams = ChangeStreams(streamsPerAddress: configuration.streamsPerAddress, heartbeatSeconds: configuration.heartbeatSeconds,
                                    lingerSeconds: configuration.lingerSeconds)
        self.streams = streams
        // Users' changes (a token rotated, a user removed, in any process) end the streams
        // their old tokens opened at once.
        tokens = TokenCache(gallery: gallery) { streams.revokeUnauthorised() }
    }

    /// Ends every change stream and stops following the store.
    public func close() {
        tokens.close()
        streams.close()
        userLists.close()
        cache.close()
        workers.stop()
    }

    /// Change streams' lists open now (one results controller each).
    public var openLists: Int { streams.listCount }

    /// Routes the request to its endpoint; a thrown error becomes an `APIError` answer.
    /// Answered at once when memory has the answer (a kept page, a known token); otherwise
    /// answered again on a worker, within `storeWait`.
    public func reply(to request: HTTPRequest) -> HTTPReply {
        do {
            return try route(request, access: .memoryOnly)
        } catch is NeedsStore {
            return onWorker(request) { [self] in try route(request, access: .workers) }
        } catch {
            return .now(errorResponse(APIError.from(error), for: request))
        }
    }

    /// A refusal in the API's error format (`too_large` for a 413).
    public func refusal(status: Int, message: String) -> HTTPResponse {
        response(status: status, json: Self.errorBody(APIError(status, Self.refusalCode(status), message)), for: nil)
    }

    private static func refusalCode(_ status: Int) -> String {
        switch status {
        case 400: return "bad_request"
        case 413: return "too_large"
        case 501: return "not_implemented"
        case 503: return "shutting_down"
        default: return "refused"
        }
    }

    // MARK: Routing

    private func route(_ request: HTTPRequest, access: StoreAccess) throws -> HTTPReply {
        try checkHost(request)
        if request.method == "OPTIONS", configuration.corsOrigin != nil, request.header("Origin") != nil {
            return .now(preflight(request))
        }
        if !request.path.hasPrefix("/api/") && request.path != "/api" { return .now(try page(request)) }
        guard let endpoint = Endpoint.match(request.path) else {
            throw APIError.notFound("no endpoint at \(LogText.escaped(request.path, limit: 128)); the API is in docs/openapi.yaml")
        }
        guard endpoint.methods.contains(request.method) else {
            throw APIError.methodNotAllowed(LogText.escaped(request.method, limit: 16), allowed: endpoint.methods)
        }
        if !["GET", "HEAD"].contains(request.method) { try checkOrigin(request) }
        let user = try authenticate(request, required: endpoint.isPerUser || configuration.isPrivate, access: access)
        switch endpoint {
        case .regions, .regionPhotos, .photo, .status:
            return .now(try catalogue(endpoint, request, access: access))
        case .search:
            return .now(try search(request, access: access))
        case .openAPIDocument:
            return .now(try openAPIDocument(request))
        case .index:
            _ = try QueryArguments(request, allowed: [])
            return .now(try json(APIIndex(), for: request, headers: [("Link", "</api/openapi.yaml>; rel=\"service-desc\"")]))
        case .me:
            guard let user else { throw APIError.unauthorized("this endpoint needs a user's token: Authorization: Bearer TOKEN") }
            _ = try QueryArguments(request, allowed: [])
            return .now(try json(Me(name: user.name), for: request, headers: [("Cache-Control", "no-store")]))
        case .thumbnail(let id):
            return try image(flickrID: id, thumbnail: true, request)
        case .image(let id):
            return try image(flickrID: id, thumbnail: false, request)
        case .sync:
            try access.require()
            return .now(try startSync(request))
        case .regionsChanges, .regionPhotosChanges, .recentsChanges, .favoritesChanges:
            return .now(try changes(endpoint, user: user, request, access: access))
        case .view, .recents, .favorites, .favorite, .favoritesMove:
            guard let user else { throw APIError.unauthorized("this endpoint needs a user's token: Authorization: Bearer TOKEN") }
            return try userList(endpoint, user: user, request, access: access)
        }
    }

    /// The user whose bearer token the request carries; 401 when it carries none and one
    /// is `required`, or a wrong one.
    private func authenticate(_ request: HTTPRequest, required: Bool, access: StoreAccess) throws -> GalleryUser? {
        guard request.header("Authorization") != nil else {
            if required { throw APIError.unauthorized("this endpoint needs a user's token: Authorization: Bearer TOKEN") }
            return nil
        }
        guard let token = Self.bearerToken(request) else {
            throw APIError.unauthorized("the Authorization header must be Bearer TOKEN")
        }
        guard let user = try tokens.user(for: token, access: access) else {
            throw APIError.unauthorized("the token is not valid (it may have been rotated)")
        }
        return user
    }

    /// The token of an `Authorization: Bearer TOKEN` header, or nil when there is none.
    static func bearerToken(_ request: HTTPRequest) -> String? {
        guard let header = request.header("Authorization") else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    /// A `Host` the server does not answer to is 421 (RFC 9110 §15.5.20).
    private func checkHost(_ request: HTTPRequest) throws {
        guard let allowed = configuration.allowedHosts, let host = request.header("Host") else { return }
        let name = Self.hostName(host)
        if allowed.contains(name) || (configuration.answersLoopbackAddresses && Self.isLoopbackAddress(name)) { return }
        throw APIError(421, "misdirected_request",
                       "this server does not answer to the host \(LogText.escaped(host, limit: 64)) (serve --allowed-host NAME)")
    }

    /// The name of a `Host` header: trimmed, lowercase, without its port, an IPv6 literal's
    /// brackets or a fully qualified name's final dot.
    static func hostName(_ host: String) -> String {
        guard let parts = HostHeader.parts(host) else { return HostHeader.trimmed(host).lowercased() }
        var name = parts.name.lowercased()
        if !parts.isLiteral, name.hasSuffix(".") { name.removeLast() }
        return name
    }

    /// 127.0.0.0/8, or ::1 and ::ffff:127.x.x.x in any spelling.
    static func isLoopbackAddress(_ name: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
    }

    /// A browser's write from another origin is refused unless that origin is allowed.
    private func checkOrigin(_ request: HTTPRequest) throws {
        guard let origin = request.header("Origin") else { return }
        if let allowed = configuration.corsOrigin, allowed == "*" || allowed == origin { return }
        if let host = request.header("Host"), origin == "http://\(host)" || origin == "https://\(host)" { return }
        throw APIError(403, "origin_not_allowed", "requests from \(LogText.escaped(origin, limit: 128)) are not allowed (serve --cors-origin)")
    }

    // MARK: Responses

    func response(status: Int, json body: [UInt8], for request: HTTPRequest?, headers extra: [(name: String, value: String)] = []) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json; charset=utf-8"), ("X-Content-Type-Options", "nosniff")]
        headers += corsHeaders(request) + extra
        return HTTPResponse(status: status, headers: headers, body: .bytes(body))  // libmicrohttpd sends no body for HEAD, with the GET length
    }

    func json(_ value: some Encodable, status: Int = 200, for request: HTTPRequest, headers: [(name: String, value: String)] = []) throws -> HTTPResponse {
        response(status: status, json: try Self.encode(value), for: request, headers: headers)
    }

    func errorResponse(_ error: APIError, for request: HTTPRequest?) -> HTTPResponse {
        response(status: error.status, json: Self.errorBody(error), for: request, headers: error.headers.map { ($0.name, $0.value) })
    }

    static func encode(_ value: some Encodable) throws -> [UInt8] {
        var bytes = try GalleryJSON.bytes(value)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    static func errorBody(_ error: APIError) -> [UInt8] {
        struct Body: Encodable { var error: Detail }
        struct Detail: Encodable { var code: String; var message: String }
        return (try? encode(Body(error: Detail(code: error.code, message: error.message)))) ?? Array("{\"error\":{\"code\":\"internal\",\"message\":\"\"}}\n".utf8)
    }

    func corsHeaders(_ request: HTTPRequest?) -> [(name: String, value: String)] {
        guard let allowed = configuration.corsOrigin, let origin = request?.header("Origin"), allowed == "*" || allowed == origin else { return [] }
        return [("Access-Control-Allow-Origin", allowed == "*" ? "*" : origin), ("Vary", "Origin"),
                ("Access-Control-Expose-Headers", "ETag, Retry-After")]
    }

    private func preflight(_ request: HTTPRequest) -> HTTPResponse {
        var headers = corsHeaders(request)
        guard !headers.isEmpty else { return errorResponse(APIError(403, "origin_not_allowed", "this origin may not call the API"), for: nil) }
        headers += [("Access-Control-Allow-Methods", "GET, HEAD, POST, DELETE"),
                    ("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID"), ("Access-Control-Max-Age", "600")]
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Answers on a worker what `body` answers (awaiting it when it answers later), or 503
    /// when the store has not answered within `storeWait`: a worker still reading then
    /// finishes, and its answer is dropped.
    func onWorker(_ request: HTTPRequest, _ body: @escaping @Sendable () throws -> HTTPReply) -> HTTPReply {
        let deadline = DispatchTime.now() + configuration.storeWait
        return .later { [self] in
            let reply = await withCheckedContinuation { (continuation: CheckedContinuation<HTTPReply, Never>) in
                let answer = FirstAnswer(continuation)
                let waitedTooLong = HTTPReply.now(errorResponse(.storeWaitedTooLong(configuration.storeWait), for: request))
                workers.submit(deadline: deadline, {
                    do { answer.give(try body()) } catch {
                        answer.give(.now(self.errorResponse(APIError.from(error), for: request)))
                    }
                }, expired: { answer.give(waitedTooLong) })
                patience.asyncAfter(deadline: deadline) { answer.give(waitedTooLong) }
            }
            switch reply {
            case .now(let response): return response
            case .later(let work): return await work()
            }
        }
    }

    /// Runs a blocking write off the polling threads, one at a time; its error becomes the
    /// response. A write that could not begin within `storeWait` (queued behind writes that
    /// waited for another process's lock) is answered 503 without running; one begun is
    /// waited for (the store's busy timeout bounds it): its client must know whether it
    /// happened.
    func later(_ request: HTTPRequest, _ body: @escaping @Sendable () throws -> HTTPResponse) -> HTTPReply {
        let queued = DispatchTime.now()
        let patience = configuration.storeWait
        return .later { [self] in
            await withCheckedContinuation { continuation in
                writes.async {
                    if Double(DispatchTime.now().uptimeNanoseconds - queued.uptimeNanoseconds) / 1e9 > patience {
                        continuation.resume(returning: self.errorResponse(.storeWaitedTooLong(patience), for: request))
                        return
                    }
                    do { continuation.resume(returning: try body()) } catch {
                        continuation.resume(returning: self.errorResponse(APIError.from(error), for: request))
                    }
                }
            }
        }
    }
}
