import Flickr
import Foundation
import TopRegionsKit

// What every command finds the same way: the store, the image cache, the sync source.
extension Invocation {
    /// `--store`, else `$TOPREGIONS_STORE`, else `$XDG_DATA_HOME/topregions/store.sqlite`
    /// (`~/.local/share/…` when unset or not absolute, as the XDG spec says).
    var storePath: String {
        if let store = storeArgument { return store }
        if let store = environment["TOPREGIONS_STORE"], !store.isEmpty { return store }
        return xdgDirectory("XDG_DATA_HOME", fallback: ".local/share") + "/topregions/store.sqlite"
    }

    /// `$XDG_CACHE_HOME/topregions/images` (`~/.cache/…` when unset or not absolute).
    var imageCacheDirectory: URL {
        URL(fileURLWithPath: xdgDirectory("XDG_CACHE_HOME", fallback: ".cache")).appendingPathComponent("topregions/images")
    }

    private func xdgDirectory(_ variable: String, fallback: String) -> String {
        if let value = environment[variable], value.hasPrefix("/") { return value }
        return (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + "/" + fallback
    }

    /// The positional argument at `index` as a Flickr photo id: 1 to 32 digits, else a usage
    /// error (before any store is opened).
    func photoID(at index: Int) throws -> String {
        let word = positional(index) ?? ""
        guard FlickrPhoto.isValidID(word) else {
            throw UsageError("ID must be a Flickr photo id (1 to 32 digits), not \"\(TerminalText.escape(String(word.prefix(40))))\"", command: command)
        }
        return word
    }

    /// The gallery at the store for a command that only reads it: a SQLite file, or a
    /// PostgreSQL database.
    func openReader() throws -> any GalleryReading {
        _ = try userName()  // a bad --user is a usage error, whether or not the store exists
        return try Gallery.openForReading(storePath, busyTimeout: try busyTimeout(), poolSize: try postgresPoolSize(default: 1))
    }

    /// The gallery at the store for a command that changes users' lists: a SQLite file, or
    /// a PostgreSQL database.
    func openWriter() throws -> any GalleryWriting {
        _ = try userName()
        return try Gallery.openForWriting(storePath, busyTimeout: try busyTimeout(), poolSize: try postgresPoolSize(default: 1))
    }

    /// The gallery at the store for a command that follows its lists: a SQLite file that
    /// other processes' commits can be seen in, or a PostgreSQL database.
    func openObserver() throws -> any GalleryObserving & GalleryWriting {
        _ = try userName()
        return try Gallery.openForObserving(storePath, busyTimeout: try busyTimeout(), poolSize: try postgresPoolSize(default: 1))
    }

    /// The gallery at the store for a command that reads, and keeps what it fetched when it
    /// can (a thumbnail): a SQLite file (read-only where it cannot be written), or a
    /// PostgreSQL database.
    func openReaderKeepingFetches() throws -> any GalleryWriting {
        Gallery.isPostgres(storePath) ? try openWriter() : try openGallery(.read)
    }

    /// The gallery at the store for `serve`: a SQLite file, or a PostgreSQL database;
    /// created (or upgraded) when the server is to sync it.
    func openServed(creating: Bool) throws -> any GalleryServing {
        _ = try userName()
        guard Gallery.isPostgres(storePath) else { return try openGallery(creating ? .create : .write) }
        let pool = try postgresPoolSize(default: 4)
        if creating { return try PostgresGallery.openForSyncing(location: storePath, busyTimeout: try busyTimeout(), poolSize: pool) }
        return try PostgresGallery(location: storePath, busyTimeout: try busyTimeout(), poolSize: pool)
    }

    /// The gallery at the store for a sync: a SQLite file (created when missing), or a
    /// PostgreSQL database (its store created or upgraded when needed).
    func openSyncer() throws -> any GallerySyncing {
        _ = try userName()
        if Gallery.isPostgres(storePath) {
            return try PostgresGallery.openForSyncing(location: storePath, busyTimeout: try busyTimeout(), poolSize: try postgresPoolSize(default: 1))
        }
        return try openGallery(.create)
    }

    func openGallery(_ use: Gallery.Use, at path: String? = nil) throws -> Gallery {
        _ = try userName()  // a bad --user is a usage error, whether or not the store exists
        return try Gallery.open(path: path ?? storePath, for: use, busyTimeout: try busyTimeout())
    }

    /// `--pool`, else `TOPREGIONS_POSTGRES_POOL`: how many connections to a PostgreSQL
    /// store a process shares among its threads (1 to 64); `fallback` when neither is given
    /// (1 for a command, 4 for `serve`).
    func postgresPoolSize(default fallback: Int) throws -> Int {
        let (text, name) = poolArgument.map { ($0, "--pool") } ?? (environment["TOPREGIONS_POSTGRES_POOL"] ?? "", "TOPREGIONS_POSTGRES_POOL")
        guard !text.isEmpty || poolArgument != nil else { return fallback }
        guard let size = Int(text), (1...64).contains(size) else {
            throw UsageError("\(name) must be a number of connections from 1 to 64, not \"\(TerminalText.escape(String(text.prefix(40))))\"", command: command)
        }
        return size
    }

    /// `TOPREGIONS_BUSY_TIMEOUT`: how long a command waits for another process's write to
    /// the store before it gives up with status 75.
    func busyTimeout() throws -> TimeInterval? {
        if let method = environment["TOPREGIONS_OBSERVATION"], !["", "automatic", "polling"].contains(method) {
            throw UsageError("TOPREGIONS_OBSERVATION must be automatic or polling, not \"\(TerminalText.escape(String(method.prefix(40))))\"", command: command)
        }
        guard let text = environment["TOPREGIONS_BUSY_TIMEOUT"], !text.isEmpty else { return nil }
        guard let seconds = Duration.parse(text), seconds >= 1, seconds <= 86_400 else {
            throw UsageError("TOPREGIONS_BUSY_TIMEOUT must be a duration from 1s to 1d, like 5s or 2m, not \"\(text)\"", command: command)
        }
        return seconds
    }

    /// The sync source from `--endpoint`, `--api-key-file`, `--api-key`, `--format`,
    /// `--image-base`, `--rate-limit`, `--rate-ledger` (or their environment variables).
    func source() throws -> GallerySource {
        let keyFile = value("api-key-file")
        let apiKey = try value("api-key") ?? keyFile.map(Self.readAPIKey)
        let format = try choice("format", default: "json", among: ["json", "xml"])
        let rateText = value("rate-limit") ?? "3600"
        let rateLimit: Int?
        if rateText == "none" { rateLimit = nil } else {
            guard let limit = Int(rateText), limit > 0, limit <= 1_000_000 else {
                throw UsageError("--rate-limit must be a number of calls per hour (1 to 1000000) or none, not \"\(rateText)\"", command: command)
            }
            rateLimit = limit
        }
        do {
            var source = try GallerySource.resolve(endpoint: value("endpoint"), apiKey: apiKey, format: format == "xml" ? .xml : .json,
                                                   imageBase: value("image-base"), rateLimit: rateLimit, environment: environment)
            if let ledger = value("rate-ledger") { try source.countCalls(in: ledger) }
            return source
        } catch let error as GalleryError where error.kind == .invalidArgument {
            throw UsageError(error.message, command: command)
        }
    }

    /// Where images come from: `--image-base` (or `FLICKR_IMAGE_BASE`) when given.
    func imageSource() throws -> ImageSource {
        guard let text = value("image-base") else { return ImageSource(environment: environment) }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
            throw UsageError("--image-base is not an http(s) URL: \(text)", command: command)
        }
        return ImageSource(imageBase: url, environment: environment)
    }

