import Foundation
import TestSupport
import Testing

@Suite("topregions migrate, copy, check and status with a PostgreSQL store", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresCopyCLITests {
    @Test("A gallery moved up to PostgreSQL and back to a file answers every query as the original did; the password is never shown")
    func moveUpAndBack() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "2"]).status == 0)
        let regions = try #require(try tool.run(["--json", "regions", "--limit", "2"]).json as? [[String: Any]]).compactMap { $0["id"] as? String }
        let photos = regions.flatMap { region in (try? tool.run(["--json", "photos", "--region", region]).json as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? [] }
        try #require(photos.count >= 3)
        #expect(try tool.run(["users", "add", "ann"]).status == 0)
        for photo in photos.prefix(3) { #expect(try tool.run(["view", photo, "--user", "ann"]).status == 0) }
        #expect(try tool.run(["favorites", "add", photos[2]]).status == 0)
        #expect(try tool.run(["favorites", "add", photos[0]]).status == 0)

        // A password in the URL (the test server trusts loopback and ignores it) is never printed.
        let plain = try PostgresTestServer.shared().makeDatabase("cli")
        let database = plain.replacingOccurrences(of: "postgres@", with: "postgres:pw-hunter2@")
        let redacted = plain.replacingOccurrences(of: "postgres@", with: "postgres:***@")
        let up = try tool.run(["--json", "copy", "--to", database])
        #expect(up.status == 0, "\(up.stderr)")
        let report = try #require(up.json as? [String: Any])
        #expect(report["to"] as? String == redacted)
        #expect((report["check"] as? [String: Any])?["ok"] as? Bool == true)
        #expect(report["photos"] as? Int ?? 0 > 0)

        let check = try tool.runWithoutStore(["--store", database, "check"])
        #expect(check.status == 0 && check.stdout == "ok\n", "\(check.stderr)")
        let migrate = try tool.runWithoutStore(["migrate"], environment: ["TOPREGIONS_STORE": database])
        #expect(migrate.status == 0 && migrate.stdout.contains("has this program's schema") && migrate.stdout.contains(redacted), "\(migrate.stderr)")
        let again = try tool.run(["copy", "--to", database])
        #expect(again.status == 1 && again.stderr.contains("overwrites nothing"), "\(again.stderr)")
        // status reads the same counts and last sync from PostgreSQL.
        let status = try tool.runWithoutStore(["--store", database, "--json", "status"])
        var statusFields = try #require(status.json as? [String: Any], "\(status.stderr)")
        var originalFields = try #require(try tool.run(["--json", "status"]).json as? [String: Any])
        #expect(statusFields.removeValue(forKey: "store") as? String == redacted)
        originalFields.removeValue(forKey: "store")
        // How a watcher hears of commits is the store kind's own.
        #expect(statusFields.removeValue(forKey: "observation") as? String == "LISTEN/NOTIFY")
        #expect(originalFields.removeValue(forKey: "observation") as? String == "inotify")
        #expect(NSDictionary(dictionary: statusFields) == NSDictionary(dictionary: originalFields), "\(statusFields) vs \(originalFields)")
        #expect((originalFields["photos"] as? Int ?? 0) > 0 && originalFields["lastSync"] is [String: Any])

        // Every reading command answers from PostgreSQL as from the file: rows, order, text
        // and JSON, errors and their suggestions.
        let queries = [["regions", "--limit", "1000"], ["regions", "--by-country"], ["photos", "--region", regions[0]],
                       ["photos", "--region", regions[1], "--by-photographer"], ["photo", photos[1]], ["photo", "1"],
                       ["photos", "--region", "nowhere at all"], ["recents", "--user", "ann"], ["recents"], ["recents", "--user", "zed"],
                       ["favorites"], ["favorites", "--user", "ann"], ["users"], ["users", "list"]]
        for words in queries {
            for format in [[], ["--json"]] {
                let original = try tool.run(format + words)
                let fromPostgres = try tool.runWithoutStore(["--store", database] + format + words)
                #expect(fromPostgres.status == original.status && fromPostgres.stdout == original.stdout && fromPostgres.stderr == original.stderr,
                        "\(format + words): \(fromPostgres.stderr) vs \(original.stderr)")
            }
        }

        let back = tool.directory.appendingPathComponent("back.sqlite").path
        let down = try tool.runWithoutStore(["copy", "--from", database, "--to", back])
        #expect(down.status == 0 && down.stdout.contains("check: ok"), "\(down.stderr)")
        let mode = (try FileManager.default.attributesOfItem(atPath: back)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600, "a copy out of PostgreSQL is its user's only, as a store is: \(String(mode ?? 0, radix: 8))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tool.directory.path).filter { $0.hasPrefix(".topregions-copy") } == [])
        for words in [["regions", "--limit", "1000"], ["regions", "--by-country"], ["photos", "--region", regions[0]],
                      ["recents", "--user", "ann"], ["favorites"], ["users"]] {
            let original = try tool.run(["--json"] + words)
            let copied = try tool.runWithoutStore(["--store", back, "--json"] + words)
            #expect(original.status == 0 && copied.stdout == original.stdout, "\(words) is the same on the copy: \(original.stderr)")
        }
        for run in [up, check, migrate, again, status, down] {
            #expect(!(run.stdout + run.stderr).contains("hunter2"))
        }
    }

    @Test("migrate, then copy (the order operations.md gives) fills the database; a migrated store someone has used since is refused and left as it was")
    func copyAfterMigrate() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        let database = try PostgresTestServer.shared().makeDatabase("migrated")
        #expect(try tool.runWithoutStore(["--store", database, "migrate"]).status == 0)
        let copied = try tool.run(["--json", "copy", "--to", database])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect((copied.json as? [String: Any])?["photos"] as? Int == (try tool.run(["--json", "status"]).json as? [String: Any])?["photos"] as? Int)
        #expect(try tool.runWithoutStore(["--store", database, "check"]).stdout == "ok\n")
        for words in [["regions"], ["users"]] {
            #expect(try tool.runWithoutStore(["--store", database] + words).stdout == (try tool.run(words)).stdout, "\(words)")
        }

        let used = try PostgresTestServer.shared().makeDatabase("used")
        #expect(try tool.runWithoutStore(["--store", used, "migrate"]).status == 0)
        #expect(try tool.runWithoutStore(["--store", used, "users", "add", "ann"]).status == 0)
        let refused = try tool.run(["copy", "--to", used])
        #expect(refused.status == 1 && refused.stderr.contains("overwrites nothing"), "\(refused.stderr)")
        #expect(try tool.runWithoutStore(["--store", used, "users"]).stdout.contains("ann"), "ann is still there")
    }

    @Test("Notices a server sends while a session starts (the database asks for DEBUG messages) are never printed")
    func noticesWhileConnecting() throws {
        let tool = try Tool()
        let database = try PostgresTestServer.shared().makeDatabase("notices")
        let name = try #require(database.split(separator: "/").last.map(String.init))
        let alter = Process()
        alter.executableURL = URL(fileURLWithPath: try PostgresTestServer.shared().program("psql"))
        alter.arguments = [database, "-X", "-q", "-c", "ALTER DATABASE \(name) SET client_min_messages = debug5"]
        try alter.run()
        alter.waitUntilExit()
        #expect(alter.terminationStatus == 0)
        for words in [["migrate"], ["regions"], ["users"], ["status"]] {
            let run = try tool.runWithoutStore(["--store", database] + words)
            #expect(run.status == 0 && run.stderr.isEmpty, "\(words): \(run.stderr.prefix(300))")
        }
    }

    @Test("A database of a newer program is refused by migrate, check and copy, and left as it was")
    func newerDatabaseRefused() throws {
        let tool = try Tool()
        let database = try PostgresTestServer.shared().makeDatabase("newer")
        #expect(try tool.runWithoutStore(["--store", database, "migrate"]).status == 0)
        let psql = try PostgresTestServer.shared().program("psql")
        let insert = Process()
        insert.executableURL = URL(fileURLWithPath: psql)
        insert.arguments = [database, "-q", "-c", "INSERT INTO store_migrations VALUES ('topregions.v9.later', 0)"]
        try insert.run()
        insert.waitUntilExit()
        #expect(insert.terminationStatus == 0)
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        for words in [["--store", database, "migrate"], ["--store", database, "check"], ["copy", "--from", tool.store, "--to", database]] {
            let run = try tool.runWithoutStore(words)
            #expect(run.status == 1 && run.stderr.contains("newer version"), "\(words): \(run.stderr)")
        }
    }

    @Test("A copy into PostgreSQL killed (SIGKILL) at random moments leaves the database empty or whole, never half (seed printed)")
    func killedCopyLeavesNothingHalf() throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresCopyCLITests.killedCopyLeavesNothingHalf")
        var random = SeededGenerator(seed: seed)
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "3"]).status == 0)
        let photos = try #require(try tool.run(["--json", "status"]).json as? [String: Any])["photos"] as? Int
        var database = try PostgresTestServer.shared().makeDatabase("killed")
        var outcomes: [String: Int] = [:]
        for round in 0..<8 {
            let (process, _, _) = try tool.process(["copy", "--to", database])
            usleep(UInt32.random(in: 0...700_000, using: &random))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let check = try tool.runWithoutStore(["--store", database, "--json", "status"])
            if check.status == 0 {
                // Whole: every photo, and sound.
                let copied = (check.json as? [String: Any])?["photos"] as? Int
                #expect(copied == photos, "round \(round), seed \(seed): \(copied ?? -1) of \(photos ?? -1) photos")
                #expect(try tool.runWithoutStore(["--store", database, "check"]).status == 0, "round \(round), seed \(seed)")
                outcomes["whole", default: 0] += 1
                database = try PostgresTestServer.shared().makeDatabase("killed")
            } else {
                #expect(check.stderr.contains("there is no store"), "round \(round), seed \(seed): \(check.stderr)")
                outcomes["empty", default: 0] += 1
            }
        }
        print("killed copies, seed \(seed): \(outcomes)")
        // The next copy into a database a killed copy left empty works.
        #expect(try tool.run(["copy", "--to", database]).status == 0)
    }
}
