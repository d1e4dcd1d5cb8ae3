import Foundation
import Glibc
import PostgreSQL
import Store
import TestSupport
import TopRegionsKit

/// observe.latency: a commit in one process, the change batch in `watch --json` processes,
/// on SQLite (each watcher polls the file's data version) and on PostgreSQL (each watcher
/// LISTENs; the commit sends NOTIFY). observe.notify: PostgreSQL's transport measured
/// alone: a commit that sends NOTIFY, the notification on 16 listening sessions. Each
/// reports what an idle watcher costs.
enum ObserveBenchmarks {
    static let scenarios = [
        Scenario(name: "observe.latency", summary: "commit in this process → batch in 1 and 16 `watch --json` processes, SQLite and PostgreSQL; idle CPU") { quick in
            var figures = try [1, 16].map { try latency(watchers: $0, commits: quick ? 10 : 50, on: .sqlite) }
            if PostgresTestServer.programDirectory != nil {
                figures += try [1, 16].map { try latency(watchers: $0, commits: quick ? 10 : 50, on: .postgresql) }
            } else {
                print("observe.latency on PostgreSQL skipped: PostgreSQL is not installed (scripts/install-dependencies --test)")
            }
            return figures
        },
        Scenario(name: "observe.notify", summary: "PostgreSQL LISTEN/NOTIFY alone: commit → notification on 16 sessions; idle CPU") { quick in
            [try notify(listeners: 16, commits: quick ? 20 : 200)]
        },
    ]

    // MARK: observe.latency

    enum StoreKind: String { case sqlite, postgresql }

    static func latency(watchers count: Int, commits: Int, on kind: StoreKind) throws -> Figure {
        try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("observe.sqlite").path
            try ProductBenchmarks.buildStore(path: path, photos: 10_000, regions: 200, photographers: 2_000)
            let store = try Store(path: path, schema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator)
            let observation = kind == .sqlite ? store.observationDescription : "LISTEN/NOTIFY"
            let photos = try store.read { try $0.rows("SELECT flickrID FROM Photo ORDER BY id LIMIT ?", [.integer(Int64(commits))]) }
                .compactMap { $0[0].string }
            store.close()
            var server: PostgresTestServer?
            let location: String
            switch kind {
            case .sqlite:
                location = path
            case .postgresql:
                let started = try PostgresTestServer.shared()
                server = started
                location = try started.makeDatabase("observe")
                try Gallery.copyStore(from: path, to: location)
            }
            let gallery = try Gallery.openForWriting(location)
            defer { gallery.close() }
            let user = try gallery.user(named: GalleryUser.localName)
            let watchers = try (0..<count).map { _ in try Watcher(store: location) }
            defer { watchers.forEach { $0.stop() } }
            try HTTPBenchmarks.waitFor("every watcher's snapshot", timeout: 60) { watchers.allSatisfy { $0.snapshots > 0 } }
            let idle = try idleCPU(of: watchers.map(\.pid))

            var latencies: [Double] = []
            for (number, photo) in photos.enumerated() {
                let committed = Watcher.now()  // as the commit starts: its own time is in the figure
                _ = try gallery.view(flickrID: photo, for: user)
                try HTTPBenchmarks.waitFor("commit \(number + 1)'s batch in every watcher", timeout: 10) {
                    watchers.allSatisfy { $0.batchTimes.count > number }
                }
                latencies += watchers.map { ($0.batchTimes[number] - committed) * 1000 }
                usleep(useconds_t.random(in: 20_000...80_000))  // not in step with the watchers' polling
            }
            latencies.sort()
            var extra: [String: Any] = ["store": kind.rawValue, "watchers": count, "p50ms": percentile(latencies, 50),
                                        "p99ms": percentile(latencies, 99), "maxms": latencies.last ?? 0,
                                        "idleCpuPercentPerWatcher": idle]
            extra["observation"] = observation
            withExtendedLifetime(server) {}
            return Figure(scenario: "observe.latency", n: commits, seconds: percentile(latencies, 99) / 1000, extra: extra)
        }
    }

    /// Mean CPU of the processes over 3 s in which nothing is committed, in percent of a core.
    static func idleCPU(of pids: [Int32]) throws -> Double {
        let before = try pids.map(cpuSeconds)
        Thread.sleep(forTimeInterval: 3)
        let after = try pids.map(cpuSeconds)
        let used = zip(before, after).map { $1 - $0 }.reduce(0, +)
        return used / 3 / Double(pids.count) * 100
    }

    /// utime + stime of a process, from /proc/PID/stat.
    static func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name (field 2) may hold spaces; the fields after its ")" are fixed.
        guard let close = stat.lastIndex(of: ")") else { throw BenchError("cannot read /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw BenchError("cannot read /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func percentile(_ sorted: [Double], _ p: Int) -> Double {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * p / 100)]
    }

    // MARK: observe.notify (PostgreSQL)

    static func notify(listeners count: Int, commits: Int) throws -> Figure {
        guard PostgresTestServer.programDirectory != nil else {
            throw BenchError("PostgreSQL is not installed: scripts/install-dependencies --test")
        }
        let server = try PostgresTestServer()
        let url = try server.makeDatabase("observe")
        let writer = try PostgresConnection(url)
        try writer.execute("CREATE TABLE commits (id bigint PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())")
        let listeners = try (0..<count).map { _ in try Listener(url: url) }
        defer { listeners.forEach { $0.stop() } }
        let idleBefore = processCPUSeconds()
        Thread.sleep(forTimeInterval: 3)
        let idle = (processCPUSeconds() - idleBefore) / 3 / Double(count) * 100

        var latencies: [Double] = []
        for number in 0..<commits {
            let committed = Watcher.now()  // listeners hear of a commit before its COMMIT returns
            try writer.transaction(.readCommitted) { transaction in
                try transaction.query("INSERT INTO commits (id) VALUES ($1)", [.integer(Int64(number))])
                try transaction.query("SELECT pg_notify('history', $1)", [.text(String(number))])
            }
            try HTTPBenchmarks.waitFor("commit \(number + 1)'s notification on every session", timeout: 10) {
                listeners.allSatisfy { $0.count > number }
            }
            latencies += listeners.map { ($0.time(number) - committed) * 1000 }
            usleep(useconds_t.random(in: 5_000...20_000))
        }
        latencies.sort()
        return Figure(scenario: "observe.notify", n: commits, seconds: percentile(latencies, 99) / 1000,
                      extra: ["store": "postgresql", "layer": "libpq LISTEN/NOTIFY, no results controller", "listeners": count,
                              "p50ms": percentile(latencies, 50), "p99ms": percentile(latencies, 99), "maxms": latencies.last ?? 0,
                              "idleCpuPercentPerListener": idle])
    }

    /// This process's CPU seconds (user and system).
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}

