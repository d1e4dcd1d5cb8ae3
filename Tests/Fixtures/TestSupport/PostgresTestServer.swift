import Foundation

/// A throwaway PostgreSQL server for the tests: `initdb` into a temporary directory, started
/// with `pg_ctl` on 127.0.0.1 and a free port (its socket in the same directory), one per
/// test process, each test in a database of its own.
///
/// A watchdog process stops the server and removes its directory when the test process
/// ends, however it ends (a failed expectation, a crash, SIGKILL), so no server outlives
/// the run. As root, the server runs as the `postgres` user (PostgreSQL refuses root).
public final class PostgresTestServer: @unchecked Sendable {
    /// Set by `scripts/test` (and so CI): a missing PostgreSQL fails the tests instead of
    /// skipping them.
    public static let isRequired = ProcessInfo.processInfo.environment["TOPREGIONS_REQUIRE_POSTGRES"] == "1"
    /// What a developer runs to enable the PostgreSQL tests.
    public static let enablingCommand = "scripts/install-dependencies --test (installs Debian's postgresql), or scripts/test"
    /// Whether the PostgreSQL tests run here: the server's programs are installed, or CI
    /// requires them.
    public static var shouldRun: Bool { programDirectory != nil || isRequired }

    /// The directory of `initdb` and `pg_ctl`: `$TOPREGIONS_POSTGRES_BIN`, else
    /// `pg_config --bindir`, else the newest `/usr/lib/postgresql/*/bin`.
    public static let programDirectory: String? = {
        let candidates = [ProcessInfo.processInfo.environment["TOPREGIONS_POSTGRES_BIN"], outputOf(["pg_config", "--bindir"])]
            + newestFirst(of: "/usr/lib/postgresql").map { "/usr/lib/postgresql/\($0)/bin" }
        return candidates.compactMap { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }.first { directory in
            FileManager.default.isExecutableFile(atPath: directory + "/initdb") && FileManager.default.isExecutableFile(atPath: directory + "/pg_ctl")
        }
    }()

    /// The server of this test process, started on first use.
    public static func shared() throws -> PostgresTestServer {
        try sharedServer.get()
    }
    private static let sharedServer = Result { try PostgresTestServer() }

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    public let directory: String
    private let programs: String
    private var dataDirectory: String { directory + "/data" }
    private let databaseCounter = NSLock()
    private var databasesMade = 0

