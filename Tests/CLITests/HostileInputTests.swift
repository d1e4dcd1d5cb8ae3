import Foundation
import TestSupport
import Store
import Synchronization
import Testing
import TopRegionsKit

/// Text a server sends that a terminal would act on: clear the screen, set the window
/// title, write the clipboard, rewrite a line, reorder text, hide characters.
private let hostileTitle = "T\u{1B}[2J\u{1B}]0;owned\u{07}\u{1B}]52;c;SGk=\u{07}\rover\u{9B}31m\u{202E}x\u{200B}\u{FEFF}\u{061C}\u{AD}\u{180E}\u{3164}\u{E0041}\u{E0042}\u{34F}\u{FFF9}\u{17B4}" + scotland
    + "\u{1F3F4}\u{E0069}\u{E0067}\u{E006E}\u{E006F}\u{E0072}\u{E0065}\u{E0020}\u{E0061}\u{E006C}\u{E006C}\u{E007F}"
/// A subdivision flag, made of tag characters that must stay as they are.
private let scotland = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}"
/// The controls that are legal in XML 1.0 (ESC and BEL are not).
private let hostileXMLTitle = "T\u{9B}31m\u{202E}x\u{85}y\u{200B}\u{FEFF}"

/// Whether human output lets any raw control (C0 but newline, C1, DEL), reordering or
/// invisible character through.
private func hasRawControls(_ text: String) -> Bool {
    text.replacingOccurrences(of: scotland, with: "").unicodeScalars.contains { scalar in
        (scalar.value < 0x20 && scalar != "\n") || (0x7F...0x9F).contains(scalar.value) || (0x202A...0x202E).contains(scalar.value)
            || [0x200B, 0x2060, 0xFEFF, 0x061C, 0xAD, 0x180E, 0x3164, 0x34F, 0xFFF9, 0x17B4].contains(scalar.value)
            || (0xE0000...0xE007F).contains(scalar.value)
    }
}

