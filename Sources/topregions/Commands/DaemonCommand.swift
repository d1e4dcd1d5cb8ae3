import CProcessMemory
import Dispatch
import Foundation
import Synchronization
import TopRegionsKit

/// Signals as events: SIGHUP asks for a pass now, SIGTERM and SIGINT for a stop. The
/// process may have been started with signals blocked (Foundation's Process does that to
/// its children), so they are unblocked first.
///
/// `@unchecked Sendable`: `sources` is touched only on `queue`.
final class SignalEvents: @unchecked Sendable {
    enum Event { case passNow, stop }
    /// Touched only on `queue`.
    private var sources: [DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "topregions.signals")

    init(_ handler: @escaping @Sendable (Event) -> Void) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGHUP, SIGTERM, SIGINT] { sigaddset(&set, signal) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        queue.sync {
            for (number, event) in [(SIGHUP, Event.passNow), (SIGTERM, .stop), (SIGINT, .stop)] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { handler(event) }
                source.resume()
                sources.append(source)
            }
        }
    }
}

/// The daemon's log: one line per event on stderr, `ts=… level=… event=… key=value` (each
/// value quoted and escaped as needed, so one event is one line), or with `--json` one JSON
/// object per line.
struct DaemonLog: Sendable {
    let json: Bool

    func callAsFunction(_ level: String, _ event: String, _ fields: [(String, any Sendable)] = []) {
        let line: String
        if json {
            var object: [String: JSONField] = ["ts": .text(Date().iso8601), "level": .text(level), "event": .text(event)]
            for (key, value) in fields { object[key] = JSONField(value) }
            line = (try? GalleryJSON.text(object)) ?? "{}"
        } else {
            line = "ts=\(Date().iso8601) level=\(level) event=\(event)" + fields.map { " \($0.0)=" + TerminalText.logValue("\($0.1)") }.joined()
        }
        StandardStreams.err(Data((line + "\n").utf8))
    }

    /// A number of seconds as the log writes it: whole seconds as an integer, others to
    /// the hundredth (a JSON number either way, never text).
    static func seconds(_ value: TimeInterval) -> any Sendable {
        let hundredths = (value * 100).rounded() / 100
        return hundredths == hundredths.rounded() && abs(hundredths) < 1e15 ? Int(hundredths) : hundredths
    }

    enum JSONField: Encodable {
        case text(String), integer(Int64), number(Double)
        init(_ value: any Sendable) {
            switch value {
            case let number as Int: self = .integer(Int64(number))
            case let number as Int32: self = .integer(Int64(number))
            case let number as Int64: self = .integer(number)
            case let number as Double: self = .number(number)
            default: self = .text("\(value)")
            }
        }
        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .integer(let number): try container.encode(number)
            case .number(let number): try container.encode(number)
            }
        }
    }
}

/// The daemon's state between signals and passes. A pass starts only through `startPass`,
/// which refuses once a stop was asked for, and a stop cancels the pass or sleep running:
/// no pass starts after SIGTERM, and a wait (the sync lock, the rate limit, a sleep) ends
/// at once.
actor DaemonState {
    private(set) var stopping = false
    /// Whether the current task is a pass (not a sleep).
    var passRunning = false

    func setPassRunning(_ running: Bool) { passRunning = running }
    private var passRequested = false
    private var cancelCurrent: (@Sendable () -> Void)?

    /// Runs `work` as the current task unless stopping; nil when stopping.
    func start<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> Task<T, Never>? {
        guard !stopping else { return nil }
        let task = Task { await work() }
        cancelCurrent = { task.cancel() }
        return task
    }

    func signal(_ event: SignalEvents.Event) {
        switch event {
        case .stop:
            stopping = true
            cancelCurrent?()
        case .passNow:
            passRequested = true
            // A pass running is not interrupted; a sleep is.
            if !passRunning { cancelCurrent?() }
        }
    }

    /// Whether a pass was asked for since the last call.
    func takePassRequest() -> Bool {
        defer { passRequested = false }
        return passRequested
    }
}

/// glibc gives a process's threads up to 8 malloc arenas per core, and a long-running process
/// keeps each one's pages once it has touched them; the daemon's threads need no more than
/// two (`topregions-bench daemon.memory` measures it). `MALLOC_ARENA_MAX` in the environment,
/// when set, wins.
func limitMallocArenas() {
    guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil else { return }
    _ = topregions_limit_malloc_arenas(2)
}

