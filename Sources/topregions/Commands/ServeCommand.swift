import Foundation
import GalleryAPI
import HTTPServer
import TopRegionsKit
#if canImport(Glibc)
import Glibc
#endif

extension Commands {
    static let serve = Command(
        name: "serve", abstract: "Serve the gallery over HTTP: the JSON API, images, and every list as a live change stream.",
        options: [.value("listen", "ADDRESS:PORT", "where to listen; port 0 picks a free one; not loopback only when asked", default: "127.0.0.1:8080"),
                  .value("sync-interval", "DURATION", "also run a sync pass now and every interval, as the daemon does"),
                  .flag("private", "catalogue reads need a user's token too"),
                  .value("cors-origin", "ORIGIN", "the origin browsers may call the API from (https://host), or *; default: none"),
                  .value("allowed-host", "NAMES", "host names requests may give, comma-separated (a proxy's public name); default on loopback: localhost and loopback addresses; elsewhere: any"),
                  .value("max-connections", "N", "connections open at once", default: "4096"),
                  .value("max-streams-per-address", "N", "change streams open at once from one client address", default: "64"),
                  .value("max-connections-per-address", "N", "connections open at once from one client address", default: "256"),
                  .value("request-timeout", "DURATION", "time a client has to send a request's line and headers", default: "10s"),
                  .value("workers", "N", "threads that answer requests needing the store (default: 2 per core)"),
                  .value("store-wait", "DURATION", "how long a request waits for the store before it is answered 503 with Retry-After", default: "2s")]
            + SourceOptions.all,
        examples: [Example(arguments: ["serve", "--listen", "127.0.0.1:0"], explanation: "serve on a free loopback port (printed); SIGTERM stops it")],
        discussion: "Prints the address it listens on, then one log line per request on stderr. SIGTERM or SIGINT: no new connections, requests in flight finish, change streams end, exit 0 within 5 s. Users and their API tokens: topregions users. The API: docs/openapi.yaml.",
        loneWordOption: "listen"
    ) { invocation in
        let settings = try ServeSettings(invocation)
        raiseOpenFileLimit()
        let gallery = try invocation.openServed(creating: settings.syncInterval != nil)
        defer { gallery.close() }
        let log = DaemonLog(json: invocation.output.json)
        let source = try invocation.source()
        let options = try invocation.syncOptions()
        let runner = SyncRunner(gallery: gallery) { gallery, lock in
            _ = await runPass(gallery, source: source, options: options, log: log, holding: lock)
        }
        var configuration = APIConfiguration(imageCacheDirectory: invocation.imageCacheDirectory)
        configuration.isPrivate = invocation.flag("private")
        configuration.corsOrigin = settings.corsOrigin
        configuration.allowedHosts = settings.allowedHosts
        configuration.answersLoopbackAddresses = settings.address.isLoopback
        configuration.imageSource = try invocation.imageSource()
        configuration.streamsPerAddress = settings.streamsPerAddress
        configuration.workers = settings.workers
        configuration.storeWait = settings.storeWait
        let api = GalleryAPI(gallery: gallery, configuration: configuration, sync: runner)
        let stop = StopSignal()
        let signals = SignalEvents { event in
            if event == .stop { stop.fire() } else { runner.start() }
        }
        let server: HTTPServer
        let requestLog = RequestLog(log)
        defer { requestLog.close() }
        do {
            server = try HTTPServer(address: settings.address, limits: settings.limits, handler: api) { record in requestLog.record(record) }
        } catch let error as HTTPServerError {
            throw RuntimeError("cannot serve on \(settings.address): \(error)")
        }
        let url = "http://\(settings.address.hostForURL):\(server.port)"
        if invocation.output.json { try invocation.output.emit(["listening": url]) } else { invocation.output.line("listening on \(url)") }
        if !settings.address.isLoopback {
            log("warning", "public-address", [("listen", "\(settings.address)"), ("note", "anyone who can reach this address can read the catalogue")])
        }
        log("info", "start", [("pid", getpid()), ("listen", url), ("store", Gallery.displayed(invocation.storePath))])
        let passes = settings.syncInterval.map { interval in
            Task {
                while !Task.isCancelled {
                    runner.start()
                    try? await Task.sleep(nanoseconds: UInt64(interval * Double.random(in: 0.9...1.1) * 1e9))
                }
            }
        }
        await stop.wait()
        log("info", "stopping", [("open_streams", server.openStreams), ("requests_in_flight", server.activeRequests)])
        passes?.cancel()
        runner.cancel()
        api.close()
        server.stop(drainingFor: 3)
        // A cancelled pass waiting for another process's lock ends now, not at the end of
        // the store's busy timeout.
        gallery.interruptWaits()
        await runner.stop()
        withExtendedLifetime(signals) {}
        requestLog.close()  // every request's line before the last one
        log("info", "stop", [("pid", getpid())])
        return 0
    }

