import Foundation
import TestSupport
import Testing

/// `watch --json` processes on a PostgreSQL store, following other processes' writes
/// through LISTEN/NOTIFY, across a restart of the database server.
@Suite("watch on a PostgreSQL store, with writers in other processes and a server restart", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresWatchCLITests {
    @Test("Four watchers follow four writing processes through a server restart; each one's replayed batches equal the list (seed printed)")
    func watchersFollowWritersThroughRestart() throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresWatchCLITests.watchersFollowWritersThroughRestart")
        var random = SeededGenerator(seed: seed)
        let server = try PostgresTestServer()
        let database = try server.makeDatabase("watch")
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "2"]).status == 0)
        #expect(try tool.run(["copy", "--to", database]).status == 0)
        let region = try #require((try tool.run(["--json", "regions", "--limit", "1"]).json as? [[String: Any]])?.first?["id"] as? String)
        let photos = try #require(try tool.run(["--json", "photos", "--region", region]).json as? [[String: Any]]).compactMap { $0["id"] as? String }
        try #require(photos.count >= 12, "the sample's top region should have 12 photos")
        for photo in photos.prefix(6) { #expect(try tool.runWithoutStore(["--store", database, "favorites", "add", photo]).status == 0) }

        let lists = ["recents", "recents", "favorites", "favorites"]
        var watchers: [(list: String, process: Process, output: LogReader)] = []
        defer { for watcher in watchers where watcher.process.isRunning { kill(watcher.process.processIdentifier, SIGKILL) } }
        for list in lists {
            let (process, out, _) = try tool.process(["watch", list, "--json"], on: database)
            watchers.append((list, process, LogReader(out)))
        }
        for watcher in watchers { #expect(watcher.output.wait(for: "\"snapshot\"", count: 1), "\(watcher.list) started") }

        func runWriters(_ rounds: Int) throws -> [String: Int] {
            let scripts = (0..<4).map { _ in
                (0..<rounds).map { _ -> [String] in
                    Int.random(in: 0..<3, using: &random) == 0
                        ? ["favorites", "move", String(Int.random(in: 1...6, using: &random)), String(Int.random(in: 1...6, using: &random))]
                        : ["view", photos[Int.random(in: 0..<photos.count, using: &random)]]
                }
            }
            return try ShellWorkers.exitStatuses(scripts, store: database)
        }
        let before = try runWriters(5)
        #expect(before.keys.sorted() == ["0"], "seed \(seed): \(before)")
        try server.restart()
        let after = try runWriters(5)
        // A command that met the restart may say to try again (75); none fails otherwise.
        #expect(Set(after.keys).isSubset(of: ["0", "75"]) && after["0", default: 0] > 10, "seed \(seed): \(after)")

        let expected = [
            "recents": try #require(try tool.runWithoutStore(["--store", database, "--json", "recents"]).json as? [[String: Any]]).map(WatchReplay.id),
            "favorites": try #require(try tool.runWithoutStore(["--store", database, "--json", "favorites"]).json as? [[String: Any]]).map(WatchReplay.id),
        ]
        for watcher in watchers {
            let replay = try WatchReplay.reaching(expected[watcher.list] ?? []) { watcher.output.text }
            #expect(replay.ids == expected[watcher.list], "seed \(seed): \(watcher.list) replayed \(replay.ids), listed \(expected[watcher.list] ?? [])")
            #expect(replay.tokens == replay.tokens.sorted() && Set(replay.tokens).count == replay.tokens.count,
                    "seed \(seed): \(watcher.list)'s batches come in token order, none twice: \(replay.tokens)")
            kill(watcher.process.processIdentifier, SIGTERM)
            watcher.process.waitUntilExit()
            #expect(watcher.process.terminationStatus == 0, "\(watcher.list) ends cleanly on SIGTERM")
        }
    }

    @Test("A watcher hears what psql writes row by row: one delete, the other rows untouched; its replayed batches equal the list after")
    func watcherHearsPsql() throws {
        let tool = try Tool()
        let database = try PostgresTestServer.shared().makeDatabase("watchpsql")
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        #expect(try tool.run(["copy", "--to", database]).status == 0)
        let region = try #require((try tool.run(["--json", "regions", "--limit", "1"]).json as? [[String: Any]])?.first?["id"] as? String)
        let photos = try #require(try tool.run(["--json", "photos", "--region", region]).json as? [[String: Any]]).compactMap { $0["id"] as? String }
        try #require(photos.count >= 4)
        for photo in photos.prefix(4) { #expect(try tool.runWithoutStore(["--store", database, "favorites", "add", photo]).status == 0) }
        let (watcher, out, _) = try tool.process(["watch", "favorites", "--json"], on: database)
        defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }
        let output = LogReader(out)
        #expect(output.wait(for: "\"snapshot\"", count: 1), "the watcher started")

        let psql = Process()
        psql.executableURL = URL(fileURLWithPath: try PostgresTestServer.shared().program("psql"))
        psql.arguments = [database, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                          "DELETE FROM favorite WHERE displayorder = (SELECT min(displayorder) FROM favorite)"]
        try psql.run()
        psql.waitUntilExit()
        #expect(psql.terminationStatus == 0)

        let expected = try #require(try tool.runWithoutStore(["--store", database, "--json", "favorites"]).json as? [[String: Any]]).map(WatchReplay.id)
        #expect(expected.count == 3)
        let replay = try WatchReplay.reaching(expected) { output.text }
        #expect(replay.ids == expected, "replayed \(replay.ids), listed \(expected)")
        let batches = replay.messages.dropFirst()
        let rows = { (key: String) in batches.flatMap { ($0[key] as? [Any]) ?? [] }.count }
        #expect(rows("deletes") == 1 && rows("inserts") == 0 && rows("moves") == 0 && rows("updates") == 0,
                "one delete, nothing said of the rows psql did not touch: \(batches)")
        kill(watcher.processIdentifier, SIGTERM)
        watcher.waitUntilExit()
        #expect(watcher.terminationStatus == 0)
    }
}