extension Commands {
    static let daemon = Command(
        name: "daemon", abstract: "Keep the store fresh: a sync pass now, then every interval; SIGHUP for a pass now.",
        options: [.value("interval", "DURATION", "time between passes, with a little jitter, 0.01s to 30d", default: "20m")] + SourceOptions.all,
        examples: [Example(arguments: ["daemon", "--interval", "15m"], explanation: "a pass now and every quarter of an hour; SIGTERM stops it")],
        discussion: "Logs one line per event on stderr (JSON lines with --json). SIGTERM or SIGINT stop it within seconds, exit 0, with the transaction in progress committed or rolled back and no pass started after it.",
        loneWordOption: "interval"
    ) { invocation in
        limitMallocArenas()
        // As short as 10 ms, for tests and benchmarks that run many passes.
        let interval = try invocation.duration("interval", default: 20 * 60, range: 0.01...(30 * 86_400))
        let source = try invocation.source()
        let options = try invocation.syncOptions()
        let gallery = try invocation.openSyncer()
        defer { gallery.close() }
        let lock = try gallery.holdDaemonLock()
        defer { lock.release() }
        let log = DaemonLog(json: invocation.output.json)
        let state = DaemonState()
        let signals = SignalEvents { event in
            // A pass waiting for another process's lock on the store stops waiting.
            if event == .stop { gallery.interruptWaits() }
            Task { await state.signal(event) }
        }
        log("info", "start", [("pid", getpid()), ("interval", DaemonLog.seconds(interval)), ("source", source.name), ("store", Gallery.displayed(invocation.storePath))])
        var failures = 0
        while await !state.stopping {
            // A daemon shown through its database connection is shown again after a restart.
            try? lock.confirm()
            guard let pass = await state.start({ await runPass(gallery, source: source, options: options, log: log) }) else { break }
            await state.setPassRunning(true)
            let failed = await pass.value
            await state.setPassRunning(false)
            switch failed {
            case true?: failures += 1
            case false?: failures = 0
            case nil: break
            }
            guard await !state.stopping else { break }
            if await state.takePassRequest() { continue }
            // After failures, try again sooner, backing off up to the interval.
            let base = failures == 0 ? interval : min(interval, 30 * pow(2, Double(min(failures, 30) - 1)))
            let wait = base * Double.random(in: 0.9...1.1)
            log("info", "sleep", [("seconds", DaemonLog.seconds(wait)), ("failures", failures)])
            guard let sleep = await state.start({ await sleep(wait, confirming: lock) }) else { break }
            await sleep.value
            if await state.takePassRequest() { log("info", "pass-requested", [("signal", "HUP")]) }
        }
        withExtendedLifetime(signals) {}
        log("info", "stop", [("pid", getpid())])
        return 0
    }

    /// How often a sleeping daemon confirms its lock: a database restarted meanwhile has
    /// forgotten the daemon, and `status` on other hosts shows it again within this time.
    static let presenceCheckSeconds: Double = 5

    /// Sleeps `seconds` (until cancelled), confirming `lock` every `presenceCheckSeconds`
    /// in between (the pass after the sleep confirms it first anyway).
    static func sleep(_ seconds: Double, confirming lock: any SyncLockHold) async {
        var left = seconds
        while left > 0 {
            let slice = min(left, presenceCheckSeconds)
            do { try await Task.sleep(nanoseconds: UInt64(slice * 1e9)) } catch { return }
            left -= slice
            if left > 0 { try? lock.confirm() }
        }
    }

    /// One pass, logged; whether it failed (nil: cancelled by a signal).
    /// `holding`: the sync lock, taken already (a server's pass asked for over HTTP).
    static func runPass(_ gallery: any GallerySyncing, source: GallerySource, options: SyncOptions, log: DaemonLog,
                        holding lock: (any SyncLockHold)? = nil) async -> Bool? {
        var options = options
        let lastLogged = Mutex(Date.distantPast)
        options.progress = { progress in
            switch progress {
            case .waitingForLock(let pid):
                if lastLogged.withLock({ last in defer { last = Date() }; return Date().timeIntervalSince(last) >= 30 }) {
                    log("info", "waiting-for-lock", [("holder_pid", pid.map { "\($0)" } ?? "unknown")])
                }
            case .pages(let read, let of, let stored):
                log("info", "progress", [("pages_read", read), ("pages", of), ("photos_stored", stored)])
            case .waitingForRateLimit(let seconds, let limit):
                if seconds >= 5 { log("info", "rate-limit-wait", [("seconds", DaemonLog.seconds(seconds)), ("limit", limit)]) }
            case .places:
                break
            }
        }
        do {
            // One daemon per file waits for a `sync` run by hand; of several daemons sharing
            // a database, one runs each pass and the others skip it.
            let result = try await gallery.sync(from: source, options: options, waitForLock: !gallery.takesManyDaemons, holding: lock)
            log(result.outcome == .failed ? "error" : "info", "sync", [
                ("result", result.outcome.rawValue), ("photos_new", result.photosNew), ("photos_updated", result.photosUpdated),
                ("places_resolved", result.placesResolved), ("places_pending", result.placesPending), ("calls", result.calls),
                ("records_skipped", result.recordsSkipped), ("future_dates_ignored", result.futureDatesIgnored),
                ("places_left_at_deadline", result.placesLeftAtDeadline),
                ("seconds", DaemonLog.seconds(result.seconds))] + (result.error.map { [("error", $0)] } ?? []))
            for record in result.skippedRecords { log("warning", "skipped-record", [("record", record)]) }
            return result.outcome == .failed
        } catch let stopped as Gallery.SyncStopped {
            log("info", "sync-cancelled", [("calls", stopped.result.calls), ("photos_new", stopped.result.photosNew),
                                           ("seconds", DaemonLog.seconds(stopped.result.seconds))])
            return nil
        } catch is CancellationError {
            log("info", "sync-cancelled")
            return nil
        } catch let error as GalleryError where gallery.takesManyDaemons && error.kind.isSyncRunning {
            log("info", "sync-skipped", [("reason", "another sync is running")])
            return false
        } catch {
            log("error", "sync", [("result", "failed"), ("error", "\(error)")])
            return true
        }
    }
}