@Suite("The tool against hostile input", .serialized)
struct HostileInputTests {
    @Test("Control characters from the server never reach the terminal raw; --json keeps the exact text", arguments: StoreKind.available, ["json", "xml"])
    func escapeSequences(kind: StoreKind, format: String) async throws {
        let server = try FlickrTestServer()
        let tool = try Tool(on: kind)
        let title = format == "json" ? hostileTitle : hostileXMLTitle
        let fields: [String: String] = ["title": title, "ownername": "Owner" + title, "description": "Desc" + title]
        try await server.addFault(["method": "flickr.photos.search", "page": 1, "patch": [["set": fields]]])
        try await server.addFault(["method": "flickr.places.getInfo", "place_patch": ["region": "Region" + title], "times": -1])
        let source = ["--endpoint", server.endpoint.absoluteString, "--format", format, "--rate-limit", "none", "--pages", "1", "--per-page", "50"]
        let sync = try tool.run(["sync"] + source)
        #expect(sync.status == 0, "\(sync.stderr)")
        let regionsRun = try tool.run(["regions", "--json"])
        #expect(!hasRawControls(regionsRun.stdout) && !regionsRun.stdout.unicodeScalars.contains { $0.value == 0x2028 || $0.value == 0x2029 },
                "--json writes controls and separators as \\u escapes: \(regionsRun.stdout.prefix(300).debugDescription)")
        let regions = try #require(regionsRun.json as? [[String: Any]])
        let region = try #require(regions.first?["id"] as? String)
        #expect(regions.first?["name"] as? String == "Region" + title, "JSON keeps the region's name exactly")
        let photos = try #require(try tool.run(["photos", "--region", region, "--json"]).json as? [[String: Any]])
        let id = try #require(photos.first?["id"] as? String)
        #expect(photos.first?["title"] as? String == title && photos.first?["photographer"] as? String == "Owner" + title)
        try tool.run(["favorites", "add", id])
        let watch = try tool.process(["watch", "recents", "--exit-after", "1"])
        let watched = Mutex(Data())
        watch.1.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            watched.withLock { $0.append(data) }
        }
        // The watcher has printed its first table: it follows the store from here on.
        #expect(await waitUntil(timeout: 30) { watched.withLock { !$0.isEmpty } })
        let human: [[String]] = [["regions"], ["photos", "--region", region], ["photo", id], ["view", id], ["recents"], ["favorites"]]
        for command in human {
            let run = try tool.run(command)
            #expect(run.status == 0, "\(command): \(run.stderr)")
            #expect(!hasRawControls(run.stdout), "\(command) printed raw controls: \(run.stdout.debugDescription)")
            #expect(run.stdout.contains("\\x1b") || run.stdout.contains("\\x9b"), "\(command) shows the controls escaped")
        }
        if format == "json" {
            #expect(try tool.run(["photo", id]).stdout.contains(scotland), "a subdivision flag's tags are shown as they are")
        }
        watch.0.waitUntilExit()
        watch.1.fileHandleForReading.readabilityHandler = nil
        let watchOutput = watched.withLock { String(decoding: $0, as: UTF8.self) }
            + String(decoding: watch.1.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(!watchOutput.isEmpty && !hasRawControls(watchOutput), "watch printed raw controls: \(watchOutput.debugDescription)")
    }

    @Test("A server's error message cannot forge a log line or reach the terminal raw", arguments: StoreKind.available)
    func forgedLogLines(kind: StoreKind) async throws {
        let server = try FlickrTestServer()
        let tool = try Tool(on: kind)
        let message = "bad\u{1B}[2J\nts=2026-01-01T00:00:00Z level=info event=sync result=newData photos_new=999"
        try await server.addFault(["method": "flickr.photos.search", "fail_code": 100, "fail_message": message, "times": -1])
        let source = ["--endpoint", server.endpoint.absoluteString, "--rate-limit", "none"]
        let sync = try tool.run(["sync"] + source)
        #expect(sync.status != 0)
        #expect(!hasRawControls(sync.stderr) && sync.stderr.contains("\\x1b[2J"))
        #expect(!sync.stderr.split(separator: "\n").contains { $0.hasPrefix("ts=2026-01-01") })
        let (daemon, _, errors) = try tool.process(["daemon", "--interval", "1h"] + source)
        // The daemon logs a failed pass, then its sleep: then it is stopped and its log read whole.
        let collected = Mutex(Data())
        errors.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            collected.withLock { $0.append(data) }
        }
        let slept = await waitUntil(timeout: 30) { collected.withLock { String(decoding: $0, as: UTF8.self).contains("event=sleep") } }
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        errors.fileHandleForReading.readabilityHandler = nil
        let log = collected.withLock { String(decoding: $0, as: UTF8.self) }
            + String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(slept, "\(log)")
        let lines = log.split(separator: "\n")
        #expect(lines.contains { $0.contains("event=sync") && $0.contains("result=failed") })
        #expect(lines.allSatisfy { $0.hasPrefix("ts=") && !$0.hasPrefix("ts=2026-01-01") }, "\(lines)")
        #expect(!hasRawControls(log))
    }

    @Test("Durations: compound forms are accepted; zero, nonsense and durations out of range are usage errors")
    func durations() throws {
        let tool = try Tool()
        try tool.run(["sync"])
        #expect(try tool.run(["prune", "--older-than", "1h30m", "--json"]).status == 0)
        #expect(try tool.run(["prune", "--older-than", "1.5d", "--json"]).status == 0)
        let zero = try tool.run(["prune", "--older-than", "0s"])
        #expect(zero.status == 64 && zero.stderr.contains("must be more than 0"), "\(zero.stderr)")
        for huge in ["250000d", "99999999999999999999s", "1e400s"] {
            let run = try tool.run(["daemon", "--interval", huge])
            #expect(run.status == 64, "\(huge): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("--interval"), "\(huge): \(run.stderr)")
        }
        let tooLong = try tool.run(["daemon", "--interval", "31d"])
        #expect(tooLong.stderr.contains("from 0.01s to 30d"), "\(tooLong.stderr)")
    }

    @Test("A lock file that is a symbolic link, a hard link or not a file is refused and nothing is written through it")
    func lockFilesDoNotFollowLinks() throws {
        let tool = try Tool()
        try tool.run(["sync"])
        let victim = tool.directory.appendingPathComponent("precious.txt")
        try Data("precious\n".utf8).write(to: victim)
        let lock = tool.store + ".sync-lock"
        try? FileManager.default.removeItem(atPath: lock)
        try FileManager.default.createSymbolicLink(atPath: lock, withDestinationPath: victim.path)
        let linked = try tool.run(["sync"])
        #expect(linked.status == 1 && linked.stderr.contains("symbolic link"), "\(linked.stderr)")
        try FileManager.default.removeItem(atPath: lock)
        try FileManager.default.linkItem(atPath: victim.path, toPath: lock)
        let hardLinked = try tool.run(["sync"])
        #expect(hardLinked.status == 1 && hardLinked.stderr.contains("hard links"), "\(hardLinked.stderr)")
        try FileManager.default.removeItem(atPath: lock)
        try FileManager.default.createDirectory(atPath: lock, withIntermediateDirectories: false)
        #expect(try tool.run(["sync"]).stderr.contains("lock"))
        #expect(try String(contentsOf: victim, encoding: .utf8) == "precious\n")
    }

    @Test("The API key can come from a file, kept out of the process list")
    func apiKeyFile() throws {
        let server = try FlickrTestServer(apiKey: "s3cret")
        let tool = try Tool()
        let keyFile = tool.directory.appendingPathComponent("key")
        try Data("s3cret\n".utf8).write(to: keyFile)
        let source = ["--endpoint", server.endpoint.absoluteString, "--rate-limit", "none", "--pages", "1"]
        #expect(try tool.run(["sync", "--api-key-file", keyFile.path] + source).status == 0)
        #expect(try tool.run(["sync"] + source, environment: ["FLICKR_API_KEY_FILE": keyFile.path]).status == 0)
        let missing = try tool.run(["sync", "--api-key-file", "/nonexistent/key"] + source)
        #expect(missing.status == 1 && missing.stderr.contains("cannot read the API key file /nonexistent/key"), "\(missing.stderr)")
        #expect(try tool.run(["sync", "--help"]).stdout.contains("visible to every user in ps"))
        // From a pipe, as `--api-key-file <(pass flickr)` gives it; a device is refused.
        let piped = Process()
        piped.executableURL = try Tool.executable()
        piped.arguments = ["--store", tool.store, "sync", "--api-key-file", "/dev/stdin"] + source
        let input = Pipe()
        piped.standardInput = input
        piped.standardOutput = FileHandle.nullDevice
        piped.standardError = FileHandle.nullDevice
        try piped.run()
        try input.fileHandleForWriting.write(contentsOf: Data("s3cret\n".utf8))
        try input.fileHandleForWriting.close()
        piped.waitUntilExit()
        #expect(piped.terminationStatus == 0, "a key read from a pipe")
        let device = try tool.run(["sync", "--api-key-file", "/dev/zero"] + source)
        #expect(device.status == 1 && device.stderr.contains("not a file or a pipe"), "\(device.stderr)")
    }

    @Test("check finds dangling references and answers in JSON even for a damaged store")
    func checkFindsWhatIntegrityMisses() throws {
        let tool = try Tool()
        try tool.run(["sync"])
        #expect(try tool.run(["check"]).status == 0)
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [tool.store, "PRAGMA foreign_keys = OFF; DELETE FROM Photographer WHERE id = (SELECT photographer_id FROM Photo LIMIT 1);"]
        try sqlite.run()
        sqlite.waitUntilExit()
        let dangling = try tool.run(["check", "--json"])
        let report = try #require(dangling.json as? [String: Any])
        #expect(dangling.status == 1 && report["ok"] as? Bool == false)
        #expect((report["problems"] as? [String])?.contains { $0.contains("foreign key") && $0.contains("Photographer") } == true, "\(report)")
        // Photos are named by their Flickr id (11 digits here), never a store row id.
        #expect((report["problems"] as? [String])?.contains { $0.range(of: #"foreign key: photo \d{11} refers to a Photographer"#, options: .regularExpression) != nil } == true,
                "\(report)")
        // Damage in the middle of the file: still one JSON answer.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: tool.store))
        try handle.seek(toOffset: 4096 * 3)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 4096 * 4))
        try handle.close()
        let damaged = try tool.run(["check", "--json"])
        let damageReport = try #require(damaged.json as? [String: Any], "\(damaged.stdout) \(damaged.stderr)")
        #expect(damaged.status == 1 && damageReport["ok"] as? Bool == false)
    }
}

