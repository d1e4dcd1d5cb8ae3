import CBenchStreams
import Foundation
import Glibc
import Store
import Synchronization
import TestSupport
import TopRegionsKit

/// http.users: many users, each with their own Recents and Favorites streams open, and views
/// from random users through the API: view → that user's stream has the batch.
/// http.opens: many streams opened at once over as many distinct region-photo lists: time
/// until every one has its snapshot. Both measure `GET /api/regions` meanwhile, which must
/// not wait for the store or for the lists being made.
enum ScaleBenchmarks {
    static let scenarios = [
        Scenario(name: "http.users", summary: "10,000 users with a Recents and a Favorites stream each; 100 views/s: view → that user's batch; GET /api/regions meanwhile") { quick in
            // Two streams a user, and the server holds one descriptor for each: where a process
            // may open at most 20,000 files, as here, 10,000 users cannot all be connected.
            try users(count: quick ? 300 : min(10_000, (openFileLimit() - 400) / 2), seconds: quick ? 5 : 20)
        },
        Scenario(name: "http.opens", summary: "1,000 streams opened at once over 1,000 region-photo lists of a 1M-photo store: time until all have their snapshot") { quick in
            try opens(lists: quick ? 200 : 1_000, photos: quick ? 100_000 : 1_000_000)
        },
    ]

    // MARK: http.users

    /// How many files this process (and the server it starts) may open.
    static func openFileLimit() -> Int {
        HTTPBenchmarks.raiseOpenFileLimit()
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        return Int(clamping: limit.rlim_cur)
    }

