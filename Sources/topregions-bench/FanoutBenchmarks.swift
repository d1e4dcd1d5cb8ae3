import Flickr
import Foundation
import PostgreSQL
import SampleDataSupport
import Store
import TestSupport
import TopRegionsKit

/// observe.fanout: 100 `watch regions --json` processes on one PostgreSQL database while a
/// sync pass commits pages of photos into it. Each commit (a group of pages) is timed from
/// its commit, as the syncing process sees it, to each watcher's batch for its token; every
/// watcher's snapshot and batches, replayed, must equal the top regions read afterwards.
/// Reports p50/p99 latency, and the CPU the database server used during the pass.
enum FanoutBenchmarks {
    static let scenario = Scenario(name: "observe.fanout",
                                   summary: "100 `watch regions --json` processes on PostgreSQL while a sync commits pages: latency, database CPU, every table equal") { quick in
        [try fanout(watchers: quick ? 10 : 100, photos: quick ? 4_000 : 40_000)]
    }

    static func fanout(watchers count: Int, photos: Int) throws -> Figure {
        guard PostgresTestServer.programDirectory != nil else {
            throw BenchError("PostgreSQL is not installed: scripts/install-dependencies --test")
        }
        let server = try PostgresTestServer.shared()
        return try withScratchDirectory { directory in
            let (small, large) = try ProductBenchmarks.generatePages(photos: photos, in: directory)
            let database = try server.makeDatabase("fanout")
            let gallery = try PostgresGallery.openForSyncing(location: database)
            defer { gallery.close() }
            try ProductBenchmarks.blockingAsync {
                _ = try await gallery.sync(client: FlickrClient(configuration: FlickrConfiguration(), transport: try SampleDataTransport(directory: small)))
            }
            let watchers = try (0..<count).map { _ in try Watcher(store: database, list: "regions") }
            defer { watchers.forEach { $0.stop() } }
            try HTTPBenchmarks.waitFor("every watcher's snapshot", timeout: 120) { watchers.allSatisfy { $0.snapshots > 0 } }

            // The commits' times, as this process hears of its own commits (at once, on the
            // committing thread).
            let commits = CommitClock()
            let observation = gallery.observe { event in
                if case .committed(let entry, _) = event { commits.note(entry.token) }
            }
            defer { observation.cancel() }
            let serverCPUBefore = try serverCPUSeconds(server)
            let started = Date()
            let result = try ProductBenchmarks.blockingAsync {
                var options = SyncOptions(pages: photos / 500 + 1, perPage: 500)
                options.overlap = 100 * 365 * 86_400
                return try await gallery.sync(client: FlickrClient(configuration: FlickrConfiguration(),
                                                                   transport: try SampleDataTransport(directory: large)), options: options)
            }
            guard result.outcome == .newData else { throw BenchError("the pass failed: \(result.error ?? "")") }
            // A commit that changes nothing the top regions show sends no batch: a watcher is
            // done when its replayed table is the list.
            let expected = try gallery.topRegionRows().map { WatchReplay.id(["id": $0.id]) }
            try HTTPBenchmarks.waitFor("every watcher's replayed table equal to the top regions", timeout: 120) {
                watchers.allSatisfy { watcher in (try? WatchReplay(watcher.output))?.ids == expected }
            }
            let elapsed = Date().timeIntervalSince(started)
            let serverCPU = try serverCPUSeconds(server) - serverCPUBefore
            var latencies: [Double] = []
            let committed = commits.times
            for watcher in watchers {
                for (token, arrival) in watcher.arrivalsByToken {
                    if let commit = committed[token] { latencies.append((arrival - commit) * 1000) }
                }
            }
            latencies.sort()
            return Figure(scenario: "observe.fanout", n: count, seconds: ObserveBenchmarks.percentile(latencies, 99) / 1000,
                          extra: ["store": "postgresql", "watchers": count, "photos": photos, "commits": committed.count,
                                  "batches": latencies.count, "p50ms": ObserveBenchmarks.percentile(latencies, 50),
                                  "p99ms": ObserveBenchmarks.percentile(latencies, 99), "maxms": latencies.last ?? 0,
                                  "passSeconds": elapsed, "databaseCpuSeconds": serverCPU,
                                  "databaseCpuPercent": serverCPU / elapsed * 100, "everyTableEqual": true])
        }
    }

    /// CPU seconds used so far by the server's processes (the postmaster and its children).
    static func serverCPUSeconds(_ server: PostgresTestServer) throws -> Double {
        let pidFile = try String(contentsOfFile: server.directory + "/data/postmaster.pid", encoding: .utf8)
        guard let postmaster = pidFile.split(separator: "\n").first.flatMap({ Int32($0) }) else { throw BenchError("no postmaster.pid") }
        var total = try ObserveBenchmarks.cpuSeconds(postmaster)
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = Int32(entry), pid != postmaster,
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, Int32(fields[1]) == postmaster else { continue }
            total += (try? ObserveBenchmarks.cpuSeconds(pid)) ?? 0
        }
        return total
    }
}

/// When each of this process's commits was heard of, by token.
private final class CommitClock: @unchecked Sendable {
    private let lock = NSLock()
    private var noted: [Int64: Double] = [:]

    func note(_ token: Int64) { lock.withLock { noted[token] = Watcher.now() } }
    var times: [Int64: Double] { lock.withLock { noted } }
}