    /// Starts a server of its own (for a test that restarts it); most tests use `shared()`.
    public init() throws {
        guard let programs = Self.programDirectory else {
            throw StartError(description: "PostgreSQL's server programs (initdb, pg_ctl) are not installed: \(Self.enablingCommand)")
        }
        self.programs = programs
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("topregions-postgres-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0 { try Self.check(Self.run(["chown", "postgres:", directory]), "chown \(directory) to postgres") }
        try Self.check(Self.runAsServerUser([programs + "/initdb", "-D", directory + "/data", "-U", "postgres", "-A", "trust",
                                             "-E", "UTF8", "--locale=C", "--no-sync"]), "initdb")
        var lastFailure = ""
        for _ in 0..<5 {
            let port = try Self.freePort()
            if let failure = Self.start(programs: programs, directory: directory, port: port) {
                lastFailure = failure
                continue
            }
            self.port = port
            Self.startWatchdog(programs: programs, directory: directory)
            return
        }
        throw StartError(description: "PostgreSQL did not start: \(lastFailure)")
    }

    /// A URL for `database` as the `postgres` superuser (no password: trust on loopback).
    public func url(database: String = "postgres") -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)"
    }

    /// The path of one of PostgreSQL's programs (`psql`, `pg_dump` …) beside `initdb`.
    public func program(_ name: String) -> String { programs + "/" + name }

    /// Creates an empty database of its own for one test; returns its URL. Its text is
    /// ordered by ICU's English collation, as a real deployment's may be, not by bytes: SQL
    /// that takes byte order for granted is found out.
    public func makeDatabase(_ prefix: String = "test") throws -> String {
        databaseCounter.lock()
        databasesMade += 1
        let name = "\(prefix)_\(databasesMade)_\(UInt32.random(in: 0...UInt32.max))"
        databaseCounter.unlock()
        try Self.check(Self.run([programs + "/createdb", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres",
                                   "--template=template0", "--locale-provider=icu", "--icu-locale=en-US", name]), "createdb \(name)")
        return url(database: name)
    }

    /// Restarts the server (a fast shutdown: sessions are ended), as an operator's restart
    /// or a failover would; connections made before it are lost.
    public func restart() throws {
        try Self.check(Self.runAsServerUser([programs + "/pg_ctl", "-D", dataDirectory, "-m", "fast", "-w", "-t", "30", "restart"]),
                       "pg_ctl restart")
    }

    // MARK: Starting and stopping

    /// Starts the server on `port`; nil when it started, else why not.
    private static func start(programs: String, directory: String, port: Int) -> String? {
        let options = "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
            + "-c full_page_writes=off -c max_connections=300"
        let output = runAsServerUser([programs + "/pg_ctl", "-D", directory + "/data", "-l", directory + "/server.log",
                                      "-o", options, "-w", "-t", "60", "start"])
        if output.status == 0 { return nil }
        let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
        return "pg_ctl start said \(output.text.debugDescription); the log ends \(String(log.suffix(400)).debugDescription)"
    }

    /// A detached shell that waits for this process to end, then stops the server at once
    /// and removes its directory. Its output goes nowhere, so it holds no pipe of the test
    /// runner open. Started through a shell that backgrounds it and exits (reaped here), not
    /// through Foundation's Process: this runs inside a `static let`'s one-time
    /// initialisation, where Foundation's first Process sets up the child monitor that every
    /// later `waitUntilExit` in the test process depends on, and was seen to leave it stuck.
    private static func startWatchdog(programs: String, directory: String) {
        let stopCommand = (getuid() == 0 ? "runuser -u postgres -- " : "") + "\"$2/pg_ctl\" -D \"$3/data\" -m immediate -w stop"
        let watchdog = "while kill -0 \"$1\" 2>/dev/null; do sleep 0.5; done; \(stopCommand) >/dev/null 2>&1; rm -rf \"$3\""
        let launcher = "setsid /bin/sh -c '\(watchdog.replacingOccurrences(of: "'", with: "'\\''"))' watchdog \"$1\" \"$2\" \"$3\" </dev/null >/dev/null 2>&1 &"
        _ = run(["/bin/sh", "-c", launcher, "launcher", String(getpid()), programs, directory])
    }

    private static func freePort() throws -> Int {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw StartError(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(socketDescriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(socketDescriptor, generic, length) == 0 && getsockname(socketDescriptor, generic, &length) == 0
            }
        }
        guard bound else { throw StartError(description: "no free port on 127.0.0.1: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: Running programs

    private struct Output {
        var status: Int32
        var text: String
    }

    private static func runAsServerUser(_ arguments: [String]) -> Output {
        getuid() == 0 ? run(["runuser", "-u", "postgres", "--"] + arguments) : run(arguments)
    }

    /// Runs a program to its end; its output (stdout and stderr) is collected in a file.
    /// posix_spawn and waitpid rather than Foundation's Process, whose waitUntilExit was
    /// seen never to return for `runuser` on Linux.
    private static func run(_ arguments: [String]) -> Output {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("topregions-postgres-run-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of the test process goes along (bash closes every descriptor past
        // stderr before it runs the program): the server and the watchdog live on, and a pipe
        // end they kept open would keep another test's child from ever seeing end of file
        // (seen: the property test's writers never stopped, and the suite hung).
        let closeInherited = "for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ \"$n\" -gt 2 ]; then eval \"exec $n>&-\"; fi; done; exec /usr/bin/env \"$@\""
        let argv = (["/bin/bash", "-c", closeInherited, "bash"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
        guard spawned == 0 else { return Output(status: -1, text: "\(arguments[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0
        return Output(status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), text: text)
    }

    private static func outputOf(_ arguments: [String]) -> String? {
        let output: Output = run(arguments)
        return output.status == 0 ? output.text : nil
    }

    private static func check(_ output: Output, _ what: String) throws {
        guard output.status == 0 else {
            throw StartError(description: "\(what) failed (exit \(output.status)): \(String(output.text.suffix(600)).debugDescription)")
        }
    }

    private static func newestFirst(of directory: String) -> [String] {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
    }
}
