import CBenchStreams
import Foundation
import Glibc
import SampleDataSupport
import Store
import TopRegionsKit

/// http.regions: `GET /api/regions` under load (wrk) against nginx serving the same bytes
/// as a static file. http.image: a cached image the same way. http.fanout: 10,000
/// change-stream subscribers, one commit from another process, the time until every
/// subscriber has the batch.
enum HTTPBenchmarks {
    static let scenarios = [
        Scenario(name: "http.regions", summary: "GET /api/regions, 64 connections with wrk, vs nginx serving the same bytes") { quick in
            try regions(seconds: quick ? 2 : 10)
        },
        Scenario(name: "http.image", summary: "GET /api/photos/{id}/image?size=z (cached), 64 connections with wrk, vs nginx serving the same file") { quick in
            try image(seconds: quick ? 2 : 10)
        },
        Scenario(name: "http.fanout", summary: "10,000 SSE subscribers to the top regions; one commit moves regions; time until all have it") { quick in
            try fanout(subscribers: quick ? 500 : 10_000)
        },
        Scenario(name: "web.page", summary: "the page in headless Chromium: first paint of / with 50 regions; commit → DOM updated") { quick in
            try page(quick: quick)
        },
    ]

    // MARK: web.firstPaint, web.liveUpdate

    /// Runs Tests/Browser/measure_page.py (Selenium, Debian's Chromium) against the tool
    /// built beside the benchmarks, and reads its figures.
    static func page(quick: Bool) throws -> [Figure] {
        let python = Repository.root.appendingPathComponent(".build/venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw BenchError("\(python) is missing: scripts/python-tools (and scripts/install-dependencies --bench for Chromium)")
        }
        let fixture = ToolBinary.url.deletingLastPathComponent().appendingPathComponent("gallery-fixture").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Repository.root.appendingPathComponent("Tests/Browser/measure_page.py").path, try ToolBinary.path(), fixture]
            + (quick ? ["--quick"] : [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("measure_page.py failed (status \(process.terminationStatus))") }
        return try text.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let scenario = object["scenario"] as? String, let seconds = object["seconds"] as? Double else {
                throw BenchError("measure_page.py printed \(line)")
            }
            let extra = object.filter { !["scenario", "n", "seconds"].contains($0.key) }
            return Figure(scenario: scenario, n: object["n"] as? Int ?? 0, seconds: seconds, extra: extra)
        }
    }

    // MARK: http.regions

    static func regions(seconds: Int) throws -> [Figure] {
        let wrk = try Programs.find("wrk"), nginx = try Programs.find("nginx", in: ["/usr/sbin"])
        return try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("http.sqlite").path
            try ProductBenchmarks.buildStore(path: path, photos: 100_000, regions: 2_000, photographers: 20_000)
            let server = try ServedTool(store: path, arguments: [])
            defer { server.stop() }
            let url = "http://127.0.0.1:\(server.port)/api/regions"
            let body = try fetch(url)
            let rows = try JSONSerialization.jsonObject(with: body) as? [Any]
            guard rows?.count == Gallery.topRegionsLimit else { throw BenchError("GET /api/regions gave \(rows?.count ?? 0) rows, not 50") }
            let static_ = try StaticServer(nginx: nginx, directory: directory, file: "regions.json", bytes: body)
            defer { static_.stop() }
            guard try fetch(static_.url) == body else { throw BenchError("nginx serves other bytes") }
            let ours = try Wrk.run(wrk, url: url, seconds: seconds)
            let theirs = try Wrk.run(wrk, url: static_.url, seconds: seconds)
            return [Figure(scenario: "http.regions", n: Gallery.topRegionsLimit, seconds: 1 / ours.requestsPerSecond,
                           baseline: "nginx serving the same bytes as a static file", baselineSeconds: 1 / theirs.requestsPerSecond,
                           extra: ["requestsPerSecond": ours.requestsPerSecond, "nginxRequestsPerSecond": theirs.requestsPerSecond,
                                   "p99ms": ours.p99Milliseconds, "nginxP99ms": theirs.p99Milliseconds, "connections": 64,
                                   "durationSeconds": seconds, "bytes": body.count, "errors": ours.errors])]
        }
    }

    // MARK: http.image

    /// A store synced from SampleData, served with its own image cache; one photo's 640-pixel
    /// image asked for once (drawn, checked and cached), then under load, against nginx
    /// serving the bytes the first answer gave.
    static func image(seconds: Int) throws -> [Figure] {
        let wrk = try Programs.find("wrk"), nginx = try Programs.find("nginx", in: ["/usr/sbin"])
        return try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("image.sqlite").path
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_CACHE_HOME"] = directory.path
            environment["TOPREGIONS_SAMPLEDATA"] = Repository.sampleData.path
            for name in ["FLICKR_API_KEY", "FLICKR_API_KEY_FILE", "FLICKR_ENDPOINT", "FLICKR_IMAGE_BASE"] { environment[name] = nil }
            try runTool(["--store", path, "sync", "--pages", "1"], environment: environment)
            let server = try ServedTool(store: path, arguments: [], environment: environment)
            defer { server.stop() }
            let base = "http://127.0.0.1:\(server.port)"
            let regions = try JSONSerialization.jsonObject(with: try fetch("\(base)/api/regions")) as? [[String: Any]]
            guard let region = regions?.first?["id"] as? String,
                  let photos = try JSONSerialization.jsonObject(with: try fetch("\(base)/api/regions/\(region)/photos")) as? [[String: Any]],
                  let photo = photos.first?["id"] as? String else { throw BenchError("the synced store has no photo to ask for") }
            let url = "\(base)/api/photos/\(photo)/image?size=z"
            let body = try fetch(url)
            guard body.starts(with: [0xFF, 0xD8, 0xFF]) else { throw BenchError("GET \(url) gave no JPEG") }
            let static_ = try StaticServer(nginx: nginx, directory: directory, file: "image.jpg", bytes: body)
            defer { static_.stop() }
            guard try fetch(static_.url) == body else { throw BenchError("nginx serves other bytes") }
            let ours = try Wrk.run(wrk, url: url, seconds: seconds)
            let theirs = try Wrk.run(wrk, url: static_.url, seconds: seconds)
            return [Figure(scenario: "http.image", n: body.count, seconds: 1 / ours.requestsPerSecond,
                           baseline: "nginx serving the same bytes as a static file", baselineSeconds: 1 / theirs.requestsPerSecond,
                           extra: ["requestsPerSecond": ours.requestsPerSecond, "nginxRequestsPerSecond": theirs.requestsPerSecond,
                                   "p99ms": ours.p99Milliseconds, "nginxP99ms": theirs.p99Milliseconds, "connections": 64,
                                   "durationSeconds": seconds, "bytes": body.count, "size": "z", "errors": ours.errors])]
        }
    }

    /// Runs the tool to its end; throws with its standard error when it fails.
    static func runTool(_ arguments: [String], environment: [String: String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ToolBinary.path())
        process.arguments = arguments
        process.environment = environment
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("topregions \(arguments.joined(separator: " ")) failed: \(text)") }
    }

    // MARK: http.fanout

    static func fanout(subscribers: Int) throws -> [Figure] {
        raiseOpenFileLimit()
        return try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("fanout.sqlite").path
            try ProductBenchmarks.buildStore(path: path, photos: 100_000, regions: 2_000, photographers: 20_000)
            let limit = "\(subscribers + 100)"
            let server = try ServedTool(store: path, arguments: ["--max-connections", limit, "--max-connections-per-address", limit,
                                                                 "--max-streams-per-address", limit])
            defer { server.stop() }
            let url = "http://127.0.0.1:\(server.port)/api/regions/changes"
            guard let streams = tr_streams_start(url, Int32(subscribers)) else { throw BenchError("libcurl cannot start") }
            defer { tr_streams_close(streams) }
            tr_streams_watch(streams, "event: snapshot")
            try waitFor("every subscriber's snapshot", timeout: 180) { tr_streams_seen(streams) == subscribers || tr_streams_ended(streams) > 0 }
            guard tr_streams_ended(streams) == 0 else {
                throw BenchError("\(tr_streams_ended(streams)) streams ended before the commit; the first: \(firstEnd(streams)); the server's log ends: \(server.logTail())")
            }
            let idleRSS = try ResidentMemory(process: "\(server.pid)").total

            // Another process (this one) commits a change that moves regions: the 40th
            // region gains photographers enough to become the first.
            tr_streams_watch(streams, "event: batch")
            let store = try Store(path: path, schema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator)
            defer { store.close() }
            let committed = tr_streams_now()
            try store.write { transaction in
                try transaction.execute("""
                    UPDATE Region SET photographerCount = (SELECT max(photographerCount) + 1 FROM Region)
                    WHERE id = (SELECT id FROM Region ORDER BY photographerCount DESC, name, placeID LIMIT 1 OFFSET 39)
                    """)
            }
            try waitFor("every subscriber's batch", timeout: 60) { tr_streams_seen(streams) == subscribers }
            var times = [Double](repeating: -1, count: subscribers)
            tr_streams_times(streams, &times)
            let latencies = times.map { ($0 - committed) * 1000 }.sorted()
            let rss = try ResidentMemory(process: "\(server.pid)").total
            try checkTables(streams, subscribers: subscribers, against: "http://127.0.0.1:\(server.port)/api/regions")
            let p50 = latencies[latencies.count / 2], p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
            return [Figure(scenario: "http.fanout", n: subscribers, seconds: p99 / 1000,
                           extra: ["p50ms": p50, "p99ms": p99, "maxms": latencies.last ?? 0, "serverRssMB": rss, "serverIdleRssMB": idleRSS,
                                   "tablesEqual": true])]
        }
    }

    /// Which stream ended first, and why.
    static func firstEnd(_ streams: OpaquePointer) -> String {
        var reason = [CChar](repeating: 0, count: 256)
        let index = tr_streams_first_end(streams, &reason, reason.count)
        return index < 0 ? "none" : "#\(index), \(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))"
    }

    /// Every subscriber received the same events; the first's snapshot with its batch
    /// applied equals the list fetched afterwards (ranks aside: a row that only shifts is
    /// not resent).
    static func checkTables(_ streams: OpaquePointer, subscribers: Int, against url: String) throws {
        func events(_ index: Int) -> String {
            var length = 0
            guard let body = tr_streams_body(streams, Int32(index), &length) else { return "" }
            defer { free(body) }
            let text = String(decoding: UnsafeRawBufferPointer(start: body, count: length), as: UTF8.self)
            return text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix(":") }.joined(separator: "\n")
        }
        let first = events(0)
        for index in 1..<subscribers where events(index) != first {
            throw BenchError("subscriber \(index) received other events than subscriber 0")
        }
        let data = first.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { Data($0.dropFirst(6).utf8) }
        guard data.count == 2 else { throw BenchError("expected a snapshot and one batch, got \(data.count) events") }
        var table = try SimpleTable(snapshot: data[0])
        try table.apply(batch: data[1])
        let fetched = try JSONSerialization.jsonObject(with: try fetch(url)) as? [[String: Any]] ?? []
        let wanted = fetched.map { ($0["id"] as? String) ?? "" }
        guard table.ids == wanted else { throw BenchError("the replayed table is not the list fetched afterwards") }
    }

    /// The body of a GET that answers 200.
    static func fetch(_ url: String) throws -> Data {
        var length = 0, status = 0
        guard let body = tr_fetch(url, &length, &status) else { throw BenchError("GET \(url): status \(status)") }
        defer { free(body) }
        return Data(bytes: body, count: length)
    }

    static func waitFor(_ what: String, timeout: TimeInterval, _ done: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !done() {
            guard Date() < deadline else { throw BenchError("timed out waiting for \(what)") }
            usleep(1_000)
        }
    }

    /// As many open files as allowed, for this process and the server it starts (which
    /// inherits them): 100,000 where the hard limit may be raised (as root), else the hard
    /// limit.
    static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        var raised = rlimit(rlim_cur: max(limit.rlim_max, 100_000), rlim_max: max(limit.rlim_max, 100_000))
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// A one-section table of region ids, kept by applying batches with UIKit's rules.
struct SimpleTable {
    var ids: [String]