    static func users(count: Int, seconds: Int, viewsPerSecond: Int = 100) throws -> [Figure] {
        HTTPBenchmarks.raiseOpenFileLimit()
        return try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("users.sqlite").path
            try ProductBenchmarks.buildStore(path: path, photos: 100_000, regions: 2_000, photographers: 20_000)
            let (tokens, photos) = try makeUsers(count, in: path)
            let limit = "\(2 * count + 100)"
            // Every stream opens at the same instant (a reconnecting crowd): the opens queue
            // for the workers longer than the default --store-wait would let them.
            let server = try ServedTool(store: path, arguments: ["--max-connections", limit, "--max-connections-per-address", limit,
                                                                 "--max-streams-per-address", limit, "--store-wait", "300s"])
            defer { server.stop() }
            let base = "http://127.0.0.1:\(server.port)"
            // Stream 2u is user u's Recents, 2u + 1 their Favorites.
            let urls = tokens.flatMap { _ in ["\(base)/api/recents/changes", "\(base)/api/favorites/changes"] }
            let authorizations = tokens.flatMap { ["Bearer \($0)", "Bearer \($0)"] }
            let streams = try startStreams(urls, authorizations: authorizations)
            defer { tr_streams_close(streams) }
            let opened = tr_streams_now()
            tr_streams_watch(streams, "event: snapshot")
            try HTTPBenchmarks.waitFor("every stream's snapshot", timeout: 600) { tr_streams_seen(streams) == urls.count || tr_streams_ended(streams) > 0 }
            guard tr_streams_ended(streams) == 0 else {
                throw BenchError("\(tr_streams_ended(streams)) streams ended; the first: \(HTTPBenchmarks.firstEnd(streams)); the server's log ends: \(server.logTail())")
            }
            let openSeconds = tr_streams_now() - opened
            let idleRSS = try ResidentMemory(process: "\(server.pid)").total
            let idleCPU = try ObserveBenchmarks.idleCPU(of: [server.pid])

            tr_streams_count(streams, "event: batch")
            let prober = RegionsProber(url: "\(base)/api/regions")
            var random = BenchRandom(state: 7)
            var sent: [(user: Int, at: Double)] = []
            let interval = 1.0 / Double(viewsPerSecond)
            let start = tr_streams_now()
            for index in 0..<(viewsPerSecond * seconds) {
                let user = Int(random.next() % UInt64(count))
                let photo = photos[Int(random.next() % UInt64(photos.count))]
                let slot = start + Double(index) * interval
                let wait = slot - tr_streams_now()
                if wait > 0 { usleep(useconds_t(wait * 1e6)) }
                let at = tr_streams_now()
                let status = tr_post("\(base)/api/photos/\(photo)/view", "Bearer \(tokens[user])")
                guard status == 200 else { throw BenchError("POST view answered \(status); the server's log ends: \(server.logTail())") }
                sent.append((user, at))
            }
            let regionsLatencies = prober.stop()
            let viewsByUser = Dictionary(grouping: sent, by: \.user)
            try HTTPBenchmarks.waitFor("every view's batch", timeout: 60) {
                viewsByUser.allSatisfy { user, views in marks(streams, 2 * user).count >= views.count }
            }
            var latencies: [Double] = []
            for (user, views) in viewsByUser {
                let arrived = marks(streams, 2 * user)
                for (view, time) in zip(views, arrived) { latencies.append((time - view.at) * 1000) }
            }
            latencies.sort()
            let busyRSS = try ResidentMemory(process: "\(server.pid)").total
            let otherBatches = (0..<count).reduce(0) { $0 + marks(streams, 2 * $1 + 1).count }
            return [Figure(scenario: "http.users", n: count, seconds: ObserveBenchmarks.percentile(latencies, 99) / 1000,
                           extra: ["streams": urls.count, "views": sent.count, "viewsPerSecond": viewsPerSecond,
                                   "p50ms": ObserveBenchmarks.percentile(latencies, 50), "p99ms": ObserveBenchmarks.percentile(latencies, 99),
                                   "maxms": latencies.last ?? 0, "serverRssMB": busyRSS, "serverIdleRssMB": idleRSS,
                                   "idleCpuPercent": idleCPU, "openAllSeconds": openSeconds,
                                   "regionsP99ms": ObserveBenchmarks.percentile(regionsLatencies, 99), "regionsRequests": regionsLatencies.count,
                                   "favoritesBatches": otherBatches])]
        }
    }

    /// `count` users (their tokens) and photos to view (their Flickr ids).
    static func makeUsers(_ count: Int, in path: String) throws -> (tokens: [String], photos: [String]) {
        let gallery = try Gallery(path: path)
        defer { gallery.close() }
        let tokens = try (0..<count).map { try gallery.addUser(named: "user\($0)").token }
        let store = try Store(path: path, schema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator)
        defer { store.close() }
        let photos = try store.read { try $0.rows("SELECT flickrID FROM Photo WHERE region_id IS NOT NULL ORDER BY id LIMIT 500") }
            .compactMap { $0[0].string }
        guard !photos.isEmpty else { throw BenchError("the store has no photo with a region") }
        return (tokens, photos)
    }

    static func startStreams(_ urls: [String], authorizations: [String]?) throws -> OpaquePointer {
        let urlCopies = urls.map { strdup($0) }
        let authorizationCopies = authorizations?.map { strdup($0) }
        defer {
            urlCopies.forEach { free($0) }
            authorizationCopies?.forEach { free($0) }
        }
        let urlPointers = urlCopies.map { UnsafePointer($0) }
        let started: OpaquePointer? = urlPointers.withUnsafeBufferPointer { urls in
            if let authorizationCopies {
                let pointers = authorizationCopies.map { UnsafePointer($0) }
                return pointers.withUnsafeBufferPointer { tr_streams_start_each(urls.baseAddress, $0.baseAddress, Int32(urls.count)) }
            }
            return tr_streams_start_each(urls.baseAddress, nil, Int32(urls.count))
        }
        guard let started else { throw BenchError("libcurl cannot start") }
        return started
    }

    static func marks(_ streams: OpaquePointer, _ index: Int) -> [Double] {
        var times = [Double](repeating: 0, count: 4_096)
        let count = Int(tr_streams_marks(streams, Int32(index), &times, Int32(times.count)))
        return Array(times.prefix(min(count, times.count)))
    }

    // MARK: http.opens

    static func opens(lists: Int, photos: Int) throws -> [Figure] {
        HTTPBenchmarks.raiseOpenFileLimit()
        return try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("opens.sqlite").path
            try ProductBenchmarks.buildStore(path: path, photos: photos, regions: 2_000, photographers: 20_000)
            let places = try Store(path: path, schema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator).read {
                try $0.rows("SELECT placeID FROM Region WHERE photoCount > 0 ORDER BY id LIMIT ?", [.integer(Int64(lists))])
            }.compactMap { $0[0].string }
            guard places.count == lists else { throw BenchError("the store has \(places.count) regions, not \(lists)") }
            let limit = "\(lists + 100)"
            // All at once: the lists queue for the workers longer than the default --store-wait.
            let server = try ServedTool(store: path, arguments: ["--max-connections", limit, "--max-connections-per-address", limit,
                                                                 "--max-streams-per-address", limit, "--store-wait", "300s"])
            defer { server.stop() }
            let base = "http://127.0.0.1:\(server.port)"
            _ = try HTTPBenchmarks.fetch("\(base)/api/regions")  // kept: the prober's reads are answered from memory
            let prober = RegionsProber(url: "\(base)/api/regions")
            let opened = tr_streams_now()
            let streams = try startStreams(places.map { "\(base)/api/regions/\($0)/photos/changes" }, authorizations: nil)
            defer { tr_streams_close(streams) }
            tr_streams_watch(streams, "event: snapshot")
            try HTTPBenchmarks.waitFor("every stream's snapshot", timeout: 900) { tr_streams_seen(streams) == lists || tr_streams_ended(streams) > 0 }
            let allSeconds = tr_streams_now() - opened
            let regionsLatencies = prober.stop()
            guard tr_streams_ended(streams) == 0 else {
                throw BenchError("\(tr_streams_ended(streams)) streams ended; the first: \(HTTPBenchmarks.firstEnd(streams)); the server's log ends: \(server.logTail())")
            }
            var times = [Double](repeating: -1, count: lists)
            tr_streams_times(streams, &times)
            let each = times.map { ($0 - opened) * 1000 }.sorted()
            return [Figure(scenario: "http.opens", n: lists, seconds: allSeconds,
                           extra: ["photos": photos, "p50ms": ObserveBenchmarks.percentile(each, 50), "lastms": each.last ?? 0,
                                   "regionsP99ms": ObserveBenchmarks.percentile(regionsLatencies, 99),
                                   "regionsMaxms": regionsLatencies.last ?? 0, "regionsRequests": regionsLatencies.count,
                                   "serverRssMB": try ResidentMemory(process: "\(server.pid)").total])]
        }
    }
}

