import Foundation

/// A response as a transport hands it to the client.
public struct TransportResponse: Sendable {
    /// The HTTP status code; anything but 200 the client turns into an error.
    public var status: Int
    /// Header fields, names lowercased.
    public var headers: [String: String]
    /// The whole response body.
    public var body: Data

    /// A response with these values; header names are lowercased.
    public init(status: Int, headers: [String: String] = [:], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }
}

/// How requests reach Flickr: over HTTP, or answered from SampleData files.
public protocol FlickrTransport: Sendable {
    /// GETs `url`. Throws `FlickrError` of kind `timeout`, `transport` or `responseTooLarge`;
    /// any HTTP status is a response, not an error.
    func get(_ url: URL, timeout: TimeInterval, maximumBytes: Int) async throws -> TransportResponse
}
