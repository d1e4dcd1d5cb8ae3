import Foundation
import TestSupport
import SampleDataSupport
import Synchronization
import Testing
@testable import TopRegionsKit

/// Runs the tool on a pseudo-terminal of `columns` × `rows` (Tests/Fixtures/pty_run.py),
/// returning what the terminal showed and the exit status.
private func onTerminal(_ tool: Tool, columns: Int, rows: Int = 40, killAfter text: String? = nil, _ arguments: [String],
                        environment: [String: String] = [:]) throws -> (output: String, status: Int32) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    var words = ["python3", Repository.root.appendingPathComponent("Tests/Fixtures/pty_run.py").path, "\(columns)", "\(rows)"]
    if let text { words += ["--kill-after-text", text] }
    process.arguments = words + ["--", try Tool.executable().path, "--store", tool.store] + arguments
    var variables = ProcessInfo.processInfo.environment
    variables["COLUMNS"] = nil
    for (key, value) in environment { variables[key] = value }
    process.environment = variables
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n"), process.terminationStatus)
}

/// Shell words of an example's command line (single quotes only, as `Example` writes them).
private func words(_ line: String) -> [String] {
    var result: [String] = [], current = "", quoted = false, started = false
    for character in line {
        if character == "'" { quoted.toggle(); started = true; continue }
        if character == " " && !quoted {
            if started { result.append(current) }
            current = ""
            started = false
            continue
        }
        current.append(character)
        started = true
    }
    if started { result.append(current) }
    return result
}

/// The examples a help text shows: the lines under "Examples:" that start with the tool.
private func examples(in help: String) -> [[String]] {
    guard let start = help.range(of: "Examples:\n") else { return [] }
    return help[start.upperBound...].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { $0.hasPrefix("topregions ") }.map { Array(words($0).dropFirst()) }
}

