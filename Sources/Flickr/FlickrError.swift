/// Everything that can go wrong talking to Flickr, with enough context to act on: which
/// method, which page, and what was wrong. Messages never contain the API key.
public struct FlickrError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What went wrong, in a form code can branch on.
    public enum Kind: Sendable, Equatable {
        /// Flickr answered `stat="fail"` with this code.
        case api(code: Int)
        /// The HTTP status was not 200.
        case http(status: Int)
        /// The request timed out.
        case timeout
        /// The connection failed (refused, reset, DNS, TLS…).
        case transport
        /// The body is not a well-formed response of the method (not JSON/XML, truncated,
        /// missing `photos`/`place`, a DTD…).
        case malformedResponse
        /// The body was larger than the configured limit.
        case responseTooLarge
        /// A photo URL cannot be built: a piece is missing.
        case missingURLPiece
        /// The request itself is invalid (page size out of range, bad configuration).
        case invalidRequest
        /// The file transport has no such response in its SampleData.
        case notInSampleData
        /// An image URL answered with something that is not an image (or too large).
        case notAnImage
    }

    /// What went wrong.
    public var kind: Kind
    /// The Flickr method, when the error belongs to one.
    public var method: String?
    /// The page, for `flickr.photos.search`.
    public var page: Int?
    /// What went wrong, in words, for a person; never holds the API key.
    public var message: String
    /// Seconds the server asked us to wait (HTTP `Retry-After`).
    public var retryAfter: Double?

    /// An error with these values.
    public init(_ kind: Kind, method: String? = nil, page: Int? = nil, _ message: String, retryAfter: Double? = nil) {
        self.kind = kind
        self.method = method
        self.page = page
        self.message = message
        self.retryAfter = retryAfter
    }

    /// The method and page, then the message ("flickr.photos.search page 2: …").
    public var description: String {
        var context = method ?? "Flickr"
        if let page { context += " page \(page)" }
        return "\(context): \(message)"
    }

    /// Worth retrying later: timeouts, connection failures, HTTP 429 and 5xx, and Flickr's
    /// "service currently unavailable" (105), "search API not available" (10) and "API
    /// service not available" (0).
    public var isTransient: Bool {
        switch kind {
        case .timeout, .transport: return true
        case .http(let status): return status == 429 || (500...599).contains(status)
        case .api(let code): return [0, 10, 105].contains(code)
        default: return false
        }
    }

    /// For `flickr.places.getInfo`: the place is not valid (2) or not found (3), which will
    /// not change; remember it rather than ask again on every sync.
    public var isPermanentForPlace: Bool {
        guard case .api(let code) = kind, method == FlickrMethod.placeInfo else { return false }
        return code == 2 || code == 3
    }
}
