import Foundation
import ImageCodec
import PostgreSQL
import TestSupport
import ResultsController
import Store
import Testing
@testable import TopRegionsKit

/// The built `topregions`, run as a user would, with its own store: a file in a temporary
/// folder, or (`on: .postgresql`) a fresh database of the tests' PostgreSQL server.
final class Tool: @unchecked Sendable {
    private let temporary: TemporaryDirectory
    private let database: String?
    var directory: URL { temporary.url }
    var store: String { database ?? directory.appendingPathComponent("store.sqlite").path }

    init(on kind: StoreKind = .sqlite) throws {
        temporary = try TemporaryDirectory("cli")
        database = kind == .postgresql ? try PostgresTestServer.shared().makeDatabase("cli") : nil
    }

    static func executable() throws -> URL {
        let tests = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        var folder = tests.deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("topregions")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        throw StoreError(.recordNotFound, "topregions was not built next to the tests")
    }

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed]) }
    }

    /// Starts the tool on its store, or on `store` when given (a PostgreSQL URL, say).
    func process(_ arguments: [String], environment extra: [String: String] = [:], on store: String? = nil) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = try Self.executable()
        process.arguments = ["--store", store ?? self.store] + arguments
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment
        environment["FLICKR_API_KEY"] = nil
        environment["FLICKR_ENDPOINT"] = nil
        environment["XDG_CACHE_HOME"] = directory.path
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return (process, out, err)
    }

    /// Runs the tool without `--store`, so that it finds its store itself.
    func runWithoutStore(_ arguments: [String], environment extra: [String: String] = [:], inOwnDirectory: Bool = false) throws -> Run {
        let process = Process()
        process.executableURL = try Self.executable()
        process.arguments = arguments
        if inOwnDirectory { process.currentDirectoryURL = directory }
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile(), stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    @discardableResult
    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let (process, out, err) = try process(arguments, environment: environment)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }
}

@Suite("The topregions tool, end to end", .serialized)
struct CLITests {
    @Test("migrate on a new file says it created the store; run again, that the store is current")
    func migrateSaysWhatItDid() throws {
        let tool = try Tool()
        let first = try tool.run(["migrate"]), second = try tool.run(["migrate"])
        #expect(first.status == 0 && first.stdout.hasPrefix("created the store's tables in "), "\(first.stdout)\(first.stderr)")
        #expect(second.status == 0 && second.stdout.contains("has this program's schema"), "\(second.stdout)")
    }

