import Foundation

/// How the client talks to Flickr. The defaults are Flickr's and the course's.
public struct FlickrConfiguration: Sendable {
    /// Flickr's REST endpoint.
    public static let defaultEndpoint = URL(string: "https://api.flickr.com/services/rest/")!  // a literal, checked by tests
    /// Flickr's image host, where photo URLs are built.
    public static let defaultImageBase = URL(string: "https://live.staticflickr.com")!  // a literal, checked by tests

    /// The REST endpoint called; a test server's URL in tests.
    public var endpoint: URL = defaultEndpoint
    /// The API key; nil only for servers that need none (a test server, SampleData).
    public var apiKey: String?
    /// The response format asked for; both decode to the same models.
    public var format: ResponseFormat = .json
    /// Where photo images are fetched from.
    public var imageBase: URL = defaultImageBase
    /// Seconds a request may take, start to end, before it fails (and may be retried).
    public var requestTimeout: TimeInterval = 30
    /// Requests in flight at once.
    public var maximumConcurrentRequests: Int = 4
    /// A response body larger than this is refused.
    public var maximumResponseBytes: Int = 16 * 1024 * 1024
    /// An image larger than this is refused (Flickr's large size is a few hundred KB).
    public var maximumImageBytes: Int = 8 * 1024 * 1024
    /// How transient failures are retried.
    public var retry = RetryPolicy()

    /// A configuration with these values and the defaults for the rest.
    public init(endpoint: URL = defaultEndpoint, apiKey: String? = nil, format: ResponseFormat = .json,
                imageBase: URL = defaultImageBase) {
        self.endpoint = endpoint
        self.apiKey = apiKey
        self.format = format
        self.imageBase = imageBase
    }
}

/// Retries of transient failures: exponential backoff with full jitter, honouring a
/// server's `Retry-After`.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included.
    public var maximumAttempts: Int = 4
    /// Seconds the first retry waits at most; each later attempt doubles it.
    public var baseDelay: TimeInterval = 0.5
    /// Seconds any backoff waits at most (a `Retry-After` excepted).
    public var maximumDelay: TimeInterval = 30
    /// A `Retry-After` longer than this is not waited for: the call fails instead.
    public var maximumRetryAfter: TimeInterval = 120

    /// A policy with these values.
    public init(maximumAttempts: Int = 4, baseDelay: TimeInterval = 0.5, maximumDelay: TimeInterval = 30,
                maximumRetryAfter: TimeInterval = 120) {
        self.maximumAttempts = maximumAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// How long to wait before attempt `attempt + 1` (attempts count from 1), or nil when
    /// the error is not worth another attempt.
    public func delay<G: RandomNumberGenerator>(after error: FlickrError, attempt: Int, using generator: inout G) -> TimeInterval? {
        guard error.isTransient, attempt < maximumAttempts else { return nil }
        if let retryAfter = error.retryAfter {
            return retryAfter <= maximumRetryAfter ? retryAfter : nil
        }
        let ceiling = min(maximumDelay, baseDelay * pow(2, Double(attempt - 1)))
        return Double.random(in: 0...ceiling, using: &generator)
    }
}
