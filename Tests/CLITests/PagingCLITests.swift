import Foundation
import TestSupport
import Testing

/// The `next page: …` line a paged list prints on stderr, or nil.
private func nextPageLine(_ run: Tool.Run) -> String? {
    run.stderr.split(separator: "\n").last { $0.hasPrefix("next page: ") }.map(String.init)
}

/// The words of a command line as a POSIX shell splits them (single quotes only: the
/// tool quotes no other way).
private func shellWords(_ line: String) -> [String] {
    var words: [String] = [], current = "", quoted = false, started = false
    for character in line {
        if character == "'" { quoted.toggle(); started = true; continue }
        if character == " " && !quoted {
            if started { words.append(current) }
            (current, started) = ("", false)
            continue
        }
        current.append(character)
        started = true
    }
    if started { words.append(current) }
    return words
}

/// Follows a paged list from its first command to its last page, running each `next page`
/// line as printed (its own `--store` included); returns the JSON rows of every page and
/// the lines followed.
private func followPages(_ tool: Tool, _ first: [String]) throws -> (rows: [[String: Any]], lines: [String]) {
    var run = try tool.run(first)
    var rows: [[String: Any]] = [], lines: [String] = []
    while true {
        #expect(run.status == 0, "\(run.stderr)")
        let page = try #require(run.json as? [[String: Any]], "stdout is one JSON array, the cursor is not on it: \(run.stdout)")
        rows += page
        guard let line = nextPageLine(run) else { break }
        lines.append(line)
        try #require(lines.count < 100, "the pages end")
        let words = shellWords(String(line.dropFirst("next page: ".count)))
        try #require(words.first == "topregions", "\(line)")
        run = try tool.runWithoutStore(Array(words.dropFirst()))
    }
    return (rows, lines)
}

@Suite("Paging lists on the command line, as the API pages them")
struct PagingCLITests {
    @Test("regions --all lists every region past the top 50, ranks going on; --limit/--after pages give the same rows, in order", arguments: StoreKind.available)
    func regionPages(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        #expect(try tool.run(["sync"]).status == 0)
        let all = try tool.run(["regions", "--all", "--json"])
        let every = try #require(all.json as? [[String: Any]], "\(all.stderr)")
        #expect(every.count > 50, "SampleData has more regions than the top 50")
        #expect(every.compactMap { $0["rank"] as? Int } == Array(1...every.count))
        #expect(!all.stderr.contains("next page"), "--all is not paged")
        // The default stays the top 50, as before, with nothing on stderr.
        let top = try tool.run(["regions", "--json"])
        let top50 = try #require(top.json as? [[String: Any]])
        #expect(top50.count == 50 && top.stderr.isEmpty, "\(top.stderr)")
        #expect(top50.compactMap { $0["id"] as? String } == every.prefix(50).compactMap { $0["id"] as? String })

        let (rows, lines) = try followPages(tool, ["regions", "--limit", "7", "--json"])
        #expect(rows.compactMap { $0["id"] as? String } == every.compactMap { $0["id"] as? String })
        #expect(rows.compactMap { $0["rank"] as? Int } == Array(1...every.count), "ranks go on from page to page")
        #expect(lines.count == (every.count - 1) / 7)
        let first = try #require(lines.first)
        #expect(first.hasPrefix("next page: topregions --store \(tool.store) regions --json --limit 7 --after "), "\(first)")

        let byCountry = try #require(try tool.run(["regions", "--all", "--by-country", "--json"]).json as? [[String: Any]])
        #expect(Set(byCountry.compactMap { $0["id"] as? String }) == Set(every.compactMap { $0["id"] as? String }), "--by-country --all: every region")
        // A table page says so too, under the rows.
        let table = try tool.run(["regions", "--limit", "3"])
        #expect(table.stdout.split(separator: "\n").count == 4 && nextPageLine(table)?.contains("--limit 3 --after ") == true, "\(table.stderr)")
    }

    @Test("photos --limit pages a region's photos; the next page line runs as printed in a shell; without --limit all photos, no line",
          arguments: StoreKind.available)
    func photoPages(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        #expect(try tool.run(["sync"]).status == 0)
        let whole = try tool.run(["photos", "--region", "yucatan", "--json"])
        let every = try #require(whole.json as? [[String: Any]])
        #expect(every.count > 6 && whole.stderr.isEmpty, "\(whole.stderr)")
        let (rows, lines) = try followPages(tool, ["photos", "--region", "yucatan", "--limit", "3", "--json"])
        #expect(rows.compactMap { $0["id"] as? String } == every.compactMap { $0["id"] as? String })
        #expect(lines.count == (every.count - 1) / 3)
        #expect(lines.first?.hasPrefix("next page: topregions --store \(tool.store) photos --region yucatan --json --limit 3 --after ") == true,
                "\(lines)")