    init(snapshot: Data) throws {
        let object = try JSONSerialization.jsonObject(with: snapshot) as? [String: Any]
        let sections = object?["sections"] as? [[String: Any]] ?? []
        ids = sections.flatMap { ($0["rows"] as? [[String: Any]] ?? []).map { ($0["id"] as? String) ?? "" } }
    }

    mutating func apply(batch: Data) throws {
        guard let object = try JSONSerialization.jsonObject(with: batch) as? [String: Any] else { throw BenchError("a batch is not JSON") }
        func paths(_ key: String) -> [[Any]] { object[key] as? [[Any]] ?? [] }
        func row(_ value: Any) -> String { ((value as? [String: Any])?["id"] as? String) ?? "" }
        var removed = Set(paths("deletes").compactMap { $0[1] as? Int })
        removed.formUnion(paths("moves").compactMap { $0[1] as? Int })
        removed.formUnion(paths("updates").compactMap { $0[1] as? Int })
        var kept = ids.enumerated().filter { !removed.contains($0.offset) }.map(\.element)
        var arrivals = paths("inserts").compactMap { path in (path[1] as? Int).map { ($0, row(path[2])) } }
        arrivals += (paths("moves") + paths("updates")).compactMap { path in (path[3] as? Int).map { ($0, row(path[4])) } }
        for (index, id) in arrivals.sorted(by: { $0.0 < $1.0 }) {
            guard index <= kept.count else { throw BenchError("an insert at \(index) is past the end") }
            kept.insert(id, at: index)
        }
        ids = kept
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Programs the HTTP benchmarks run, found on PATH or where Debian puts them.
enum Programs {
    static func find(_ name: String, in extra: [String] = []) throws -> String {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + extra + ["/usr/bin", "/usr/sbin"]
        if let found = folders.map({ "\($0)/\(name)" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        throw BenchError("\(name) is not installed: scripts/install-dependencies --bench (apt-get install wrk nginx-light)")
    }
}

/// `topregions serve` on a free loopback port, stopped with SIGTERM.
final class ServedTool {
    let process = Process()
    let port: Int
    let logPath: String
    var pid: Int32 { process.processIdentifier }

    /// The server log's last lines, control characters shown escaped.
    func logTail(lines: Int = 5) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).map { $0.unicodeScalars.map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined() }.joined(separator: " | ")
    }

    /// Serves `store`; with `environment`, in that environment instead of the benchmark's.
    init(store: String, arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: try ToolBinary.path())
        process.arguments = ["--store", store, "serve", "--listen", "127.0.0.1:0"] + arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        // The server's log, kept for a failure's message.
        let logDirectory = store.hasPrefix("postgresql:") ? URL(fileURLWithPath: NSTemporaryDirectory()) : URL(fileURLWithPath: store).deletingLastPathComponent()
        logPath = logDirectory.appendingPathComponent("serve-\(UUID().uuidString).log").path
        guard FileManager.default.createFile(atPath: logPath, contents: nil), let log = FileHandle(forWritingAtPath: logPath) else {
            throw BenchError("cannot create \(logPath)")
        }
        process.standardError = log
        try process.run()
        try? log.close()
        var line = Data()
        let deadline = Date().addingTimeInterval(30)
        while !line.contains(UInt8(ascii: "\n")) && Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let port = text.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
            process.terminate()
            throw BenchError("serve did not say where it listens: \(text)")
        }
        self.port = port
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// nginx serving one file from a scratch directory, as fast as Debian's nginx serves it.
final class StaticServer {
    let process = Process()
    let url: String

    init(nginx: String, directory: URL, file: String, bytes: Data) throws {
        let root = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try bytes.write(to: root.appendingPathComponent(file))
        let port = try Self.freePort()
        let configuration = """
            worker_processes \(ProcessInfo.processInfo.activeProcessorCount);
            pid \(directory.path)/nginx.pid;
            error_log \(directory.path)/nginx-error.log;
            events { worker_connections 4096; }
            http {
                access_log off;
                server {
                    listen 127.0.0.1:\(port);
                    root \(root.path);
                    default_type application/json;
                }
            }
            """
        let path = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: path, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", directory.path, "-c", path.path, "-g", "daemon off;"]
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        url = "http://127.0.0.1:\(port)/\(file)"
        try HTTPBenchmarks.waitFor("nginx", timeout: 10) { (try? HTTPBenchmarks.fetch(url)) != nil || !process.isRunning }
        guard process.isRunning else { throw BenchError("nginx did not start (see \(directory.path)/nginx-error.log)") }
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGQUIT)
        process.waitUntilExit()
    }

    /// A port no one listens on now (the kernel's choice for port 0).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("no socket") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw BenchError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// wrk's figures: requests a second, the 99th percentile of latency, errors.
struct Wrk {
    var requestsPerSecond: Double
    var p99Milliseconds: Double
    var errors: Int

    static func run(_ wrk: String, url: String, seconds: Int) throws -> Wrk {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: wrk)
        process.arguments = ["-t2", "-c64", "-d\(seconds)s", "--latency", url]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var result = Wrk(requestsPerSecond: 0, p99Milliseconds: 0, errors: 0)
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: \.isWhitespace)
            if fields.first == "Requests/sec:", fields.count >= 2 { result.requestsPerSecond = Double(fields[1]) ?? 0 }
            if fields.first == "99%", fields.count >= 2 { result.p99Milliseconds = milliseconds(String(fields[1])) }
            if line.contains("Non-2xx") || line.contains("Socket errors") {
                result.errors += fields.compactMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }.reduce(0, +)
            }
        }
        guard result.requestsPerSecond > 0 else { throw BenchError("wrk said nothing useful: \(text)") }
        return result
    }

    /// "812.00us", "1.23ms", "2.01s" in milliseconds.
    static func milliseconds(_ text: String) -> Double {
        for (unit, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where text.hasSuffix(unit) {
            return (Double(text.dropLast(unit.count)) ?? 0) * scale
        }
        return Double(text) ?? 0
    }
}
