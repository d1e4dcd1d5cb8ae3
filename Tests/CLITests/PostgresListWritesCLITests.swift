import Foundation
import Store
import TestSupport
import Testing
@testable import TopRegionsKit

@Suite("view and favorites on a PostgreSQL store, from many processes at once", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresListWritesCLITests {
    /// The Flickr ids of the photos in the top regions of the tool's store.
    private func shownPhotos(_ tool: Tool, regions: Int) throws -> [String] {
        let ids = try #require(try tool.run(["--json", "regions", "--limit", String(regions)]).json as? [[String: Any]]).compactMap { $0["id"] as? String }
        return ids.flatMap { region in
            (try? tool.run(["--json", "photos", "--region", region]).json as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
        }
    }

    /// A database holding two sample pages' gallery, and the first `count` photos its top
    /// ten regions show (at least `least` of them), the last `favorites` of them made the
    /// local user's Favorites in order.
    private func galleryWithFavorites(_ tool: Tool, database prefix: String, photos count: Int, least: Int,
                                      favorites: Int) throws -> (database: String, photos: [String]) {
        #expect(try tool.run(["sync", "--pages", "2"]).status == 0)
        let database = try PostgresTestServer.shared().makeDatabase(prefix)
        #expect(try tool.run(["copy", "--to", database]).status == 0)
        let photos = Array(try shownPhotos(tool, regions: 10).prefix(count))
        try #require(photos.count >= least, "the sample should have \(least) photos in its top regions")
        for photo in photos.suffix(favorites) {
            let added = try tool.runWithoutStore(["--store", database, "favorites", "add", photo])
            #expect(added.status == 0, "\(added.stderr)")
        }
        return (database, photos)
    }

    @Test("Processes viewing photos and moving Favorites at once leave 20 Recents, each photo once, and Favorites in distinct places (seed printed)")
    func manyProcessesAtOnce() throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresListWritesCLITests.manyProcessesAtOnce")
        var random = SeededGenerator(seed: seed)
        let tool = try Tool()
        let (database, photos) = try galleryWithFavorites(tool, database: "writers", photos: 40, least: 30, favorites: 8)
        let favorites = Array(photos.suffix(8))

        // Eight shells at once, each running its commands one after another and printing
        // each one's exit status.
        let executable = try Tool.executable().path
        var workers: [(Process, Pipe, Pipe)] = []
        for _ in 0..<8 {
            let commands = (0..<8).map { _ -> String in
                let words = Int.random(in: 0..<4, using: &random) == 0
                    ? ["favorites", "move", String(Int.random(in: 1...8, using: &random)), String(Int.random(in: 1...8, using: &random))]
                    : ["view", photos[Int.random(in: 0..<photos.count, using: &random)]]
                let line = ([executable, "--store", database] + words).map { "'\($0)'" }.joined(separator: " ")
                return "\(line) >/dev/null; echo \"$? \(words.joined(separator: " "))\""
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", commands.joined(separator: "\n")]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            workers.append((process, out, err))
        }
        var viewed = Set<String>()
        var statuses: [String: Int] = [:]
        for (process, out, err) in workers {
            let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
            let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            for line in lines {
                let words = line.split(separator: " ").map(String.init)
                statuses[words[0], default: 0] += 1
                if words[0] == "0", words[1] == "view" { viewed.insert(words[2]) }
            }
            #expect(errors.isEmpty || errors.contains("try again"), "seed \(seed): \(errors)")
        }
        print("processes at once, seed \(seed): exit statuses \(statuses)")
        // Every command did its work: writers that collided retried in turn.
        #expect(Set(statuses.keys) == ["0"], "seed \(seed): \(statuses)")

        let recents = try #require(try tool.runWithoutStore(["--store", database, "--json", "recents"]).json as? [[String: Any]])
        let recentIDs = recents.compactMap { $0["id"] as? String }
        #expect(recentIDs.count == min(20, viewed.count), "seed \(seed)")
        #expect(Set(recentIDs).count == recentIDs.count && Set(recentIDs).isSubset(of: viewed), "seed \(seed): \(recentIDs)")
        let listed = try #require(try tool.runWithoutStore(["--store", database, "--json", "favorites"]).json as? [[String: Any]])
        #expect(listed.compactMap { $0["position"] as? Int } == Array(1...8), "seed \(seed)")
        #expect(Set(listed.compactMap { $0["id"] as? String }) == Set(favorites), "seed \(seed)")
        let psql = Process()
        psql.executableURL = URL(fileURLWithPath: try PostgresTestServer.shared().program("psql"))
        psql.arguments = [database, "-At", "-c", "SELECT string_agg(displayorder::text, ',' ORDER BY displayorder) FROM favorite"]
        let places = Pipe()
        psql.standardOutput = places
        try psql.run()
        let stored = String(decoding: places.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        psql.waitUntilExit()
        #expect(stored == "0,1,2,3,4,5,6,7\n", "seed \(seed): the places stored, none shared or skipped")
        let check = try tool.runWithoutStore(["--store", database, "check"])
        #expect(check.status == 0 && check.stdout == "ok\n", "seed \(seed): \(check.stdout) \(check.stderr)")
    }

    @Test("view and favorites on PostgreSQL print what they print on the file, errors included")
    func sameAnswersAsTheFile() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        let database = try PostgresTestServer.shared().makeDatabase("writes")
        #expect(try tool.run(["copy", "--to", database]).status == 0)
        let photos = try shownPhotos(tool, regions: 3)
        try #require(photos.count >= 3)
        let steps: [[String]] = [["favorites"], ["favorites", "add", photos[0]], ["favorites", "add", photos[1]], ["favorites", "add", photos[0]],
                                 ["favorites", "move", "2", "1"], ["favorites", "move", "1", "5"], ["favorites", "remove", photos[2]],
                                 ["favorites", "remove", photos[0]], ["favorites", "add", "1"], ["favorites", "--user", "ann"],
                                 ["view", photos[2], "--user", "zed"], ["favorites", "add", photos[2], "--user", "nobody"],
                                 ["favorites", "move", "x", "1"], ["recents"]]
        for words in steps {
            for format in [[], ["--json"]] {
                let onFile = try tool.run(format + words)
                let onPostgres = try tool.runWithoutStore(["--store", database] + format + words)
                #expect(onPostgres.status == onFile.status && onPostgres.stdout == onFile.stdout && onPostgres.stderr == onFile.stderr,
                        "\(format + words): \(onPostgres.stdout)\(onPostgres.stderr) vs \(onFile.stdout)\(onFile.stderr)")
            }
        }
        // A view's time is its own: the same photo, the same fields.
        let viewedOnFile = try #require(try tool.run(["--json", "view", photos[1]]).json as? [String: Any])
        let viewedOnPostgres = try #require(try tool.runWithoutStore(["--store", database, "--json", "view", photos[1]]).json as? [String: Any])
        #expect(Set(viewedOnFile.keys) == Set(viewedOnPostgres.keys) && viewedOnPostgres["id"] as? String == photos[1])
        let recents = try #require(try tool.runWithoutStore(["--store", database, "--json", "recents"]).json as? [[String: Any]])
        #expect(recents.first?["id"] as? String == photos[1])
        #expect(try tool.runWithoutStore(["--store", database, "check"]).stdout == "ok\n")
        // A role the server does not know will not pass by waiting: status 1, not 75.
        let stranger = try tool.runWithoutStore(["--store", database.replacingOccurrences(of: "postgres@", with: "nobody@"), "regions"])
        #expect(stranger.status == 1 && stranger.stderr.contains("nobody"), "\(stranger.stderr)")
    }

    @Test("users add, token --rotate and remove on PostgreSQL: a token shown once works, the old one stops, a removed user's lists go")
    func usersOnPostgres() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        let database = try PostgresTestServer.shared().makeDatabase("users")
        #expect(try tool.run(["copy", "--to", database]).status == 0)
        let photos = try shownPhotos(tool, regions: 2)
        try #require(photos.count >= 2)
        let added = try tool.runWithoutStore(["--store", database, "--json", "users", "add", "ann"])
        let first = try #require((added.json as? [String: Any])?["token"] as? String, "\(added.stderr)")
        let again = try tool.runWithoutStore(["--store", database, "users", "add", "ann"])
        #expect(try tool.run(["users", "add", "ann"]).status == 0)
        let againOnFile = try tool.run(["users", "add", "ann"])
        #expect(again.status == againOnFile.status && again.stderr == againOnFile.stderr, "\(again.stderr) vs \(againOnFile.stderr)")
        #expect(again.status == 1 && again.stderr.contains("already called ann"), "\(again.stderr)")
        let listed = try #require(try tool.runWithoutStore(["--store", database, "--json", "users"]).json as? [[String: Any]])
        #expect(listed.first { $0["name"] as? String == "ann" }?["hasToken"] as? Bool == true)

        let postgres = try PostgresGallery(location: database)
        defer { postgres.close() }
        let annID = try #require(try postgres.authenticate(token: first)).id
        let rotated = try tool.runWithoutStore(["--store", database, "--json", "users", "token", "ann", "--rotate"])
        let second = try #require((rotated.json as? [String: Any])?["token"] as? String, "\(rotated.stderr)")
        #expect(second != first)
        #expect(try postgres.authenticate(token: first) == nil, "the old token stops working")
        #expect(try postgres.authenticate(token: second)?.name == "ann")

        #expect(try tool.runWithoutStore(["--store", database, "view", photos[0], "--user", "ann"]).status == 0)
        #expect(try tool.runWithoutStore(["--store", database, "favorites", "add", photos[1], "--user", "ann"]).status == 0)
        let removed = try tool.runWithoutStore(["--store", database, "users", "remove", "ann"])
        #expect(removed.status == 0, "\(removed.stderr)")
        let gone = try tool.runWithoutStore(["--store", database, "recents", "--user", "ann"])
        #expect(gone.status == 1 && gone.stderr.contains("no user is called ann"), "\(gone.stderr)")
        #expect(try tool.runWithoutStore(["--store", database, "check"]).stdout == "ok\n", "the removed user's Recents and Favorites went with her")
        // A new user never gets a removed user's id (its lists' streams are named by it).
        let readded = try tool.runWithoutStore(["--store", database, "users", "add", "ann"])
        #expect(readded.status == 0)
        #expect(try #require(try postgres.existingUser(named: "ann")).id > annID, "a removed user's id is never given again")
    }

    @Test("Sixty-four processes moving one user's Favorites and viewing photos at once all succeed: writers that collided retry in turn (seed printed)")
    func manyWritersAllSucceed() throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresListWritesCLITests.manyWritersAllSucceed")
        var random = SeededGenerator(seed: seed)
        let tool = try Tool()
        let (database, photos) = try galleryWithFavorites(tool, database: "crowd", photos: 40, least: 30, favorites: 8)
        // Without turns, a tenth of these commands ran out of attempts here (exit 75).
        let scripts = (0..<64).map { _ in
            (0..<3).map { _ -> [String] in
                Int.random(in: 0..<3, using: &random) != 0
                    ? ["favorites", "move", String(Int.random(in: 1...8, using: &random)), String(Int.random(in: 1...8, using: &random))]
                    : ["view", photos[Int.random(in: 0..<photos.count, using: &random)]]
            }
        }
        let statuses = try ShellWorkers.exitStatuses(scripts, store: database)
        #expect(statuses == ["0": 192], "seed \(seed): exit statuses \(statuses)")
        let recents = try #require(try tool.runWithoutStore(["--store", database, "--json", "recents"]).json as? [[String: Any]])
        #expect(recents.count <= 20 && Set(recents.compactMap { $0["id"] as? String }).count == recents.count, "seed \(seed)")
        let favorites = try #require(try tool.runWithoutStore(["--store", database, "--json", "favorites"]).json as? [[String: Any]])
        #expect(favorites.compactMap { $0["position"] as? Int } == Array(1...8), "seed \(seed)")
        #expect(try tool.runWithoutStore(["--store", database, "check"]).stdout == "ok\n")
    }

    @Test("Twelve processes moving and removing one user's 20 Favorites at once all succeed, without a deadlock (seed printed)")
    func concurrentMovesDoNotDeadlock() throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresListWritesCLITests.concurrentMovesDoNotDeadlock")
        var random = SeededGenerator(seed: seed)
        let tool = try Tool()
        let (database, photos) = try galleryWithFavorites(tool, database: "moves", photos: 20, least: 20, favorites: 20)
        // The twelve to be removed (added last: the highest ids) moved to the front, so that a
        // removal renumbers rows of lower ids than its own.
        for _ in 0..<12 { #expect(try tool.runWithoutStore(["--store", database, "favorites", "move", "20", "1"]).status == 0) }
        let log = try PostgresTestServer.shared().directory + "/server.log"
        let deadlocksBefore = (try String(contentsOfFile: log, encoding: .utf8)).components(separatedBy: "deadlock detected").count
        // Each removes one of the twelve, then moves among the first eight places, which
        // are there whatever the others have removed.
        let scripts = (0..<12).map { worker in
            [["favorites", "remove", photos[8 + worker]]] + (0..<5).map { _ in
                ["favorites", "move", String(Int.random(in: 1...8, using: &random)), String(Int.random(in: 1...8, using: &random))]
            }
        }
        let statuses = try ShellWorkers.exitStatuses(scripts, store: database)
        #expect(statuses == ["0": 72], "seed \(seed): exit statuses \(statuses)")
        let deadlocks = (try String(contentsOfFile: log, encoding: .utf8)).components(separatedBy: "deadlock detected").count - deadlocksBefore
        #expect(deadlocks == 0, "seed \(seed): the server detected \(deadlocks) deadlocks")
        let listed = try #require(try tool.runWithoutStore(["--store", database, "--json", "favorites"]).json as? [[String: Any]])
        #expect(listed.compactMap { $0["position"] as? Int } == Array(1...8) && Set(listed.compactMap { $0["id"] as? String }) == Set(photos.prefix(8)))
        #expect(try tool.runWithoutStore(["--store", database, "check"]).stdout == "ok\n")
    }
}