    /// As many open files as the hard limit allows: each connection is one.
    static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// `serve`'s options, checked before anything starts.
struct ServeSettings {
    var address: ListenAddress
    var syncInterval: TimeInterval?
    var corsOrigin: String?
    var allowedHosts: Set<String>?
    var streamsPerAddress: Int
    var workers: Int
    var storeWait: TimeInterval
    var limits = HTTPServerLimits()

    init(_ invocation: Invocation) throws {
        switch ListenAddress.parse(invocation.value("listen") ?? "127.0.0.1:8080") {
        case .success(let address): self.address = address
        case .failure(let error): throw UsageError("--listen: \(error)", command: invocation.command)
        }
        syncInterval = try invocation.value("sync-interval").map { _ in
            try invocation.duration("sync-interval", default: 20 * 60, range: 0.01...(30 * 86_400))
        }
        if let origin = invocation.value("cors-origin") {
            guard origin == "*" || Self.isOrigin(origin) else {
                throw UsageError("--cors-origin takes an origin such as https://gallery.example (scheme, host, optional port), or *", command: invocation.command)
            }
            corsOrigin = origin
        }
        allowedHosts = try Self.allowedHosts(invocation, address: address)
        streamsPerAddress = try invocation.integer("max-streams-per-address", default: 64, range: 1...1_000_000)
        limits.connections = try invocation.integer("max-connections", default: 4_096, range: 1...1_000_000)
        limits.connectionsPerAddress = try invocation.integer("max-connections-per-address", default: 256, range: 1...1_000_000)
        limits.requestSeconds = try invocation.duration("request-timeout", default: 10, range: 0.1...3_600)
        workers = try invocation.integer("workers", default: StoreWorkers.defaultCount, range: 1...1_024)
        storeWait = try invocation.duration("store-wait", default: 2, range: 0.05...600)
    }

    /// `--allowed-host`'s names and the loopback ones; nil (any) when the server listens
    /// beyond loopback and no names are given.
    static func allowedHosts(_ invocation: Invocation, address: ListenAddress) throws -> Set<String>? {
        let given = invocation.value("allowed-host").map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }
        if let given, given.isEmpty || !given.allSatisfy(isHostName) {
            throw UsageError("--allowed-host takes host names separated by commas (gallery.example,www.gallery.example), without ports", command: invocation.command)
        }
        guard given != nil || address.isLoopback else { return nil }
        let loopback: Set<String> = ["localhost", "127.0.0.1", "::1", address.host.lowercased()]
        return loopback.union(given ?? [])
    }

    /// A DNS name or an IP address (IPv6 without brackets), without a port.
    static func isHostName(_ name: String) -> Bool {
        let dns = name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
        let ipv6 = name.contains(":") && name.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        return !name.isEmpty && (dns || ipv6)
    }

    /// `scheme://host[:port]`, nothing after.
    static func isOrigin(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else { return false }
        return url.path.isEmpty && url.query == nil && url.fragment == nil && url.user == nil
    }
}

/// Fired once, by a signal; awaited by the command.
///
/// `@unchecked Sendable`: `fired` and `waiters` are guarded by `lock`.
final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func fire() {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            fired = true
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = lock.withLock { () -> Bool in
                if fired { return true }
                waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

extension DaemonLog {
    /// One line per request: method, path (query values of secret-looking names hidden,
    /// token-shaped text anywhere hidden: `LogText.hidingSecrets`), status, bytes,
    /// milliseconds, client; every value escaped.
    func request(_ record: HTTPRequestRecord) {
        let query = record.arguments.map { argument in
            argument.name + (argument.value.map { "=" + (CredentialNames.looksSecret(argument.name) ? "REDACTED" : $0) } ?? "")
        }.joined(separator: "&")
        let target = LogText.hidingSecrets(record.path + (query.isEmpty ? "" : "?" + query))
        let milliseconds = Self.hundredths(record.seconds * 1000)
        guard json else {
            // The common line, written without the generic fields' dynamic casts: it is
            // one per request.
            var line = "ts=\(Date().iso8601) level=info event=request method=\(TerminalText.logValue(LogText.hidingSecrets(record.method)))"
            line += " path=\(TerminalText.logValue(target)) status=\(record.status) bytes=\(record.bytes) ms=\(milliseconds)"
            line += " client=\(TerminalText.logValue(record.clientAddress))" + (record.interrupted ? " interrupted=true" : "") + "\n"
            StandardStreams.err(Data(line.utf8))
            return
        }
        self("info", "request", [("method", LogText.hidingSecrets(record.method)), ("path", target),
                                 ("status", record.status), ("bytes", record.bytes),
                                 ("ms", milliseconds), ("client", record.clientAddress)]
             + (record.interrupted ? [("interrupted", "true")] : []))
    }

    /// A duration in milliseconds to two decimals (`0.41`), as `String(format: "%.2f")`
    /// writes it, without its cost.
    static func hundredths(_ value: Double) -> String {
        guard value.isFinite, value >= 0, value < 1e12 else { return String(format: "%.2f", value) }
        let total = Int64((value * 100).rounded())
        let fraction = total % 100
        return "\(total / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