        // As a person pastes it into a shell: a region of two words comes quoted.
        let capital = try #require(try tool.run(["photos", "--region", "Capital Region", "--json"]).json as? [[String: Any]])
        try #require(capital.count > 4)
        let table = try tool.run(["photos", "--region", "Capital Region", "--limit", "2"])
        let line = try #require(nextPageLine(table), "\(table.stderr)")
        #expect(line.contains(" photos --region 'Capital Region' --limit 2 --after "), "\(line)")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "PATH=\"\(try Tool.executable().deletingLastPathComponent().path):$PATH\" " + line.dropFirst("next page: ".count)]
        let out = Pipe(), errors = Pipe()
        shell.standardOutput = out
        shell.standardError = errors
        try shell.run()
        let second = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let secondErrors = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0, "\(secondErrors)")
        let secondIDs = second.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(secondIDs == capital[2..<4].compactMap { $0["id"] as? String }, "the second page: \(second)")
        #expect(secondErrors.hasPrefix("next page: ") && secondErrors.contains("--limit 2 --after "), "\(secondErrors)")
    }

    @Test("A cursor of another list, or text that is no cursor, is a usage error in the gallery's words; paging options that do not go together are refused",
          arguments: StoreKind.available)
    func cursorMistakes(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        #expect(try tool.run(["sync"]).status == 0)
        let regionsCursor = try #require(nextPageLine(try tool.run(["regions", "--limit", "1"]))?.split(separator: " ").last.map(String.init))
        let photosCursor = try #require(nextPageLine(try tool.run(["photos", "--region", "yucatan", "--limit", "1"]))?.split(separator: " ").last.map(String.init))
        for (words, message) in [
            (["photos", "--region", "yucatan", "--limit", "2", "--after", regionsCursor], "the cursor pages another list"),
            (["photos", "--region", "quebec", "--after", photosCursor], "the cursor pages another list"),
            (["regions", "--after", photosCursor], "the cursor pages another list"),
            (["regions", "--limit", "5", "--after", "not-a-cursor"], "the cursor is not one this gallery gave"),
            (["regions", "--after", String(regionsCursor.dropLast(3))], "the cursor is not one this gallery gave"),
            (["photos", "--region", "yucatan", "--after", "%%%"], "the cursor is not one this gallery gave"),
            (["regions", "--all", "--limit", "5"], "--all lists every region from the first: leave out --limit, or --all"),
            (["regions", "--all", "--after", regionsCursor], "leave out --after, or --all"),
            (["regions", "--by-country", "--after", regionsCursor], "--by-country lists are not paged"),
            (["photos", "--region", "yucatan", "--by-photographer", "--limit", "3"], "--by-photographer lists are not paged"),
            (["photos", "--region", "yucatan", "--limit", "0"], "--limit must be a whole number from 1 to 10000"),
        ] {
            let run = try tool.run(words)
            #expect(run.status == 64 && run.stderr.contains(message) && run.stdout.isEmpty, "\(words): \(run.status) \(run.stderr)")
        }
        // The cursor of a page is good for the same list however it is shown.
        let page = try tool.run(["regions", "--after", regionsCursor, "--json"])
        #expect(page.status == 0 && (page.json as? [[String: Any]])?.first?["rank"] as? Int == 2, "\(page.stderr)")
    }
}