/// `topregions watch LIST --json` in a process of its own; what it printed, and the
/// arrival time of each batch line (also by the token it brings the list to), read on a
/// thread.
final class Watcher: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    private var batches: [Double] = []
    private var arrivals: [Int64: Double] = [:]
    private var printed = ""
    private var snapshotCount = 0
    var pid: Int32 { process.processIdentifier }

    init(store: String, list: String = "recents") throws {
        process.executableURL = URL(fileURLWithPath: try ToolBinary.path())
        process.arguments = ["--store", store, "watch", list, "--json"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in read(handle) }
    }

    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    var snapshots: Int { lock.withLock { snapshotCount } }
    var batchTimes: [Double] { lock.withLock { batches } }
    /// When the batch bringing the list to each token arrived.
    var arrivalsByToken: [Int64: Double] { lock.withLock { arrivals } }
    /// Every line printed so far.
    var output: String { lock.withLock { printed } }

    private func read(_ handle: FileHandle) {
        var pending = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { return }
            let arrived = Self.now()
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pending.startIndex..<newline]
                pending = pending[pending.index(after: newline)...]
                let message = try? JSONSerialization.jsonObject(with: line) as? [String: Any]
                let type = message?["type"] as? String
                let token = (message?["token"] as? NSNumber)?.int64Value
                lock.withLock {
                    printed += String(decoding: line, as: UTF8.self) + "\n"
                    if type == "snapshot" { snapshotCount += 1 } else if type == "batch" {
                        batches.append(arrived)
                        if let token { arrivals[token] = arrived }
                    }
                }
            }
        }
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// One session that LISTENs on `history` and notes when each notification arrives.
private final class Listener: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [Int: Double] = [:]
    private var stopped = false

    init(url: String) throws {
        let connection = try PostgresConnection(url)
        try connection.listen("history")
        let box = ConnectionBox(connection)
        Thread.detachNewThread { [self] in
            let connection = box.connection
            while !lock.withLock({ stopped }) {
                guard let notifications = try? connection.notifications(waitingUpTo: 0.5) else { return }
                let arrived = Watcher.now()
                lock.withLock { for notification in notifications { if let number = Int(notification.payload) { times[number] = arrived } } }
            }
            connection.close()
        }
    }

    var count: Int { lock.withLock { times.count } }
    func time(_ number: Int) -> Double { lock.withLock { times[number] ?? .infinity } }
    func stop() { lock.withLock { stopped = true } }
}

/// A connection handed to the one thread that uses it from then on.
private struct ConnectionBox: @unchecked Sendable {
    let connection: PostgresConnection
    init(_ connection: PostgresConnection) { self.connection = connection }
}