/// GETs a URL one after another (every 10 ms) on a thread of its own until stopped, and
/// times each: what a reader of the catalogue feels while the server is busy elsewhere.
final class RegionsProber: @unchecked Sendable {
    private let running = Atomic<Bool>(true)
    private let latencies = Mutex<[Double]>([])
    private let done = DispatchSemaphore(value: 0)

    init(url: String) {
        let thread = Thread { [self] in
            while running.load(ordering: .relaxed) {
                let started = tr_streams_now()
                var length = 0, status = 0
                if let body = tr_fetch(url, &length, &status) { free(body) }
                let milliseconds = (tr_streams_now() - started) * 1000
                latencies.withLock { $0.append(status == 200 ? milliseconds : .infinity) }
                usleep(10_000)
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops, and returns the latencies in milliseconds, sorted (a failed GET is infinite).
    func stop() -> [Double] {
        running.store(false, ordering: .relaxed)
        done.wait()
        return latencies.withLock { $0.sorted() }
    }
}

/// http.stall: a PostgreSQL store whose Recents table is locked from psql for 10 s while
/// `serve` runs: cached reads go on, a read of the table is answered 503 within
/// `--store-wait`, and everything answers again once the lock goes.
enum StallBenchmark {
    static let scenario = Scenario(name: "http.stall", summary: "PostgreSQL's Recent table locked 10 s from psql: cached GET p99, time to 503 for a store read, recovery") { quick in
        try stall(lockSeconds: quick ? 4 : 10)
    }

    static func stall(lockSeconds: Int) throws -> [Figure] {
        guard PostgresTestServer.programDirectory != nil else {
            print("http.stall skipped: PostgreSQL is not installed (scripts/install-dependencies --test)")
            return []
        }
        return try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("stall.sqlite").path
            try ProductBenchmarks.buildStore(path: path, photos: 100_000, regions: 2_000, photographers: 20_000)
            let (tokens, photos) = try ScaleBenchmarks.makeUsers(1, in: path)
            let postgres = try PostgresTestServer.shared()
            let location = try postgres.makeDatabase("stall")
            try Gallery.copyStore(from: path, to: location)
            let server = try ServedTool(store: location, arguments: ["--store-wait", "2s"])
            defer { server.stop() }
            let base = "http://127.0.0.1:\(server.port)"
            guard tr_post("\(base)/api/photos/\(photos[0])/view", "Bearer \(tokens[0])") == 200 else { throw BenchError("a view failed") }
            _ = try HTTPBenchmarks.fetch("\(base)/api/regions")
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: postgres.program("psql"))
            holder.arguments = ["-X", "-q", location, "-c", "BEGIN; LOCK TABLE recent IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(\(lockSeconds)); COMMIT"]
            holder.standardOutput = FileHandle.nullDevice
            holder.standardError = FileHandle.nullDevice
            try holder.run()
            usleep(500_000)  // the lock is taken
            let prober = RegionsProber(url: "\(base)/api/regions")
            let asked = tr_streams_now()
            var length = 0, status = 0
            if let body = tr_fetch_with("\(base)/api/recents", "Bearer \(tokens[0])", &length, &status) { free(body) }
            let toAnswer = tr_streams_now() - asked
            let stalledStatus = status
            holder.waitUntilExit()
            let released = tr_streams_now()
            var recovered = Double.infinity
            while tr_streams_now() - released < 30 {
                if let body = tr_fetch_with("\(base)/api/recents", "Bearer \(tokens[0])", &length, &status) { free(body) }
                if status == 200 {
                    recovered = tr_streams_now() - released
                    break
                }
                usleep(10_000)
            }
            let cached = prober.stop()
            return [Figure(scenario: "http.stall", n: cached.count, seconds: ObserveBenchmarks.percentile(cached, 99) / 1000,
                           extra: ["lockSeconds": lockSeconds, "cachedP99ms": ObserveBenchmarks.percentile(cached, 99),
                                   "cachedMaxms": cached.last ?? 0, "storeReadStatus": stalledStatus,
                                   "storeReadSeconds": toAnswer, "recoverySeconds": recovered, "storeWaitSeconds": 2])]
        }
    }
}