extension PagingCLITests {
    @Test("Help, the man page and the completions name the paging options")
    func helpNamesThem() throws {
        let tool = try Tool()
        let regions = try tool.run(["regions", "--help"]).stdout, photos = try tool.run(["photos", "--help"]).stdout
        for option in ["--limit N", "--after CURSOR", "--all"] { #expect(regions.contains(option), "regions --help: \(option)") }
        for option in ["--limit N", "--after CURSOR"] { #expect(photos.contains(option), "photos --help: \(option)") }
        // The discussion is wrapped: compared as words.
        let words = { (text: String) in text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        #expect(words(regions).contains("`next page: topregions regions --limit 10 --after CURSOR`") && words(photos).contains("`next page: topregions photos"))
        let manual = try tool.run(["help", "--man"]).stdout
        #expect(manual.contains(".B \\-\\-after CURSOR") && manual.contains(".B \\-\\-all") && manual.contains("next page"))
        for shell in ["bash", "zsh", "fish"] {
            let script = try tool.run(["completion", shell]).stdout
            #expect(script.contains("after") && script.contains("all"), "\(shell)")
        }
    }
}

@Suite("Usage mistakes are told what was meant")
struct UsageSuggestionTests {
    @Test("A lone word where the command takes none is the value of the option it fits", arguments: [
        (["photos", "yucatan"], "unexpected argument \"yucatan\"; did you mean --region yucatan?"),
        (["photos", "Baja California"], "did you mean --region 'Baja California'?"),
        (["regions", "10"], "unexpected argument \"10\"; did you mean --limit 10?"),
        (["prune", "7d"], "did you mean --older-than 7d?"),
        (["serve", "8080"], "did you mean --listen 127.0.0.1:8080?"),
        (["recents", "alice"], "did you mean --user alice?"),
        (["daemon", "15m"], "did you mean --interval 15m?"),
        (["copy", "backup.sqlite"], "did you mean --to backup.sqlite?"),
    ])
    func loneWord(words: [String], message: String) throws {
        let tool = try Tool()
        let run = try tool.run(words)
        #expect(run.status == 64 && run.stderr.contains(message), "\(words): \(run.status) \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: tool.store), "refused before the store is made")
    }

    @Test("A word that fits no option, or a second word, gets no guess")
    func noGuess() throws {
        let tool = try Tool()
        for words in [["regions", "Mexico"], ["photos", "yucatan", "quebec"], ["photos", "--region", "quebec", "yucatan"]] {
            let run = try tool.run(words)
            #expect(run.status == 64 && run.stderr.contains("unexpected argument") && !run.stderr.contains("did you mean"), "\(words): \(run.stderr)")
        }
    }

    @Test("Options other tools name differently are named as this one does; a command's own options come before the global ones", arguments: [
        (["serve", "--port", "8080"], "unknown option --port for serve; did you mean --listen 127.0.0.1:8080?"),
        (["serve", "--port=9000", "--host", "0.0.0.0"], "did you mean --listen 0.0.0.0:9000?"),
        (["serve", "--host", "::1"], "did you mean --listen '[::1]:8080'?"),
        (["regions", "--db", "gallery.sqlite"], "unknown option --db for regions; did you mean --store gallery.sqlite?"),
        (["photos", "--region", "yucatan", "--count", "5"], "did you mean --limit 5?"),
        (["regions", "--cursor", "abc"], "did you mean --after abc?"),
        (["thumbnail", "53300015459", "-o", "x.jpg"], "did you mean --output x.jpg?"),
        (["regions", "--josn"], "did you mean --json?"),
        (["regions", "--limt", "5"], "did you mean --limit?"),
        (["daemon", "--intervl", "5m"], "did you mean --interval?"),
    ])
    func knownNames(words: [String], message: String) throws {
        let run = try Tool().run(words)
        #expect(run.status == 64 && run.stderr.contains(message), "\(words): \(run.status) \(run.stderr)")
    }

    @Test("A poor match with a global option is no suggestion")
    func poorGlobalMatch() throws {
        let tool = try Tool()
        let serve = try tool.run(["serve", "--port", "8080"])
        #expect(!serve.stderr.contains("--pool"), "\(serve.stderr)")
        let regions = try tool.run(["regions", "--port", "8080"])
        #expect(regions.status == 64 && regions.stderr.contains("unknown option --port for regions") && !regions.stderr.contains("did you mean"),
                "\(regions.stderr)")
    }

    @Test("A user name that is only not lower case is refused with the name it can be", arguments: [
        (["users", "add", "Alice"], "user names are lowercase (letters, digits, '.', '_' or '-'); did you mean \"alice\"?"),
        (["users", "remove", "BOB-2"], "did you mean \"bob-2\"?"),
        (["recents", "--user", "Alice"], "--user: user names are lowercase (letters, digits, '.', '_' or '-'); did you mean \"alice\"?"),
        (["favorites", "add", "53300015459", "--user=Carol"], "did you mean \"carol\"?"),
    ])
    func userNames(words: [String], message: String) throws {
        let tool = try Tool()
        let run = try tool.run(words)
        #expect(run.status == 64 && run.stderr.contains(message), "\(words): \(run.status) \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: tool.store), "refused before the store is made")
    }

    @Test("A name that lower case does not mend gets the rule, not a guess")
    func unmendableNames() throws {
        for name in ["Al ice", "_Alice", "Émile"] {
            let run = try Tool().run(["users", "add", name])
            #expect(run.status == 64 && run.stderr.contains("a user name is 1 to 64 lowercase letters") && !run.stderr.contains("did you mean"),
                    "\(name): \(run.stderr)")
        }
    }
}
