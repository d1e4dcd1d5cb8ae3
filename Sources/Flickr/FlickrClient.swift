import Foundation
import Synchronization

/// The Flickr REST client: typed calls, decoding in JSON or XML, retries with backoff,
/// a bound on requests in flight, the key's rate limit, and the key kept out of every
/// message.
public final class FlickrClient: Sendable {
    /// Where and how the client calls Flickr; fixed for the client's life.
    public let configuration: FlickrConfiguration
    private let transport: FlickrTransport
    private let rateLimiter: RateLimiter?
    private let inFlight: ConcurrencyLimit
    private let redaction: Redaction
    private let counters = Mutex(Counters())

    /// What the client has done, for a sync's report.
    public struct Counters: Sendable, Equatable {
        /// API calls sent (each retry is a call).
        public var calls = 0
        /// Retries after a transient failure (each also counted in `calls`).
        public var retries = 0
        /// Images downloaded (not API calls: the rate limit does not count them).
        public var imageDownloads = 0
    }

    /// A client. Without a transport it talks HTTP; without a rate limiter it does not
    /// limit (for tests and servers that need none).
    public init(configuration: FlickrConfiguration, transport: FlickrTransport = HTTPTransport(), rateLimiter: RateLimiter? = nil) {
        self.configuration = configuration
        self.transport = transport
        self.rateLimiter = rateLimiter
        self.inFlight = ConcurrencyLimit(configuration.maximumConcurrentRequests)
        self.redaction = Redaction(secret: configuration.apiKey)
    }

    /// What the client has done so far; safe to read from any thread.
    public var statistics: Counters { counters.withLock { $0 } }

    // MARK: Calls

    /// A page of recent geotagged photos, newest first.
    public func recentGeotaggedPhotos(page: Int = 1, perPage: Int = 100, minUploadDate: Date? = nil) async throws -> PhotoPage {
        let request = FlickrRequest.recentGeotaggedPhotos(page: page, perPage: perPage, minUploadDate: minUploadDate)
        let format = configuration.format
        return try await call(request) { try FlickrResponseDecoder.photoPage($0, format: format, page: page) }
    }

    /// The hierarchy of a place. A place Flickr does not know throws an error whose
    /// `isPermanentForPlace` is true.
    public func placeInfo(_ placeID: String) async throws -> PlaceInfo {
        let format = configuration.format
        return try await call(.placeInfo(placeID: placeID)) { try FlickrResponseDecoder.placeInfo($0, format: format) }
    }

    /// The bytes of a photo's image (not an API call: it does not count against the key).
    public func image(of photo: FlickrPhoto, size: PhotoSize) async throws -> Data {
        try await imageData(at: try photo.requireImageURL(size, base: configuration.imageBase))
    }

    /// The bytes of an image, checked: a response that is not a whole JPEG, decoded to its
    /// last scanline, throws `notAnImage`, and one larger than `maximumImageBytes`
    /// `responseTooLarge`, naming the URL. Decoding is a few milliseconds of CPU for a
    /// 1024-pixel image; it is done before the bytes are kept anywhere.
    public func imageData(at url: URL) async throws -> Data {
        let response = try await send(url, method: nil, page: nil, countsAsCall: false, maximumBytes: configuration.maximumImageBytes)
        counters.withLock { $0.imageDownloads += 1 }
        try ImageCheck.validate(response, url: redaction.url(url))
        return response.body
    }

    // MARK: Sending

    private func call<T>(_ request: FlickrRequest, decode: (Data) throws -> T) async throws -> T {
        try request.validate()
        let url = try request.url(endpoint: configuration.endpoint, apiKey: configuration.apiKey, format: configuration.format)
        var generator = SystemRandomNumberGenerator()
        var attempt = 1
        while true {
            do {
                let response = try await send(url, method: request.method, page: request.page, countsAsCall: true, maximumBytes: nil)
                return try decode(response.body)
            } catch let error as FlickrError {
                let error = redaction.error(error)
                guard let delay = configuration.retry.delay(after: error, attempt: attempt, using: &generator) else { throw error }
                counters.withLock { $0.retries += 1 }
                try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
                attempt += 1
            }
        }
    }

    /// One GET, inside the in-flight bound and (for API calls) the rate limit; a status
    /// other than 200 is an error carrying `Retry-After`.
    private func send(_ url: URL, method: String?, page: Int?, countsAsCall: Bool, maximumBytes: Int? = nil) async throws -> TransportResponse {
        let transport = self.transport
        let timeout = configuration.requestTimeout
        let maximumBytes = maximumBytes ?? configuration.maximumResponseBytes
        let rateLimiter = countsAsCall ? self.rateLimiter : nil
        let response: TransportResponse
        do {
            response = try await inFlight.run {
                try await rateLimiter?.acquire()
                // Counted once sent, whatever comes back: a transfer that fails is a call too.
                if countsAsCall { counters.withLock { $0.calls += 1 } }
                return try await transport.get(url, timeout: timeout, maximumBytes: maximumBytes)
            }
        } catch var error as FlickrError {
            error.method = error.method ?? method
            error.page = error.page ?? page
            // An image has no method to name it by: name its URL.
            if method == nil { error.message = "\(redaction.url(url)): \(error.message)" }
            throw redaction.error(error)
        }
        guard response.status == 200 else {
            let what = method == nil ? "HTTP \(response.status) for \(redaction.url(url))" : "HTTP \(response.status)"
            throw FlickrError(.http(status: response.status), method: method, page: page, what,
                              retryAfter: Self.retryAfter(response.headers["retry-after"]))
        }
        return response
    }

    /// `Retry-After` in seconds, from either of its forms (seconds, or an HTTP date).
    static func retryAfter(_ value: String?) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Double(value) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSinceNow)
    }
}