@Suite("Stores that cannot be written", .serialized)
struct ReadOnlyStoreTests {
    /// Runs the tool with the store's directory mounted read-only, in a mount namespace of
    /// its own (`unshare`, Debian's util-linux): a real read-only file system, no root needed.
    private func onReadOnlyMount(_ tool: Tool, _ arguments: [String]) throws -> Tool.Run {
        let directory = tool.directory.path
        let command = ["mount", "--bind", "-o", "ro", directory, directory].joined(separator: " ")
            + " && store=\"$1\" && shift && exec \"$0\" --store \"$store\" \"$@\""
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-r", "-m", "sh", "-c", command, try Tool.executable().path, tool.store] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile(), stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Tool.Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                        stderr: String(decoding: stderr, as: UTF8.self))
    }

    @Test("On a read-only file system, read commands work and writes name the cause")
    func readOnlyFileSystem() throws {
        let tool = try Tool()
        try tool.run(["sync"])
        let regions = try onReadOnlyMount(tool, ["regions", "--json"])
        #expect(regions.status == 0, "\(regions.stderr)")
        #expect((regions.json as? [[String: Any]])?.count == 50)
        for command in [["recents"], ["favorites"], ["status", "--json"], ["check"]] {
            let run = try onReadOnlyMount(tool, command)
            #expect(run.status == 0, "\(command): \(run.stderr)")
        }
        let id = try #require((try tool.run(["photos", "--region", "Yucatán", "--json"]).json as? [[String: Any]])?.first?["id"] as? String)
        let view = try onReadOnlyMount(tool, ["view", id])
        #expect(view.status == 1 && view.stderr.contains("read-only file system") && view.stderr.contains(tool.store), "\(view.stderr)")
        #expect(!view.stderr.contains("SQLite"), "the cause in words, not a SQLite code: \(view.stderr)")
    }

