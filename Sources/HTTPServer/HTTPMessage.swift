import Foundation

/// A request as the server hands it to its handler: already parsed by libmicrohttpd.
public struct HTTPRequest: Sendable {
    /// The request method, as sent (`GET`, `POST`).
    public var method: String
    /// The path, percent-decoded, without the query.
    public var path: String
    /// The query's arguments in order, decoded; nil for an argument without `=`.
    public var arguments: [(name: String, value: String?)]
    /// Header names lowercased; a header sent twice keeps its first value.
    public var headers: [String: String]
    /// The request's body bytes; empty when it has none.
    public var body: [UInt8]
    /// The client's address, numeric ("127.0.0.1", "::1"); "" when unknown.
    public var clientAddress: String

    /// A request with these parts; what is not given is empty.
    public init(method: String, path: String, arguments: [(name: String, value: String?)] = [], headers: [String: String] = [:],
                body: [UInt8] = [], clientAddress: String = "") {
        self.method = method
        self.path = path
        self.arguments = arguments
        self.headers = headers
        self.body = body
        self.clientAddress = clientAddress
    }

    /// The value of the header `name` (any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A response: a status, headers, and a body of bytes or a stream of events.
public struct HTTPResponse: Sendable {
    /// What a response sends after its headers.
    public enum Body: Sendable {
        case bytes([UInt8])
        /// Sent as it is written, until the stream or the connection ends.
        case stream(EventStream)
    }

    /// The HTTP status of the answer.
    public var status: Int
    /// The response's headers, in order.
    public var headers: [(name: String, value: String)]
    /// The body: bytes, or a stream of events.
    public var body: Body

    /// A response with this status, headers and body (empty by default).
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The length of a bytes body; nil for a stream.
    var byteCount: Int? {
        if case .bytes(let bytes) = body { return bytes.count }
        return nil
    }
}

/// What a handler does with a request: answer now, on the server's polling thread (for
/// answers that take no longer than a read of the store), or later, from other work, while
/// the connection waits without holding the thread.
public enum HTTPReply: Sendable {
    case now(HTTPResponse)
    case later(@Sendable () async -> HTTPResponse)
}

/// Answers requests.
public protocol HTTPHandler: Sendable {
    /// The answer to a request that passed the server's limits.
    func reply(to request: HTTPRequest) -> HTTPReply
    /// The answer the server sends itself when a request breaks a limit (413 for a body
    /// too large), in the handler's format.
    func refusal(status: Int, message: String) -> HTTPResponse
}

extension HTTPHandler {
    /// Plain text, for handlers without a format of their own.
    public func refusal(status: Int, message: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: .bytes(Array((message + "\n").utf8)))
    }
}

/// What the server reports of each request once it is over (for the request log).
public struct HTTPRequestRecord: Sendable {
    /// The request method, as sent.
    public var method: String
    /// The path, percent-decoded, without the query.
    public var path: String
    /// The query's arguments in order, decoded; nil for an argument without `=`.
    public var arguments: [(name: String, value: String?)]
    /// The HTTP status of the answer.
    public var status: Int
    /// Body bytes sent (for a stream, what had been sent when it ended).
    public var bytes: Int
    /// Seconds from the request's start to its end.
    public var seconds: TimeInterval
    /// The client's address, numeric; "" when unknown.
    public var clientAddress: String
    /// Whether the request ended before its response was complete (the client went away,
    /// the server stopped).
    public var interrupted: Bool
}
