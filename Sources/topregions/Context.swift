import Flickr
import Foundation
import Store
import TopRegionsKit

/// What every command has: its arguments, where output goes, and where the store is.
struct Context: Sendable {
    var arguments: Arguments
    let output: Output
    let environment: [String: String]

    /// `--store`, else `$TOPREGIONS_STORE`, else `$XDG_DATA_HOME/topregions/store.sqlite`
    /// (`~/.local/share/…` when unset).
    var storePath: String {
        if let store = arguments.store { return store }
        if let store = environment["TOPREGIONS_STORE"], !store.isEmpty { return store }
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return dataHome + "/topregions/store.sqlite"
    }

    /// `$XDG_CACHE_HOME/topregions/images` (`~/.cache/…` when unset).
    var imageCacheDirectory: URL {
        let cacheHome = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.cache"
        return URL(fileURLWithPath: cacheHome).appendingPathComponent("topregions/images")
    }

    /// What a command does to the store.
    enum StoreUse {
        /// Reads only: an existing store, opened read-only when it cannot be written.
        case read
        /// Writes an existing store.
        case write
        /// Writes, creating the store when missing (sync, daemon).
        case create
    }

    /// Opens the store for `use`. A read or write command never creates a store: one that
    /// is missing is "no store at PATH; run `topregions sync` first".
    func openGallery(_ use: StoreUse) throws -> Gallery {
        var configuration = StoreConfiguration()
        configuration.access = use == .create ? .readWriteCreate : .readWrite
        do {
            return try Gallery(path: storePath, configuration: configuration)
        } catch let error as StoreError where error.kind == .notFound {
            throw RuntimeError("no store at \(absolute(storePath)); run `topregions sync` first")
        } catch let error as StoreError where error.kind == .cannotOpen && use == .read {
            configuration.access = .readOnly
            return try Gallery(path: storePath, configuration: configuration)
        }
    }

    /// For a command that takes options only: refuses a stray word (a usage error, before
    /// the store is touched), then opens the store.
    mutating func openGalleryForCommandWithoutArguments(_ use: StoreUse) throws -> Gallery {
        _ = try arguments.positionals(0...0, "")
        return try openGallery(use)
    }

    /// A path as a person can find it again from anywhere.
    func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// The Flickr source from `--endpoint`, `--api-key`, `--format`, `--image-base`,
    /// `--rate-limit` (or their environment variables); the bundled SampleData when there is
    /// neither key nor endpoint.
    mutating func source(gallery: Gallery) throws -> (client: FlickrClient, name: String) {
        let endpoint = try arguments.option("endpoint") ?? environment["FLICKR_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 }
        let keyFile = try arguments.option("api-key-file") ?? environment["FLICKR_API_KEY_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        let apiKey = try arguments.option("api-key") ?? keyFile.map(Self.readAPIKey)
            ?? environment["FLICKR_API_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        let formatText = try arguments.option("format") ?? "json"
        guard let format = ResponseFormat(rawValue: formatText) else { throw UsageError("--format must be json or xml, not \"\(formatText)\"") }
        let imageBase = try arguments.option("image-base") ?? environment["FLICKR_IMAGE_BASE"].flatMap { $0.isEmpty ? nil : $0 }
        let rateText = try arguments.option("rate-limit") ?? "3600"
        let rateLimit: Int?
        if rateText == "none" { rateLimit = nil } else {
            guard let limit = Int(rateText), limit > 0 else { throw UsageError("--rate-limit must be a number of calls per hour or none, not \"\(rateText)\"") }
            rateLimit = limit
        }
        var configuration = FlickrConfiguration(format: format)
        configuration.apiKey = apiKey
        if let imageBase {
            guard let url = URL(string: imageBase), url.scheme != nil else { throw UsageError("--image-base is not a URL: \(imageBase)") }
            configuration.imageBase = url
        }
        let limiter = rateLimit.map { RateLimiter(limit: $0, window: 3600, burst: min(60, $0), ledger: gallery.callLedger) }
        guard endpoint != nil || apiKey != nil else {
            guard let directory = SampleDataLocation.find(environment: environment) else {
                throw RuntimeError("no API key or endpoint given, and the bundled SampleData was not found (set TOPREGIONS_SAMPLEDATA)")
            }
            // Files cost no API budget: no rate limit.
            return (FlickrClient(configuration: configuration, transport: try SampleDataTransport(directory: directory)),
                    "SampleData at \(directory.path)")
        }
        if let endpoint {
            guard let url = URL(string: endpoint), url.scheme != nil else { throw UsageError("--endpoint is not a URL: \(endpoint)") }
            configuration.endpoint = url
        }
        return (FlickrClient(configuration: configuration, rateLimiter: limiter), configuration.endpoint.absoluteString)
    }

    /// The key in a file (its first line, trimmed): kept out of the process list, where
    /// `--api-key` is visible to every user of the machine.
    static func readAPIKey(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"
            throw RuntimeError("cannot read the API key file \(path): \(reason)")
        }
        guard data.count <= 4096 else { throw RuntimeError("the API key file \(path) holds \(data.count) bytes; a key is one short line") }
        let key = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !key.isEmpty else { throw RuntimeError("the API key file \(path) is empty") }
        return key
    }

    mutating func syncOptions() throws -> SyncOptions {
        SyncOptions(pages: try arguments.integer("pages", default: 8, range: 1...40),
                    perPage: try arguments.integer("per-page", default: 500, range: 1...500))
    }
}

/// A failure at run time: one line on stderr, exit 1.
struct RuntimeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