    @Test("A store of another user's that this user may only read: read commands work, writes say permission denied")
    func anotherUsersStore() throws {
        let tool = try Tool()
        try tool.run(["sync"])
        let asOther: [String]
        // What another user may read (WAL's files beside the store, if a process left them).
        let files = [tool.store, tool.store + "-wal", tool.store + "-shm"].filter { FileManager.default.fileExists(atPath: $0) }
        if geteuid() == 0 {
            // Root ignores permissions: run the tool as nobody on a store root owns.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool.directory.path)
            for file in files { try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file) }
            asOther = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: tool.directory.path)
            for file in files { try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file) }
            asOther = []
        }
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool.directory.path) }
        func run(_ arguments: [String]) throws -> Tool.Run {
            let process = Process()
            let executable = try Tool.executable().path
            process.executableURL = URL(fileURLWithPath: asOther.first ?? executable)
            process.arguments = Array(asOther.dropFirst()) + (asOther.isEmpty ? [] : [executable]) + ["--store", tool.store] + arguments
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let stdout = out.fileHandleForReading.readDataToEndOfFile(), stderr = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Tool.Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                            stderr: String(decoding: stderr, as: UTF8.self))
        }
        let regions = try run(["regions", "--json"])
        #expect(regions.status == 0, "\(regions.stderr)")
        #expect((regions.json as? [[String: Any]])?.count == 50)
        let prune = try run(["prune"])
        #expect(prune.status == 1 && prune.stderr.contains("permission denied"), "\(prune.stderr)")
    }

    @Test("Output that cannot be written is a failure that says so, not a crash; a log that cannot be written is ignored")
    func unwritableOutput() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        func run(_ arguments: [String], stdout: String, stderr: FileHandle) throws -> Int32 {
            let process = Process()
            process.executableURL = try Tool.executable()
            process.arguments = ["--store", tool.store] + arguments
            process.standardOutput = FileHandle(forWritingAtPath: stdout)
            process.standardError = stderr
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationReason == .exit, "\(arguments): it exits, it does not crash")
            return process.terminationStatus
        }
        let errors = Pipe()
        #expect(try run(["regions"], stdout: "/dev/full", stderr: errors.fileHandleForWriting) == 1)
        #expect(try run(["--help"], stdout: "/dev/full", stderr: errors.fileHandleForWriting) == 1)
        #expect(try run(["users", "add", "carol"], stdout: "/dev/full", stderr: errors.fileHandleForWriting) == 1)
        #expect(!(try tool.run(["users"]).stdout.contains("carol")), "a token nobody saw leaves no user behind")
        try errors.fileHandleForWriting.close()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(said.contains("cannot write to standard output: No space left on device"), "\(said)")
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        #expect(try run(["regions", "--limit", "x"], stdout: "/dev/null", stderr: full) == 64)
        #expect(try run(["check"], stdout: "/dev/null", stderr: full) == 0)
    }

    @Test("A store another process keeps locked: reads go on, a write gives up after TOPREGIONS_BUSY_TIMEOUT with 75 and plain words")
    func busyStore() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        let photo = try #require(((try tool.run(["--json", "regions", "--limit", "1"]).json as? [[String: Any]])?.first?["id"] as? String)
            .flatMap { region in (try? tool.run(["--json", "photos", "--region", region]).json as? [[String: Any]])?.first?["id"] as? String })
        let holder = try StoreLockHolder(store: tool.store)
        defer { holder.release() }
        let environment = ["TOPREGIONS_BUSY_TIMEOUT": "1s"]
        let read = try tool.run(["regions", "--limit", "1"], environment: environment)
        #expect(read.status == 0, "reading needs no write lock: \(read.stderr)")
        let write = try tool.run(["view", photo], environment: environment)
        #expect(write.status == 75, "\(write.stderr)")
        #expect(write.stderr.contains("busy") && !write.stderr.contains("SQL"), "\(write.stderr)")
        #expect(try tool.run(["regions"], environment: ["TOPREGIONS_BUSY_TIMEOUT": "soon"]).status == 64)
        holder.release()

        // A program that keeps the store to itself holds up reads too: 75 as well, with or without --json.
        let exclusive = try StoreLockHolder(store: tool.store, exclusive: true)
        defer { exclusive.release() }
        for words in [["status"], ["check"], ["--json", "check"], ["regions"]] {
            let run = try tool.run(words, environment: environment)
            #expect(run.status == 75, "\(words): \(run.stderr)")
            #expect((run.stderr + run.stdout).contains("busy"), "\(words): \(run.stderr)")
        }
        #expect(try tool.run(["--json", "check"], environment: ["TOPREGIONS_BUSY_TIMEOUT": "0s"]).stdout.isEmpty, "a usage error is not a check's answer")
    }

    @Test("SIGTERM stops a daemon whose pass waits for another process's lock on the store at once, not after the busy timeout")
    func daemonStopsWhileWaitingForTheStore() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        let holder = try StoreLockHolder(store: tool.store)
        defer { holder.release() }
        let (daemon, _, errors) = try tool.process(["daemon", "--interval", "1h"])
        let log = LogReader(errors)
        #expect(log.wait(for: "event=start", count: 1), "\(log.text)")
        Thread.sleep(forTimeInterval: 1)  // the pass is waiting for the lock now
        let started = Date()
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0)
        #expect(Date().timeIntervalSince(started) < 5, "\(log.text)")
    }
}
