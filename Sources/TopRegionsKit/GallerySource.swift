import Flickr
import Foundation
import PostgreSQL

/// The response format a source is read in (JSON or XML).
public typealias SourceFormat = Flickr.ResponseFormat

/// Where a sync reads photos from: Flickr's REST API (or a compatible server), or the
/// bundled SampleData when neither a key nor an endpoint is given. Built from options and
/// the environment (`resolve`), so that the CLI and a server need not know the client.
public struct GallerySource: Sendable {
    /// Where the photos come from.
    public enum Origin: Sendable, Equatable {
        /// The bundled SampleData files in this directory: no network, no rate limit.
        case sampleData(URL)
        /// A REST endpoint.
        case server(endpoint: URL)
    }

    /// Where the photos come from.
    public var origin: Origin
    /// The Flickr API key; nil for SampleData, or a server that needs none.
    public var apiKey: String?
    /// The response format to ask for.
    public var format: SourceFormat
    /// Given explicitly (`--image-base`, `FLICKR_IMAGE_BASE`), else nil.
    public var imageBase: URL?
    /// Calls an hour at most; nil for no limit (calls are still counted).
    public var rateLimit: Int?
    /// A PostgreSQL database that counts this source's calls for every process given it
    /// (`--rate-ledger`), so that they share the key's budget; nil to count them in the
    /// gallery's store.
    public var rateLedger: String?

    /// A name for messages and logs (the endpoint without its query, or the SampleData path).
    /// The source as logs and progress lines name it: an endpoint's password and the
    /// values of its credential-like query parameters are never shown.
    public var name: String {
        switch origin {
        case .sampleData(let directory): return "SampleData at \(directory.path)"
        case .server(let endpoint): return Self.displayed(endpoint)
        }
    }

    static func displayed(_ endpoint: URL) -> String {
        guard var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false) else { return "the configured endpoint" }
        if components.password != nil { components.password = "REDACTED" }
        components.queryItems = components.queryItems?.map { item in
            CredentialNames.looksSecret(item.name) && item.value != nil ? URLQueryItem(name: item.name, value: "REDACTED") : item
        }
        return components.string ?? "the configured endpoint"
    }

    /// The source the options name: an endpoint or a key means a server, else SampleData
    /// (found through `TOPREGIONS_SAMPLEDATA` or beside the program).
    public static func resolve(endpoint: String?, apiKey: String?, format: SourceFormat = .json, imageBase: String?,
                               rateLimit: Int? = 3600, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> GallerySource {
        var base: URL?
        if let imageBase {
            guard let url = URL(string: imageBase), url.scheme == "http" || url.scheme == "https" else {
                throw GalleryError(.invalidArgument, "the image base is not an http(s) URL: \(imageBase)")
            }
            base = url
        }
        guard endpoint != nil || apiKey != nil else {
            guard let directory = SampleDataLocation.find(environment: environment) else {
                throw GalleryError(.source(temporary: false), "no API key or endpoint given, and the bundled SampleData was not found",
                                   hint: "set TOPREGIONS_SAMPLEDATA, or give --api-key-file")
            }
            return GallerySource(origin: .sampleData(directory), apiKey: nil, format: format, imageBase: base, rateLimit: nil)
        }
        var url = FlickrConfiguration.defaultEndpoint
        if let endpoint {
            guard let parsed = URL(string: endpoint), parsed.scheme == "http" || parsed.scheme == "https" else {
                throw GalleryError(.invalidArgument, "the endpoint is not an http(s) URL: \(endpoint)")
            }
            url = parsed
        }
        return GallerySource(origin: .server(endpoint: url), apiKey: apiKey, format: format, imageBase: base, rateLimit: rateLimit)
    }

    /// The client for this source; calls are recorded in `ledger` (rate limit or not), and
    /// `onRateLimitWait` hears how long the limit holds a call back.
    func client(ledger: CallLedger, onRateLimitWait: (@Sendable (TimeInterval, Int) -> Void)? = nil) throws -> FlickrClient {
        var configuration = FlickrConfiguration(format: format)
        configuration.apiKey = apiKey
        if let imageBase { configuration.imageBase = imageBase }
        switch origin {
        case .sampleData(let directory):
            return FlickrClient(configuration: configuration, transport: try SampleDataTransport(directory: directory))
        case .server(let endpoint):
            configuration.endpoint = endpoint
            let limiter = RateLimiter(limit: rateLimit ?? RateLimiter.unlimited, window: 3600, burst: min(60, rateLimit ?? 60),
                                      ledger: ledger, onWait: onRateLimitWait)
            return FlickrClient(configuration: configuration, rateLimiter: limiter)
        }
    }

    /// Counts this source's calls in the PostgreSQL database at `location` (a
    /// `postgresql://` or `postgres://` URL), shared with every process given it.
    public mutating func countCalls(in location: String) throws {
        guard PostgresLocation.isURL(location) else {
            throw GalleryError(.invalidArgument, "the rate ledger must be a postgresql:// or postgres:// URL, not \(PostgresLocation.redacted(location))")
        }
        rateLedger = location
    }

    /// The ledger this source's calls are counted in: the shared database's when there is
    /// one (a server source only; SampleData has no budget), else `local`.
    func ledger(orElse local: CallLedger) throws -> CallLedger {
        guard let rateLedger, case .server(let endpoint) = origin else { return local }
        do {
            let shared = try PostgresCallLedger(location: rateLedger, budgetOf: apiKey ?? endpoint.absoluteString)
            return MirroredCallLedger(shared: shared, local: local)
        } catch let error as RateLedgerError {
            throw GalleryError(.source(temporary: error.isTemporary), "\(error)",
                               hint: "check --rate-ledger (or TOPREGIONS_RATE_LEDGER) and that the database accepts connections")
        }
    }

    /// The image base the photos of a sync from this source are fetched from later.
    var recordedImageBase: String {
        switch origin {
        case .sampleData: return imageBase?.absoluteString ?? Gallery.sampleDataImageBase
        case .server: return (imageBase ?? FlickrConfiguration.defaultImageBase).absoluteString
        }
    }
}

/// A ledger shared with other processes that also remembers this process's own calls in
/// the gallery's ledger, so that `status` still counts the calls this gallery's syncs made.
struct MirroredCallLedger: CallLedger {
    let shared: CallLedger
    let local: CallLedger

    func calls(since date: Date) async -> [Date] { await shared.calls(since: date) }

    func record(_ date: Date) async {
        await shared.record(date)
        await local.record(date)
    }

    func reserve(limit: Int, window: TimeInterval) async throws -> TimeInterval? {
        let wait = try await shared.reserve(limit: limit, window: window)
        if wait == nil { await local.record(Date()) }
        return wait
    }
}