    @Test("sync and regions on SampleData give the independently computed top regions", arguments: StoreKind.available)
    func sampleData(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        let sync = try tool.run(["sync", "--json"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let result = try #require(sync.json as? [String: Any])
        #expect(result["result"] as? String == "newData")
        #expect((result["photos"] as? [String: Any])?["new"] as? Int == 1200)
        let regions = try tool.run(["regions", "--json"])
        let rows = try #require(regions.json as? [[String: Any]])
        let expected = try Expected.topRegions()
        #expect(rows.compactMap { $0["id"] as? String } == expected.map(\.placeID))
        #expect(rows.compactMap { $0["photographers"] as? Int } == expected.map(\.photographers.count))
        #expect(rows.compactMap { $0["rank"] as? Int } == Array(1...rows.count))
        // The global option works after the command too, and the table fits a terminal.
        let table = try tool.run(["regions", "--limit", "3"], environment: ["COLUMNS": "60"])
        #expect(table.stdout.split(separator: "\n").count == 4)
    }

    @Test("sync from the test server over HTTP, in JSON and XML", arguments: ["json", "xml"], StoreKind.available)
    func overHTTP(format: String, on kind: StoreKind) throws {
        let server = try FlickrTestServer()
        let tool = try Tool(on: kind)
        let sync = try tool.run(["sync", "--json", "--endpoint", server.endpoint.absoluteString, "--format", format, "--rate-limit", "none",
                                 "--per-page", "250"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let regions = try tool.run(["regions", "--json", "--limit", "10"])
        let rows = try #require(regions.json as? [[String: Any]])
        #expect(rows.compactMap { $0["id"] as? String } == (try Expected.topRegions(limit: 10)).map(\.placeID))
    }

    @Test("photos, photo, view, recents, favorites, prune, status and check print the documented JSON", arguments: StoreKind.available)
    func commands(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        let ambiguous = try tool.run(["photos", "--region", "Limburg", "--json"])
        #expect(ambiguous.status == 1 && ambiguous.stderr.contains("2 regions are called \"Limburg\""))
        // Listed by place id (in byte order), whatever order the store numbered them in.
        let limburgs = try Expected.regions().values.filter { $0.name.hasPrefix("Limburg") }.map(\.placeID)
        let listed = limburgs.compactMap { id in ambiguous.stderr.range(of: id).map { (id, $0.lowerBound) } }.sorted { $0.1 < $1.1 }.map(\.0)
        #expect(limburgs.count == 2 && listed == limburgs.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, "\(ambiguous.stderr)")
        let region = try #require(try Expected.topRegions().first)
        let photos = try #require(try tool.run(["photos", "--region", region.placeID, "--json"]).json as? [[String: Any]])
        #expect(Set(photos.compactMap { $0["id"] as? String }) == region.photos)
        #expect(photos.allSatisfy { Set($0.keys) == ["id", "title", "subtitle", "photographer", "uploaded", "thumbnailURL", "imageURL",
                                                      "license", "pageURL", "photographerURL"] }, "the keys of docs/cli.md, credit included")
        let id = try #require(photos.first?["id"] as? String)
        let detail = try #require(try tool.run(["photo", id, "--json"]).json as? [String: Any])
        #expect(detail["region"] as? String == region.name && detail["latitude"] is Double)
        let viewed = try #require(try tool.run(["view", id, "--json"]).json as? [String: Any])
        #expect(viewed["lastViewed"] is String)
        let recents = try #require(try tool.run(["recents", "--json"]).json as? [[String: Any]])
        #expect(recents.first?["id"] as? String == id)
        for photo in photos.prefix(3) { try tool.run(["favorites", "add", photo["id"] as? String ?? ""]) }
        let moved = try #require(try tool.run(["favorites", "move", "3", "1", "--json"]).json as? [[String: Any]])
        #expect(moved.compactMap { $0["id"] as? String } == [photos[2], photos[0], photos[1]].compactMap { $0["id"] as? String })
        #expect(moved.compactMap { $0["position"] as? Int } == [1, 2, 3])
        let removed = try #require(try tool.run(["favorites", "remove", id, "--json"]).json as? [[String: Any]])
        #expect(removed.count == 2)
        let status = try #require(try tool.run(["status", "--json"]).json as? [String: Any])
        #expect(status["photos"] as? Int == 1200 && status["daemon"] is NSNull && status["lastSync"] is [String: Any])
        #expect(try tool.run(["check"]).status == 0)
        let pruned = try #require(try tool.run(["prune", "--older-than", "7d", "--json"]).json as? [String: Any])
        #expect(pruned["photos"] as? Int == 0, "everything was downloaded just now")
        #expect(try tool.run(["photo", "999", "--json"]).status == 1)
    }

    @Test("thumbnail and image fetch bytes on demand from the test server, keep them, and name missing photos", arguments: StoreKind.available)
    func thumbnailAndImage(on kind: StoreKind) throws {
        let server = try FlickrTestServer()
        let tool = try Tool(on: kind)
        let source = ["--endpoint", server.endpoint.absoluteString, "--image-base", server.imageBase.absoluteString, "--rate-limit", "none"]
        #expect(try tool.run(["sync"] + source).status == 0)
        let (id, file) = try Expected.thumbnailOfAPhotoInARegion()
        let thumbnailPath = tool.directory.appendingPathComponent("thumb.jpg").path
        // No key or endpoint needed: images follow the image base the photos were synced with.
        let thumbnail = try tool.run(["thumbnail", id, "--output", thumbnailPath])
        #expect(thumbnail.status == 0, "\(thumbnail.stderr)")
        let expected = try Data(contentsOf: Expected.directory.appendingPathComponent("images/\(file)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: thumbnailPath)) == expected)
        let piped = try tool.run(["thumbnail", id, "--output", "-"])
        #expect(Data(piped.stdout.utf8).count > 0 && piped.status == 0)
        let images = try tool.run(["image", id, "--output", tool.directory.appendingPathComponent("large.jpg").path, "--image-base", server.imageBase.absoluteString])
        #expect(images.status == 0)
        // The thumbnail was downloaded once (then kept in the store), the image once (then cached).
        _ = try tool.run(["image", id, "--output", tool.directory.appendingPathComponent("again.jpg").path])
        let downloads = try blockingRequests(server).filter { $0.path.hasSuffix(".jpg") }
        #expect(downloads.filter { $0.path.hasSuffix("_s.jpg") }.count == 1)
        #expect(downloads.filter { $0.path.hasSuffix("_b.jpg") }.count == 1)
        #expect(try tool.run(["thumbnail", id, "--output", "x.jpg"] + source).status == 64, "images take no source options but the image base")
        let missing = try tool.run(["thumbnail", "999", "--output", "-"])
        #expect(missing.status == 1 && missing.stderr.contains("no photo has id 999"))
    }

    @Test("image --size writes any of the gallery's sizes, each cached once; SampleData has every photo at every size", arguments: StoreKind.available)
    func imageSizes(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        #expect(try tool.run(["sync"]).status == 0)
        // A photo SampleData has no file of: its images are drawn.
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: Expected.directory.appendingPathComponent("images").path).map { String($0.split(separator: "_")[0]) })
        let shown = Set(try Expected.regions().values.flatMap(\.photos))
        let newest = try Expected.photos().map { "\($0["id"] ?? "")" }
        let id = try #require(newest.first { shown.contains($0) && !files.contains($0) })
        for (size, width, height) in [("s", 75, 75), ("q", 150, 150), ("n", 320, 240), ("z", 640, 480), ("c", 800, 600), ("b", 1024, 768)] {
            let path = tool.directory.appendingPathComponent("\(size).jpg").path
            let run = try tool.run(["image", id, "--size", size, "--output", path])
            #expect(run.status == 0, "\(size): \(run.stderr)")
            let info = try JPEG.check(try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect((info.width, info.height) == (width, height), "\(size)")
        }
        let again = tool.directory.appendingPathComponent("again.jpg").path
        #expect(try tool.run(["image", id, "--size", "z", "--output", again]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: again)) == Data(contentsOf: tool.directory.appendingPathComponent("z.jpg")))
        let cached = try FileManager.default.contentsOfDirectory(atPath: tool.directory.appendingPathComponent("topregions/images").path)
        #expect(cached.filter { $0.hasPrefix(id) }.count == 5, "q, n, z, c and b in the cache (s is in the store): \(cached)")
        let bad = try tool.run(["image", id, "--size", "o", "--output", "-"])
        #expect(bad.status == 64 && bad.stderr.contains("--size must be one of s, q, n, z, c, b"), "\(bad.stderr)")
    }

    private func blockingRequests(_ server: FlickrTestServer) throws -> [FlickrTestServer.LoggedRequest] {
        let semaphore = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<[FlickrTestServer.LoggedRequest], Error> = .success([])
        Task {
            do { result = .success(try await server.requests()) } catch { result = .failure(error) }
            semaphore.signal()
        }
        semaphore.wait()
        return try result.get()
    }

    @Test("Exit statuses: 64 for usage errors, 75 while another sync holds the store, 1 for failures", arguments: StoreKind.available)
    func exitStatuses(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        #expect(try tool.run(["frobnicate"]).status == 64)
        let bad = try tool.run(["regions", "--limit", "many"])
        #expect(bad.status == 64 && bad.stderr.contains("--limit") && bad.stderr.contains("Usage: topregions regions"))
        #expect(try tool.run(["regions", "--colour"]).status == 64)
        #expect(try tool.run(["prune", "--older-than", "soon"]).status == 64)
        #expect(try tool.run([]).status == 64)
        let badName = try tool.run(["users", "add", "bad name"])
        #expect(badName.status == 64 && badName.stderr.contains("user name"), "a name no user can have is a usage error")
        #expect(try tool.run(["recents", "--user", "Alice"]).status == 64)
        #expect(try tool.run(["regions", "--json=false"]).status == 64, "a flag takes no value, not even false")
        #expect(try tool.run(["users", "list", "--rotate"]).status == 64, "--rotate belongs to users token")
        #expect(try tool.run(["watch", "favorites", "--region", "x"]).status == 64, "--region belongs to watch photos")
        let unusable = kind == .sqlite ? "/dev/null/x.sqlite" : try PostgresTestServer.shared().url(database: "no_such_gallery")
        let unwritable = try tool.runWithoutStore(["--store", unusable, "sync"])
        #expect(unwritable.status == 1 && unwritable.stderr.hasPrefix("topregions: cannot "), "messages begin in lowercase: \(unwritable.stderr)")
        for words in [["photo", ""], ["view", "abc"], ["favorites", "add", "1 2"], ["thumbnail", "-5", "--output", "x.jpg"]] {
            #expect(try tool.run(words).status == 64, "\(words): an id that cannot be one is a usage error")
        }
        #expect(try !Self.storeExists(tool, kind), "refused before the store is made")
        #expect(try tool.run(["--help"]).status == 0)
        #expect(try tool.run(["regions", "--help"]).stdout.contains("Examples:"))
        #expect(try tool.run(["--version"]).stdout.hasPrefix("topregions "))
        try Self.holdingSyncLock(tool, kind) { holder in
            let busy = try tool.run(["sync"])
            #expect(busy.status == 75 && busy.stderr.contains("another sync is running") && busy.stderr.contains(holder), "\(busy.stderr)")
        }
        // A server that cannot be reached may come back: try again later (75).
        let unreachable = try tool.run(["sync", "--endpoint", "http://127.0.0.1:9/services/rest/", "--rate-limit", "none", "--json"])
        #expect(unreachable.status == 75)
        #expect(((unreachable.json as? [String: Any])?["error"] as? [String: Any])?["kind"] as? String == "temporary")
        #expect((unreachable.json as? [String: Any])?["result"] as? String == "failed")
        // Without libcurl a sync fails with an error that says so; offline commands still work.
        let noCurl = ["TOPREGIONS_LIBCURL": "libcurl-that-is-not-installed.so"]
        let withoutCurl = try tool.run(["sync", "--endpoint", "http://127.0.0.1:9/services/rest/", "--rate-limit", "none", "--json"],
                                       environment: noCurl)
        #expect(withoutCurl.status == 1)
        #expect((withoutCurl.json as? [String: Any])?["result"] as? String == "failed")
        #expect(withoutCurl.stderr.contains("libcurl") && withoutCurl.stderr.contains("TOPREGIONS_LIBCURL"), "\(withoutCurl.stderr)")
        #expect(try tool.run(["regions", "--json"], environment: noCurl).status == 0)
    }

    /// Whether the tool's store has been made: its file, or its tables.
    private static func storeExists(_ tool: Tool, _ kind: StoreKind) throws -> Bool {
        guard kind == .postgresql else { return FileManager.default.fileExists(atPath: tool.store) }
        let connection = try PostgresConnection(tool.store)
        defer { connection.close() }
        return try connection.query("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").rows.first?.first != "0"
    }

    /// Runs `body` while this process holds the store's sync lock (the lock file's, or the
    /// advisory lock operations.md gives), with what a refused sync names as its holder.
    private static func holdingSyncLock(_ tool: Tool, _ kind: StoreKind, _ body: (String) throws -> Void) throws {
        guard kind == .postgresql else {
            let gallery = try Gallery(path: tool.store)
            defer { gallery.close() }
            let lock = try SyncLock.acquire(for: gallery.store)
            defer { lock.release() }
            return try body("pid \(getpid())")
        }
        #expect(try tool.run(["migrate"]).status == 0)
        let holder = try PostgresConnection(tool.store)
        defer { holder.close() }
        #expect(try holder.tryAdvisoryLock(0x746f_7072_6567_6e73))
        try body("another sync is running")
    }

    @Test("The daemon syncs at once, again on SIGHUP, and stops cleanly on SIGTERM", arguments: StoreKind.available)
    func daemon(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        let (process, _, err) = try tool.process(["daemon", "--interval", "1h"])
        let log = LogReader(err)
        #expect(log.wait(for: "event=sync", count: 1), "\(log.text)")
        let status = try #require(try tool.run(["status", "--json"]).json as? [String: Any])
        #expect((status["daemon"] as? [String: Any])?["pid"] as? Int == Int(process.processIdentifier))
        kill(process.processIdentifier, SIGHUP)
        #expect(log.wait(for: "event=sync", count: 2), "\(log.text)")
        let stopAsked = Date()
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(stopAsked) < 5)
        #expect(log.text.contains("event=stop"))
        #expect(try tool.run(["check"]).status == 0)
    }

    @Test("SIGTERM stops a daemon whose pages read ahead wait for the rate limit, at once", arguments: StoreKind.available)
    func daemonStopsWhileReadingAheadWaits(on kind: StoreKind) async throws {
        let server = try FlickrTestServer()
        let tool = try Tool(on: kind)
        // One call an hour: page 1 takes it, the pages read ahead wait for the next hour.
        let (process, _, err) = try tool.process(["daemon", "--interval", "1h", "--endpoint", server.endpoint.absoluteString,
                                                  "--rate-limit", "1", "--per-page", "100"])
        let log = LogReader(err)
        #expect(log.wait(for: "event=rate-limit-wait", count: 1), "\(log.text)")
        let stopAsked = Date()
        kill(process.processIdentifier, SIGTERM)
        let stopped = await waitUntil(timeout: 10) { !process.isRunning }
        if !stopped { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(stopped && process.terminationStatus == 0, "\(log.text)")
        #expect(Date().timeIntervalSince(stopAsked) < 5)
        #expect(try await server.requests().filter { $0.method != nil }.count == 1)
    }

    @Test("A daemon stopped during its place lookups puts the pass on record as failed, cancelled", arguments: StoreKind.available)
    func daemonStoppedDuringPlaceLookups(on kind: StoreKind) async throws {
        let server = try FlickrTestServer()
        try await server.addFault(["method": "flickr.places.getInfo", "delay": 20, "times": -1])
        let tool = try Tool(on: kind)
        let (process, _, err) = try tool.process(["daemon", "--interval", "1h", "--endpoint", server.endpoint.absoluteString,
                                                  "--rate-limit", "none", "--pages", "1", "--per-page", "100"])
        let log = LogReader(err)
        #expect(await waitForRequest(server, method: "flickr.places.getInfo"), "\(log.text)")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let status = try #require(try tool.run(["status", "--json"]).json as? [String: Any])
        let last = try #require(status["lastSync"] as? [String: Any])
        #expect(last["result"] as? String == "failed", "\(last)")
        #expect((last["error"] as? String)?.contains("cancelled") == true, "\(last)")
    }

    @Test("sync stopped by SIGTERM records its pass (what it stored, its calls) and exits 75", arguments: StoreKind.available)
    func syncStoppedBySIGTERM(on kind: StoreKind) async throws {
        let server = try FlickrTestServer()
        try await server.addFault(["method": "flickr.places.getInfo", "delay": 20, "times": -1])
        let tool = try Tool(on: kind)
        let (process, out, err) = try tool.process(["sync", "--json", "--endpoint", server.endpoint.absoluteString,
                                                    "--rate-limit", "none", "--pages", "1", "--per-page", "100"])
        let asking = await waitForRequest(server, method: "flickr.places.getInfo")
        kill(process.processIdentifier, SIGTERM)
        let stopped = await waitUntil(timeout: 10) { !process.isRunning }
        if !stopped { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(asking && stopped && process.terminationStatus == 75, "\(stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: out.fileHandleForReading.readDataToEndOfFile()) as? [String: Any])
        let calls = try await server.requests().filter { $0.method != nil }.count
        #expect(report["result"] as? String == "failed", "\(report)")
        #expect(report["calls"] as? Int == calls && calls >= 2, "the page and the place lookups begun: \(report)")
        #expect((report["photos"] as? [String: Any])?["new"] as? Int ?? 0 > 0, "\(report)")
        #expect((report["error"] as? [String: Any])?["kind"] as? String == "temporary", "\(report)")
        #expect(report["placesLeftAtDeadline"] as? Int == 0 && (report["notes"] as? [String])?.isEmpty == true,
                "stopped, not out of time: \(report)")
        let status = try #require(try tool.run(["status", "--json"]).json as? [String: Any])
        let last = try #require(status["lastSync"] as? [String: Any])
        #expect(last["finishedAt"] is String && last["calls"] as? Int == calls, "\(last)")
        #expect((last["error"] as? String)?.contains("cancelled") == true, "\(last)")
    }

    /// Waits (30 s at most) until the test server has been asked `method`.
    private func waitForRequest(_ server: FlickrTestServer, method: String) async -> Bool {
        await waitUntil(timeout: 30) {
            let semaphore = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var seen = false
            Task {
                seen = ((try? await server.requests()) ?? []).contains { $0.method == method }
                semaphore.signal()
            }
            semaphore.wait()
            return seen
        }
    }

    @Test("watch of a user's list ends (status 1) when another process removes the user", arguments: StoreKind.available)
    func watchEndsWithItsUser(on kind: StoreKind) async throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        #expect(try tool.run(["users", "add", "erin"]).status == 0)
        let (process, out, err) = try tool.process(["watch", "recents", "--user", "erin", "--json"])
        let lines = LogReader(out)
        #expect(lines.wait(for: "\"snapshot\"", count: 1))
        #expect(try tool.run(["users", "remove", "erin"]).status == 0)
        let end = await endByItself(process, stderr: err)
        #expect(end.status == 1, "\(end.stderr)")
        #expect(end.stderr.contains("user erin was removed"), "\(end.stderr)")
    }

    /// Waits (10 s at most) for `process` to end by itself, else stops it (status nil); its
    /// status and what it wrote on stderr.
    private func endByItself(_ process: Process, stderr err: Pipe) async -> (status: Int32?, stderr: String) {
        let ended = await waitUntil(timeout: 10) { !process.isRunning }
        if !ended { process.terminate() }
        process.waitUntilExit()
        return (ended ? process.terminationStatus : nil, String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test("watch photos of a region that pruning removes ends with status 1 and says why", arguments: StoreKind.available)
    func watchEndsWithItsRegion(on kind: StoreKind) async throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        let region = try #require(try Expected.topRegions().first?.placeID)
        let (process, out, err) = try tool.process(["watch", "photos", "--region", region, "--json"])
        let lines = LogReader(out)
        #expect(lines.wait(for: "\"snapshot\"", count: 1))
        try await Task.sleep(nanoseconds: 1_100_000_000)
        #expect(try tool.run(["prune", "--older-than", "1s"]).status == 0)
        let end = await endByItself(process, stderr: err)
        #expect(end.status == 1, "\(end.stderr)")
        #expect(end.stderr.contains("has no photos any more"), "\(end.stderr)")
    }

    @Test("watch --json follows other processes' views and favorite moves; its batches rebuild the list", arguments: StoreKind.available)
    func watch(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        let photos = try #require(try tool.run(["photos", "--region", (try Expected.topRegions().first?.placeID) ?? "", "--json"]).json as? [[String: Any]])
        let ids = photos.prefix(4).compactMap { $0["id"] as? String }
        for id in ids { try tool.run(["favorites", "add", id]) }
        let (process, out, _) = try tool.process(["watch", "favorites", "--json", "--exit-after", "3"])
        let lines = LogReader(out)
        #expect(lines.wait(for: "\"snapshot\"", count: 1))
        // One change at a time: two commits within one observation interval would arrive as
        // one batch, and the watch would wait for a third forever.
        for (number, change) in [["favorites", "move", "4", "1"], ["favorites", "remove", ids[1]], ["favorites", "add", ids[1]]].enumerated() {
            try tool.run(change)
            #expect(lines.wait(for: "\"batch\"", count: number + 1), "\(change): \(lines.text)")
        }
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let replay = try WatchReplay(lines.text)
        #expect(replay.messages.count == 4)
        let final = try #require(try tool.run(["favorites", "--json"]).json as? [[String: Any]])
        #expect(replay.ids == final.map(WatchReplay.id))
    }

    @Test("watch ends cleanly on SIGHUP (its terminal went away), as on SIGTERM", arguments: StoreKind.available)
    func watchHangUp(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        let (process, out, _) = try tool.process(["watch", "recents", "--json"])
        #expect(LogReader(out).wait(for: "\"snapshot\"", count: 1))
        kill(process.processIdentifier, SIGHUP)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let ended = !process.isRunning
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(ended && process.terminationStatus == 0 && process.terminationReason == .exit)
    }

    @Test("watch without --json prints the whole table after each batch, as favorites lists it, in delimited blocks", arguments: StoreKind.available)
    func watchRedraw(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        let photos = try #require(try tool.run(["photos", "--region", (try Expected.topRegions().first?.placeID) ?? "", "--json"]).json as? [[String: Any]])
        let ids = photos.prefix(3).compactMap { $0["id"] as? String }
        for id in ids { try tool.run(["favorites", "add", id]) }
        func favoriteIDs() throws -> [String] {
            try #require(try tool.run(["favorites", "--json"]).json as? [[String: Any]]).compactMap { $0["id"] as? String }
        }
        var expected = [try favoriteIDs()]
        let (process, out, _) = try tool.process(["watch", "favorites", "--exit-after", "2"])
        let lines = LogReader(out)
        let header = "── favorites at token"
        #expect(lines.wait(for: header, count: 1))
        try tool.run(["favorites", "move", "3", "1"])
        expected.append(try favoriteIDs())
        #expect(lines.wait(for: header, count: 2))
        try tool.run(["favorites", "remove", ids[0]])
        expected.append(try favoriteIDs())
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // Each block is a delimiter line, the table's header ("#  ID  TITLE"), then one line
        // per favorite: its position, then its Flickr id.
        var tables: [[String]] = []
        for line in lines.text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if line.hasPrefix(header) { tables.append([]) } else if !tables.isEmpty, words.count >= 2, Int(words[0]) != nil {
                tables[tables.count - 1].append(String(words[1]))
            }
        }
        #expect(tables == expected, "\(lines.text)")
        #expect(expected[1] != expected[0] && expected[2].count == 2, "the changes must show in the list")
    }
}

/// Collects a pipe's output as it arrives and waits for a pattern.
final class LogReader: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""

    init(_ pipe: Pipe) {
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.buffer += String(decoding: data, as: UTF8.self)
            self.lock.unlock()
        }
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return buffer
    }

    func wait(for pattern: String, count: Int, timeout: TimeInterval = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if text.components(separatedBy: pattern).count - 1 >= count { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }
}