    /// The key in a file (its first line, trimmed): kept out of the process list, where
    /// `--api-key` is visible to every user of the machine.
    static func readAPIKey(_ path: String) throws -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw RuntimeError("cannot read the API key file \(path): \(FileProblem.describe(errno, reading: true))") }
        defer { close(descriptor) }
        var info = stat()
        let kind = fstat(descriptor, &info) == 0 ? info.st_mode & S_IFMT : 0
        // A file, or a pipe (`--api-key-file <(pass flickr)`, /dev/stdin): not a device.
        guard kind == S_IFREG || kind == S_IFIFO || kind == S_IFSOCK else {
            throw RuntimeError("cannot read the API key file \(path): it is not a file or a pipe")
        }
        // At most a little more than a key's line is read, whatever the file holds; a pipe
        // that says nothing for 10 s is given up on.
        let data = try readBounded(descriptor, limit: 4096, path: path)
        let key = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !key.isEmpty else { throw RuntimeError("the API key file \(path) is empty") }
        return key
    }

    private static func readBounded(_ descriptor: Int32, limit: Int, path: String) throws -> Data {
        var collected = Data()
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        let deadline = Date().addingTimeInterval(10)
        while collected.count <= limit {
            let count = read(descriptor, &buffer, buffer.count)
            if count == 0 { break }
            if count > 0 { collected.append(contentsOf: buffer[0..<count]); continue }
            guard errno == EAGAIN || errno == EINTR else {
                throw RuntimeError("cannot read the API key file \(path): \(FileProblem.describe(errno, reading: true))")
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw RuntimeError("the API key file \(path) is a pipe that sent nothing for 10 s") }
            var wait = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&wait, 1, Int32(left * 1000))
        }
        guard collected.count <= limit else { throw RuntimeError("the API key file \(path) holds more than \(limit) bytes; a key is one short line") }
        return collected
    }

    func syncOptions() throws -> SyncOptions {
        SyncOptions(pages: try integer("pages", default: 8, range: 1...40), perPage: try integer("per-page", default: 500, range: 1...500))
    }
}

/// A failure at run time: one line on stderr, exit 1.
struct RuntimeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The options of the commands that sync.
enum SourceOptions {
    static let all: [Option] = [
        .value("endpoint", "URL", "Flickr REST endpoint (none and no key: the bundled SampleData)", environment: "FLICKR_ENDPOINT"),
        .value("api-key-file", "FILE", "a file whose first line is the Flickr API key", environment: "FLICKR_API_KEY_FILE", completions: ["FILE"]),
        .value("api-key", "KEY", "the key itself; visible to every user in ps: prefer the file", environment: "FLICKR_API_KEY"),
        .value("format", "FORMAT", "response format: json or xml", default: "json", completions: ["json", "xml"]),
        .value("image-base", "URL", "base of photo image URLs", default: "https://live.staticflickr.com", environment: "FLICKR_IMAGE_BASE"),
        .value("pages", "N", "pages of recent photos to read at most, 1 to 40", default: "8"),
        .value("per-page", "N", "photos per page, at most 500", default: "500"),
        .value("rate-limit", "N", "API calls an hour, or none", default: "3600"),
        .value("rate-ledger", "URL", "a PostgreSQL database in which every process given it counts its calls: hosts sharing a key share its budget",
               environment: "TOPREGIONS_RATE_LEDGER"),
    ]
}