/// Runs one example against the tool's store, the way a newcomer would paste it. Commands
/// that go on (a daemon, a watch) are given what ends them.
private func runExample(_ tool: Tool, _ arguments: [String]) throws -> Tool.Run {
    switch arguments.first {
    case "daemon":
        let (process, _, errors) = try tool.process(arguments)
        let log = LogReader(errors)
        let slept = log.wait(for: "event=sleep", count: 1)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        return Tool.Run(status: slept ? process.terminationStatus : -1, stdout: "", stderr: log.text)
    case "watch":
        let (process, out, errors) = try tool.process(arguments)
        let lines = LogReader(out)
        _ = lines.wait(for: "snapshot", count: 1)
        try tool.run(["view", "53300015470"])
        process.waitUntilExit()
        return Tool.Run(status: process.terminationStatus, stdout: lines.text,
                        stderr: String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    case "serve":
        let (process, out, errors) = try tool.process(arguments)
        let lines = LogReader(out)
        let listening = lines.wait(for: "listening on http://", count: 1)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        return Tool.Run(status: listening ? process.terminationStatus : -1, stdout: lines.text,
                        stderr: String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    default:
        return try tool.run(arguments)
    }
}

@Suite("The tool as a newcomer meets it", .serialized)
struct NewcomerTests {
    @Test("Every example in every command's help runs, against a store synced from SampleData", arguments: StoreKind.available)
    func helpExamples(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        #expect(try tool.run(["sync"]).status == 0)
        let overview = try tool.run(["--help"]).stdout
        let names = overview.split(separator: "\n").drop { !$0.hasPrefix("Commands:") }.dropFirst()
            .prefix { !$0.hasPrefix("Global options:") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(names.count >= 15, "\(overview)")
        var ran = 0
        for name in names {
            let help = try tool.run([name, "--help"]).stdout
            let found = examples(in: help)
            #expect(!found.isEmpty, "\(name) shows no example")
            for example in found {
                let run = try runExample(tool, example)
                #expect(run.status == 0, "topregions \(example.joined(separator: " ")): \(run.status) \(run.stderr)")
                ran += 1
            }
        }
        #expect(ran >= 20)
    }

    @Test("The README's topregions commands run as written, against a SampleData store", arguments: StoreKind.available)
    func readmeCommands(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        #expect(try tool.run(["sync"]).status == 0)
        let readme = try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        var inCode = false
        var commands: [[String]] = []
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle(); continue }
            let text = line.split(separator: "#", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if inCode && text.hasPrefix("topregions ") { commands.append(Array(words(text).dropFirst())) }
        }
        #expect(commands.count >= 8, "the README's tour shows the tool")
        for command in commands where !command.contains("--store") || true {
            let run = try runExample(tool, command.filter { $0 != "sudo" })
            #expect(run.status == 0, "topregions \(command.joined(separator: " ")): \(run.stderr)")
        }
    }

    @Test("At 40 columns ids, URLs and dates are whole and titles give way; at 120 nothing is cut; off a terminal nothing ever is")
    func narrowTerminals() throws {
        let tool = try Tool()
        try tool.run(["sync"])
        try tool.run(["view", "53300015459"])
        let narrow = try onTerminal(tool, columns: 40, ["photos", "--region", "Yucatán"])
        let rows = narrow.output.split(separator: "\n").dropFirst()
        #expect(!rows.isEmpty)
        for row in rows {
            let fields = row.split(separator: " ", omittingEmptySubsequences: true)
            #expect(fields.first?.count == 11 && fields.first?.allSatisfy(\.isNumber) == true, "an id is whole: \(row)")
            #expect(fields.last.map { $0.count == 20 && $0.hasSuffix("Z") } == true, "a date is whole: \(row)")
            #expect(row.count <= 40, "a row fits 40 columns, not wrapping: \(row)")
        }
        #expect(narrow.output.contains("…"), "titles shrink to fit")
        let recents = try onTerminal(tool, columns: 40, ["recents"])
        #expect(recents.output.contains("53300015459") && recents.output.range(of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, options: .regularExpression) != nil)
        let detail = try onTerminal(tool, columns: 40, ["photo", "53300015459"])
        #expect(detail.output.contains("https://live.staticflickr.com/65535/53300015459_439e3f75a2_b.jpg"), "a URL is whole: \(detail.output)")
        let wide = try onTerminal(tool, columns: 120, ["photos", "--region", "Yucatán"])
        #expect(!wide.output.contains("…"), "at 120 columns nothing is cut: \(wide.output)")
        let piped = try tool.run(["photos", "--region", "Yucatán"], environment: ["COLUMNS": "40"])
        #expect(!piped.stdout.contains("…"), "off a terminal nothing is cut")
    }

    @Test("A sync on a terminal shows its progress on one line, and what holds it back; --quiet and pipes show none")
    func progressLine() throws {
        let server = try FlickrTestServer()
        let tool = try Tool()
        let source = ["--endpoint", server.endpoint.absoluteString, "--pages", "1", "--per-page", "20"]
        let quick = try onTerminal(tool, columns: 120, ["sync", "--rate-limit", "none"] + source)
        #expect(quick.status == 0 && quick.output.contains("pages 1/") && quick.output.contains("places "), "\(quick.output)")
        #expect(quick.output.contains("\r\u{1B}[K"), "the line is redrawn in place")
        let held = try onTerminal(tool, columns: 120, killAfter: "waiting for the rate limit", ["sync", "--rate-limit", "2"] + source)
        #expect(held.output.contains("waiting for the rate limit (2 calls/h): next call in"), "\(held.output)")
        let narrow = try onTerminal(tool, columns: 60, killAfter: "next in", ["sync", "--rate-limit", "2"] + source)
        #expect(narrow.output.contains("rate limit 2/h: next in"), "on a narrow terminal the wait comes first, whole: \(narrow.output)")
        let quiet = try onTerminal(tool, columns: 120, ["sync", "--quiet", "--rate-limit", "none"] + source)
        #expect(!quiet.output.contains("pages 1/"), "\(quiet.output)")
        let piped = try tool.run(["sync", "--rate-limit", "none"] + source)
        #expect(!piped.stderr.contains("pages 1/"))
    }

    @Test("watch fits the screen: the header stays, the rows that do not fit are counted")
    func watchFitsTheScreen() throws {
        let tool = try Tool()
        try tool.run(["sync"])
        let shown = try onTerminal(tool, columns: 80, rows: 12, killAfter: "more", ["watch", "regions"])
        #expect(shown.output.contains("#  REGION") || shown.output.contains("REGION"), "\(shown.output)")
        #expect(shown.output.range(of: #"… \d+ more"#, options: .regularExpression) != nil, "\(shown.output)")
    }

    @Test("Read commands never create a store; they say how to make one")
    func noEmptyStoreTrap() throws {
        let tool = try Tool()
        let missing = tool.directory.appendingPathComponent("new/dir/x.sqlite").path
        for command in [["regions"], ["recents"], ["status"], ["photos", "--region", "x"]] {
            let run = try tool.runWithoutStore(["--store", missing] + command)
            #expect(run.status == 1 && run.stderr.contains("no store at \(missing); run `topregions sync` first"), "\(command): \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: tool.directory.appendingPathComponent("new").path))
        // A relative XDG_DATA_HOME is ignored, as the XDG spec says.
        let home = tool.directory.appendingPathComponent("home").path
        let relative = try tool.runWithoutStore(["status"], environment: ["XDG_DATA_HOME": "relative/data", "HOME": home, "TOPREGIONS_STORE": ""])
        #expect(relative.stderr.contains("no store at \(home)/.local/share/topregions/store.sqlite"), "\(relative.stderr)")
    }

    @Test("Conventions: suggestions, help COMMAND, --, - for stdout, repeated options, unknown options", arguments: StoreKind.available)
    func conventions(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        let typo = try tool.run(["regoins"])
        #expect(typo.status == 64 && typo.stderr.contains("unknown command \"regoins\"; did you mean \"regions\"?"))
        #expect(!typo.stderr.contains("Commands:"), "a short usage line, not the whole help")
        let bogus = try tool.run(["--bogus"])
        #expect(bogus.status == 64 && bogus.stderr.contains("unknown option --bogus"))
        let option = try tool.run(["regions", "--by-contry"])
        #expect(option.status == 64 && option.stderr.contains("did you mean --by-country?") && option.stderr.contains("See `topregions regions --help`"))
        #expect(try tool.run(["help", "photos"]).stdout == (try tool.run(["photos", "--help"]).stdout))
        let twice = try tool.run(["sync", "--pages", "1", "--pages", "2"])
        #expect(twice.status == 64 && twice.stderr.contains("--pages is given twice"))
        let dashes = try tool.run(["favorites", "add", "--", "53300015459"])
        #expect(dashes.status == 0, "\(dashes.stderr)")
        let stdout = try tool.run(["thumbnail", "53300015459", "--output", "-"])
        #expect(stdout.status == 0 && stdout.stdout.utf8.count > 100)
        let json = try tool.run(["thumbnail", "53300015459", "--json"])
        #expect(json.status == 64 && json.stderr.contains("--json does not apply"))
        #expect(!(try tool.run(["thumbnail", "--help"]).stdout.contains("--pages")), "only the options that apply")
    }

    @Test("Regions are found without case or accents; near misses are suggested; shared names list their ids", arguments: StoreKind.available)
    func regionNames(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        let loose = try tool.run(["photos", "--region", "yucatan", "--json"])
        #expect(loose.status == 0 && ((loose.json as? [[String: Any]])?.count ?? 0) > 0, "\(loose.stderr)")
        let near = try tool.run(["photos", "--region", "yucatn"])
        #expect(near.status == 1 && near.stderr.contains("did you mean \"Yucatán\"?"), "\(near.stderr)")
        let shared = try tool.run(["photos", "--region", "Limburg"])
        #expect(shared.status == 1 && shared.stderr.contains("2 regions are called \"Limburg\"") && shared.stderr.contains("give an id"))
        // Found ignoring case: each is named with its country too, which tells them apart.
        let sharedLoosely = try tool.run(["photos", "--region", "limburg"])
        #expect(sharedLoosely.status == 1 && sharedLoosely.stderr.contains("Netherlands") && sharedLoosely.stderr.contains("Belgium"), "\(sharedLoosely.stderr)")
    }

    @Test("Errors name the cause and the path in words, and photos by their Flickr id", arguments: StoreKind.available)
    func errorsInWords(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        let unwritable = try tool.run(["thumbnail", "53300015459", "--output", "/nonexistent/x.jpg"])
        #expect(unwritable.status == 1 && unwritable.stderr.contains("cannot write /nonexistent/x.jpg: no such directory"), "\(unwritable.stderr)")
        #expect(!unwritable.stderr.contains("NSCocoaErrorDomain"))
        let notFavorite = try tool.run(["favorites", "remove", "53300015459"])
        #expect(notFavorite.stderr.contains("photo 53300015459 is not a favorite"), "\(notFavorite.stderr)")
        let badSize = try tool.run(["image", "53300002748", "--size", "x", "--output", "-"])
        #expect(badSize.status == 64 && badSize.stderr.contains("--size must be one of s, q, n, z, c, b, not \"x\""), "\(badSize.stderr)")
    }

    @Test("Lists say when they are empty; by country keeps each region's rank under its country's heading; plurals agree", arguments: StoreKind.available)
    func listsReadWell(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        #expect(try tool.run(["favorites"]).stdout.contains("No favorites yet: `topregions favorites add ID`"))
        #expect(try tool.run(["recents"]).stdout.contains("No recents yet"))
        let byCountry = try tool.run(["regions", "--by-country", "--limit", "10"]).stdout
        #expect(byCountry.contains("— Mexico —"))
        let mexico = byCountry.split(separator: "\n").drop { !$0.contains("— Mexico —") }.dropFirst().first ?? ""
        #expect(mexico.trimmingCharacters(in: .whitespaces).hasPrefix("1 "), "Yucatán keeps rank 1: \(mexico)")
        let status = try tool.run(["status"]).stdout
        #expect(!status.hasPrefix("\n") && status.contains(tool.store) && status.contains("last sync"), "\(status)")
    }

    @Test("Canonically equal names: a region typed either way finds both forms (ambiguous), and two countries of such names are two headings",
          arguments: StoreKind.available)
    func canonicallyEqualNames(on kind: StoreKind) async throws {
        let tool = try Tool(on: kind)
        try tool.run(["sync"])
        let regions = try #require(try tool.run(["regions", "--json", "--limit", "2"]).json as? [[String: Any]])
        let ids = regions.compactMap { $0["id"] as? String }
        try #require(ids.count == 2)
        let gallery = try Gallery.openForWriting(tool.store)
        try gallery.writableStore.write { transaction in
            let p = transaction.dialect.parameter
            let rename = "UPDATE Region SET name = \(p(1)), country = \(p(2)) WHERE placeID = \(p(3))"
            try transaction.execute(rename, [.text("Z\u{FC}rich"), .text("\u{D6}sterreich"), .text(ids[0])])
            try transaction.execute(rename, [.text("Zu\u{308}rich"), .text("O\u{308}sterreich"), .text(ids[1])])
        }
        gallery.close()
        for typed in ["Z\u{FC}rich", "Zu\u{308}rich"] {
            let found = try tool.run(["photos", "--region", typed])
            #expect(found.status == 1 && found.stderr.contains("2 regions are called") && found.stderr.contains(ids[0]) && found.stderr.contains(ids[1]),
                    "\(typed.unicodeScalars.count) scalars: \(found.stderr)")
        }
        let byCountry = try tool.run(["regions", "--by-country", "--limit", "50"]).stdout
        let headings = byCountry.split(separator: "\n").filter { $0.hasPrefix("— ") && $0.contains("sterreich") }
        #expect(headings.count == 2, "one heading per country as stored: \(byCountry)")
    }

    @Test("sync --json says why it failed; a temporary failure exits 75, a bad key exits 1 with the next step", arguments: StoreKind.available)
    func syncFailures(on kind: StoreKind) throws {
        let server = try FlickrTestServer(apiKey: "right")
        let tool = try Tool(on: kind)
        let badKey = try tool.run(["sync", "--json", "--endpoint", server.endpoint.absoluteString, "--api-key", "wrong", "--rate-limit", "none"])
        let error = (badKey.json as? [String: Any])?["error"] as? [String: Any]
        #expect(badKey.status == 1 && error?["kind"] as? String == "permanent", "\(badKey.stdout)")
        #expect((error?["hint"] as? String)?.contains("--api-key-file") == true)
        let down = try tool.run(["sync", "--json", "--endpoint", "http://127.0.0.1:9/services/rest/", "--rate-limit", "none"])
        #expect(down.status == 75 && ((down.json as? [String: Any])?["error"] as? [String: Any])?["source"] as? String == "127.0.0.1")
    }

    @Test("The daemon logs JSON lines with --json", arguments: StoreKind.available)
    func daemonJSON(on kind: StoreKind) throws {
        let tool = try Tool(on: kind)
        let (process, _, errors) = try tool.process(["daemon", "--json", "--interval", "1h"])
        let log = LogReader(errors)
        #expect(log.wait(for: "\"event\":\"sleep\"", count: 1), "\(log.text)")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = log.text.split(separator: "\n")
        #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) is [String: Any] }, "\(log.text)")
        let events = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        let start = events.first { $0["event"] as? String == "start" }
        #expect(start?["interval"] as? Int == 3600, "an interval is a number of seconds")
        let sync = try #require(events.first { $0["event"] as? String == "sync" })
        #expect(sync["seconds"] is NSNumber && !(sync["seconds"] is String), "seconds are a number: \(sync)")
        #expect(sync["error"] == nil, "a pass that did not fail has no error field: \(sync)")
    }

    @Test("Shell completions and the man page come from the command table")
    func completionsAndManual() throws {
        let tool = try Tool()
        for shell in ["bash", "zsh", "fish"] {
            let script = try tool.run(["completion", shell])
            #expect(script.status == 0 && script.stdout.contains("by-country") && script.stdout.contains("favorites"), "\(shell)")
        }
        let bash = tool.directory.appendingPathComponent("completion.bash")
        try Data(try tool.run(["completion", "bash"]).stdout.utf8).write(to: bash)
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/bin/bash")
        check.arguments = ["-n", bash.path]
        try check.run()
        check.waitUntilExit()
        #expect(check.terminationStatus == 0, "the bash script parses")
        let manual = try tool.run(["help", "--man"]).stdout
        #expect(manual.hasPrefix(".TH TOPREGIONS 1") && manual.contains("\\-\\-by\\-country") && manual.contains("EXIT STATUS"))
    }
}

@Suite("scripts/install")
struct InstallTests {
    @Test("It installs the tool, SampleData, the man page, completions and the unit, and the installed tool finds its SampleData")
    func install() throws {
        let tool = try Tool()
        let prefix = tool.directory.appendingPathComponent("prefix")
        let process = Process()
        process.executableURL = Repository.root.appendingPathComponent("scripts/install")
        process.arguments = [prefix.path]
        process.environment = ProcessInfo.processInfo.environment.merging(["TOPREGIONS_INSTALL_TOOL": try Tool.executable().path]) { $1 }
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let said = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(said)")
        for file in ["bin/topregions", "share/topregions/SampleData/manifest.json", "share/man/man1/topregions.1",
                     "share/bash-completion/completions/topregions", "share/zsh/site-functions/_topregions",
                     "share/fish/vendor_completions.d/topregions.fish", "lib/systemd/system/topregions.service"] {
            #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(file).path), "\(file)")
            let told = file.hasPrefix("share/topregions/SampleData") ? "share/topregions/SampleData" : file
            #expect(said.contains(prefix.appendingPathComponent(told).path), "it says where \(file) went")
        }
        let unit = try String(contentsOf: prefix.appendingPathComponent("lib/systemd/system/topregions.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=\(prefix.path)/bin/topregions daemon"))
        // The installed tool, with no checkout to fall back on, finds the SampleData beside it.
        let installed = Process()
        installed.executableURL = prefix.appendingPathComponent("bin/topregions")
        installed.arguments = ["--store", tool.store, "sync", "--json"]
        installed.currentDirectoryURL = tool.directory
        var environment = ProcessInfo.processInfo.environment
        environment["TOPREGIONS_SAMPLEDATA"] = nil
        installed.environment = environment
        let result = Pipe()
        installed.standardOutput = result
        try installed.run()
        let json = result.fileHandleForReading.readDataToEndOfFile()
        installed.waitUntilExit()
        #expect(installed.terminationStatus == 0)
        #expect(String(decoding: json, as: UTF8.self).contains("\"result\":\"newData\""))
    }
}

@Suite("The daemon stops when told")
struct DaemonStopTests {
    @Test("SIGTERM while the daemon waits for another process's sync lock ends it at once, exit 0, with no pass run")
    func stopWhileWaitingForTheLock() throws {
        let tool = try Tool()
        try tool.run(["migrate"])
        let gallery = try Gallery(path: tool.store)
        let lock = try SyncLock.acquire(for: gallery.store)
        defer {
            lock.release()
            gallery.close()
        }
        let (process, _, errors) = try tool.process(["daemon", "--interval", "1h"])
        let log = LogReader(errors)
        #expect(log.wait(for: "event=waiting-for-lock", count: 1), "\(log.text)")
        let asked = Date()
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(asked) < 5, "it stops within seconds")
        #expect(!log.text.contains("event=sync "), "no pass ran: \(log.text)")
        let status = try #require(try tool.run(["status", "--json"]).json as? [String: Any])
        #expect(status["lastSync"] is NSNull, "no pass was even started")
    }
}
