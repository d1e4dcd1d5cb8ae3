import Foundation
import PostgreSQL
import TestSupport
import Testing

/// Daemons on several hosts against one PostgreSQL database: one pass at a time (the
/// advisory sync lock), a daemon killed mid-pass releasing it, watchers following along.
@Suite("sync and daemons on a PostgreSQL store", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresDaemonCLITests {
    /// The JSON lines a daemon logged.
    private func events(_ log: LogReader) -> [[String: Any]] {
        log.text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("sync into PostgreSQL gives the regions and photos a sync into a file gives; a second sync while the lock is held exits 75")
    func syncAgreesWithSQLite() throws {
        let tool = try Tool()
        let database = try PostgresTestServer.shared().makeDatabase("sync")
        #expect(try tool.run(["sync"]).status == 0)
        let synced = try tool.runWithoutStore(["--store", database, "--json", "sync"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect((synced.json as? [String: Any])?["result"] as? String == "newData")
        for words in [["regions"], ["regions", "--by-country"], ["photos", "--region", "Paris"], ["status"]] {
            let onFile = try tool.run(["--json"] + words), onDatabase = try tool.runWithoutStore(["--store", database, "--json"] + words)
            if words == ["status"] {
                let counts = { (run: Tool.Run) in ["photos", "regions", "photographers", "pendingPlaces"].map { (run.json as? [String: Any])?[$0] as? Int } }
                #expect(counts(onDatabase) == counts(onFile))
            } else {
                #expect(onDatabase.stdout == onFile.stdout && onDatabase.status == onFile.status, "\(words)")
            }
        }
        #expect(try tool.runWithoutStore(["--store", database, "check"]).stdout.contains("ok"))
        let again = try tool.runWithoutStore(["--store", database, "--json", "sync"])
        #expect((again.json as? [String: Any])?["result"] as? String == "noData")

        // Another session holding the sync lock is another pass running: exit 75, nothing done.
        let holder = try PostgresConnection(database)
        defer { holder.close() }
        // The key docs/operations.md gives.
        #expect(try holder.tryAdvisoryLock(0x746f_7072_6567_6e73))
        let refused = try tool.runWithoutStore(["--store", database, "sync"])
        #expect(refused.status == 75 && refused.stderr.contains("another sync is running"), "\(refused.stderr)")
    }

    @Test("--pool (else TOPREGIONS_POSTGRES_POOL) sizes a process's PostgreSQL connections: 1 to 64, anything else a usage error naming it")
    func poolOption() throws {
        let tool = try Tool()
        let database = try PostgresTestServer.shared().makeDatabase("pool")
        #expect(try tool.runWithoutStore(["--store", database, "migrate"]).status == 0)
        for (words, environment, named) in [(["--pool", "0"], [:], "--pool"), (["--pool=65"], [:], "--pool"), (["--pool", "abc"], [:], "--pool"),
                                            ([], ["TOPREGIONS_POSTGRES_POOL": "0"], "TOPREGIONS_POSTGRES_POOL")] {
            let refused = try tool.runWithoutStore(["--store", database] + words + ["regions"], environment: environment)
            #expect(refused.status == 64 && refused.stderr.contains("\(named) must be a number of connections from 1 to 64"), "\(words) \(refused.stderr)")
        }
        let given = try tool.runWithoutStore(["--store", database, "--pool", "3", "--json", "status"], environment: ["TOPREGIONS_POSTGRES_POOL": "0"])
        #expect(given.status == 0, "--pool wins over the environment: \(given.stderr)")
        #expect(try tool.runWithoutStore(["--store", database, "regions", "--pool", "64"]).status == 0, "after the command too")
        #expect(try tool.runWithoutStore(["--store", database, "--pool", "2", "--pool", "2", "regions"]).status == 64, "given twice")
    }

    @Test("status on PostgreSQL lists every daemon of the database, from any host's view; one killed leaves the list; a session posing as one shows what it claims, no more")
    func statusListsDaemons() throws {
        let tool = try Tool()
        let database = try PostgresTestServer.shared().makeDatabase("presence")
        #expect(try tool.runWithoutStore(["--store", database, "migrate"]).status == 0)
        func daemons() throws -> (json: [String: Any]?, line: String) {
            let json = (try tool.runWithoutStore(["--store", database, "--json", "status"]).json as? [String: Any])?["daemon"] as? [String: Any]
            let text = try tool.runWithoutStore(["--store", database, "status"]).stdout
            return (json, text.split(separator: "\n").first { $0.hasPrefix("daemon") }.map(String.init) ?? "")
        }
        #expect(try daemons().json == nil && daemons().line.hasSuffix("not running"))
        var processes: [Process] = []
        defer { for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        for _ in 0..<2 {
            let (process, _, err) = try tool.process(["daemon", "--interval", "1h", "--endpoint", "http://127.0.0.1:9/services/rest/",
                                                      "--rate-limit", "none"], on: database)
            processes.append(process)
            #expect(LogReader(err).wait(for: "event=sleep", count: 1))
        }
        let pids = processes.map { Int($0.processIdentifier) }
        let two = try daemons()
        #expect(pids.contains(two.json?["pid"] as? Int ?? 0) && (two.json?["host"] as? String)?.isEmpty == false, "\(two.json ?? [:])")
        #expect(two.line.contains("2 running") && pids.allSatisfy { two.line.contains("pid \($0) here") }, "\(two.line)")

        kill(processes[0].processIdentifier, SIGKILL)
        processes[0].waitUntilExit()
        #expect(eventually(timeout: 10) { (try? daemons().line.contains("running (pid \(pids[1]))")) == true }, "the killed daemon leaves: \((try? daemons().line) ?? "")")

        // A session posing as a daemon of another host (a session's name is anyone's), and
        // one holding the key with a name that says nothing.
        let posing = try PostgresConnection(database), silent = try PostgresConnection(database)
        defer { posing.close(); silent.close() }
        _ = try posing.query("SET application_name = 'topregions daemon 4242@elsewhere'")
        _ = try silent.query("SET application_name = 'topregions daemon x@y, pid 2 on z'")
        // The key docs/operations.md gives.
        for connection in [posing, silent] { try connection.advisoryLockShared(0x746f_7072_6461_656d) }
        let three = try daemons()
        #expect(!three.line.contains("pid 2 on z"), "a name that is not one this program gives adds no daemon: \(three.line)")
        #expect(three.line.contains("3 running") && three.line.contains("pid \(pids[1]) here") && three.line.contains("pid 4242 on elsewhere")
                && three.line.contains("pid not known on a host not known"), "\(three.line)")
        #expect(three.json?["pid"] as? Int == pids[1], "this host's daemon is the one shown: \(three.json ?? [:])")
    }

    @Test("A daemon sleeping between passes shows in status again soon after the database server restarts (it confirms its session every few seconds)")
    func daemonReappearsAfterRestart() throws {
        let tool = try Tool()
        let server = try PostgresTestServer()  // its own: restarted
        let database = try server.makeDatabase("restart")
        #expect(try tool.runWithoutStore(["--store", database, "migrate"]).status == 0)
        let (process, _, err) = try tool.process(["daemon", "--interval", "1h", "--endpoint", "http://127.0.0.1:9/services/rest/",
                                                  "--rate-limit", "none"], on: database)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(LogReader(err).wait(for: "event=sleep", count: 1))
        func shownPID() -> Int? {
            let status = try? tool.runWithoutStore(["--store", database, "--json", "status"])
            return ((status?.json as? [String: Any])?["daemon"] as? [String: Any])?["pid"] as? Int
        }
        #expect(shownPID() == Int(process.processIdentifier))
        try server.restart()
        // It confirms every 5 s; its next pass is an hour away.
        #expect(eventually(timeout: 20) { shownPID() == Int(process.processIdentifier) }, "shown again within seconds")
        #expect(process.isRunning, "the restart did not stop it")
    }

    @Test("Two daemons on one database: passes never overlap; one killed mid-pass leaves nothing half-written and the other takes over; watchers end equal to the query")
    func twoDaemons() throws {
        let tool = try Tool()
        let database = try PostgresTestServer.shared().makeDatabase("daemons")
        #expect(try tool.run(["sync"]).status == 0)  // the file, for the expected answers
        var processes: [Process] = []
        defer { for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func daemon() throws -> (Process, LogReader) {
            let (process, _, err) = try tool.process(["--json", "daemon", "--interval", "0.05s"], on: database)
            processes.append(process)
            return (process, LogReader(err))
        }
        // The first daemon creates the store and starts its first pass; killed once it has
        // stored pages and before it has resolved their places.
        let (first, firstLog) = try daemon()
        #expect(firstLog.wait(for: "\"progress\"", count: 1), "the first pass stores pages: \(firstLog.text)")
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()

        var watchers: [(Process, LogReader)] = []
        for _ in 0..<2 {
            let (process, out, _) = try tool.process(["watch", "regions", "--json"], on: database)
            processes.append(process)
            watchers.append((process, LogReader(out)))
        }
        for (_, output) in watchers { #expect(output.wait(for: "\"snapshot\"", count: 1)) }
        let (second, secondLog) = try daemon()
        let (third, thirdLog) = try daemon()
        // Passes go on until each daemon has run a few (the one after the kill reads every
        // page again: that pass never finished).
        let deadline = Date().addingTimeInterval(60)
        func passes(_ log: LogReader) -> [[String: Any]] { events(log).filter { $0["event"] as? String == "sync" } }
        while (passes(secondLog).count < 3 || passes(thirdLog).count < 3) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        for process in [second, third] { kill(process.processIdentifier, SIGTERM) }
        for process in [second, third] { process.waitUntilExit() }
        #expect(second.terminationStatus == 0 && third.terminationStatus == 0)
        let all = passes(secondLog) + passes(thirdLog)
        #expect(all.allSatisfy { $0["result"] as? String != "failed" }, "\(all)")
        #expect(passes(secondLog).count >= 3 && passes(thirdLog).count >= 3, "both daemons ran passes")
        let skipped = (events(secondLog) + events(thirdLog)).filter { $0["event"] as? String == "sync-skipped" }.count
        print("two daemons: \(all.count) passes, \(skipped) skipped while the other ran one")

        // The lock let one pass run at a time: the runs recorded never overlap (the killed
        // pass's run has no end).
        let psql = try PostgresConnection(database)
        defer { psql.close() }
        let runs = try psql.query("SELECT startedat, finishedat FROM syncrun WHERE finishedat IS NOT NULL ORDER BY startedat").rows
            .compactMap { row -> (Double, Double)? in
                guard let start = row[0].flatMap(Double.init), let end = row[1].flatMap(Double.init) else { return nil }
                return (start, end)
            }
        let cancelled = (events(secondLog) + events(thirdLog)).filter { $0["event"] as? String == "sync-cancelled" }.count
        #expect(runs.count == all.count + cancelled, "every pass is on record (one stopped by SIGTERM as cancelled)")
        for (earlier, later) in zip(runs, runs.dropFirst()) { #expect(earlier.1 <= later.0, "runs \(earlier) and \(later) overlap") }
        let unfinished = try psql.query("SELECT count(*) FROM syncrun WHERE finishedat IS NULL").rows.first?.first ?? nil
        #expect(unfinished == "1", "the killed pass's run stays unfinished")

        #expect(try tool.runWithoutStore(["--store", database, "check"]).stdout.contains("ok"))
        let expected = try tool.run(["--json", "regions"])
        let actual = try tool.runWithoutStore(["--store", database, "--json", "regions"])
        #expect(actual.stdout == expected.stdout, "the killed pass left nothing half-written: the store is the file's")
        let listed = try #require(expected.json as? [[String: Any]]).map(WatchReplay.id)
        for (process, output) in watchers {
            let replay = try WatchReplay.reaching(listed) { output.text }
            #expect(replay.ids == listed, "a watcher's replayed regions are the list")
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }
}
