import CProcessMemory
import Dispatch
import Flickr
import Foundation
import Store
import TopRegionsKit

/// The daemon's lock (`<store>.daemon-lock`), held for its lifetime, so `status` can tell
/// whether one runs and a second daemon on the same store is refused.
enum DaemonLock {
    static func path(_ storePath: String) -> String { storePath + ".daemon-lock" }

    static func acquire(storePath: String) throws -> ProcessLock {
        try ProcessLock.acquire(path: path(storePath), holder: "daemon", wait: false)
    }

    /// The running daemon's pid, or nil.
    static func holder(storePath: String) -> Int32? {
        ProcessLock.holderPID(path: path(storePath))
    }
}

/// Signals as events: SIGHUP asks for a pass now, SIGTERM and SIGINT for a stop. The
/// process may have been started with signals blocked (Foundation's Process does that to
/// its children), so they are unblocked first.
final class SignalEvents: @unchecked Sendable {
    enum Event { case passNow, stop }
    private var sources: [DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "topregions.signals")

    init(_ handler: @escaping @Sendable (Event) -> Void) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGHUP, SIGTERM, SIGINT] { sigaddset(&set, signal) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        for (number, event) in [(SIGHUP, Event.passNow), (SIGTERM, .stop), (SIGINT, .stop)] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(event) }
            source.resume()
            sources.append(source)
        }
    }
}

/// One log line per event on stderr: `ts=… level=… event=… key=value`.
func log(_ level: String, _ event: String, _ fields: [(String, Any)] = []) {
    var line = "ts=\(Date().iso8601) level=\(level) event=\(event)"
    for (key, value) in fields {
        line += " \(key)=" + TerminalText.logValue("\(value)")
    }
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// The daemon's state between signals and passes.
actor DaemonState {
    private(set) var stopping = false
    private var passRequested = false
    private var current: Task<Void, Never>?
    private var currentPass: Task<Bool?, Never>?

    func run(_ task: Task<Void, Never>) {
        current = task
    }

    /// The pass running now, cancelled by a stop.
    func track(_ pass: Task<Bool?, Never>?) {
        currentPass = pass
    }

    func signal(_ event: SignalEvents.Event) {
        switch event {
        case .stop:
            stopping = true
            current?.cancel()
            currentPass?.cancel()
        case .passNow:
            passRequested = true
            // A pass already running is not interrupted; a sleep is.
            if currentPass == nil { current?.cancel() }
        }
    }

    /// Whether a pass was asked for since the last call.
    func takePassRequest() -> Bool {
        defer { passRequested = false }
        return passRequested
    }
}

/// glibc gives a process's threads up to 8 malloc arenas per core, and a long-running process
/// keeps each one's pages once it has touched them. The daemon's threads (a pass's decoder
/// and writer, the main loop) need no more than two: with two, `daemon.memory` measured
/// 6.6 MB of heap where the default gave 8.3 MB, and none of the default's occasional steps
/// of 0.7 MB late in a run. `MALLOC_ARENA_MAX` in the environment, when set, wins.
func limitMallocArenas() {
    guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil else { return }
    _ = topregions_limit_malloc_arenas(2)
}

extension Commands {
    static let daemon = Command(name: "daemon", abstract: "Keep the store fresh: a sync pass now, then every interval; SIGHUP for a pass now.",
                                usage: "daemon [--interval 20m] [source options]",
                                options: ["--interval D       time between passes, with a little jitter (default: 20m)"] + sourceOptions,
                                example: "topregions daemon --interval 15m") { context in
        limitMallocArenas()
        let interval = try context.arguments.duration("interval", default: 20 * 60, range: 1...(30 * 86_400))
        let gallery = try context.openGallery(.create)
        defer { gallery.close() }
        let (client, source) = try context.source(gallery: gallery)
        let options = try context.syncOptions()
        _ = try context.arguments.positionals(0...0, "")
        let lock = try DaemonLock.acquire(storePath: context.storePath)
        defer { lock.release() }
        let state = DaemonState()
        let signals = SignalEvents { event in Task { await state.signal(event) } }
        log("info", "start", [("pid", getpid()), ("interval", Int(interval)), ("source", source), ("store", context.storePath)])
        var failures = 0
        while await !state.stopping {
            // The pass says whether it failed (nil: cancelled by a signal).
            let pass = Task<Bool?, Never> {
                do {
                    let result = try await gallery.sync(client: client, options: options, waitForLock: true)
                    log(result.outcome == .failed ? "error" : "info", "sync", [
                        ("result", result.outcome.rawValue), ("photos_new", result.photosNew), ("photos_updated", result.photosUpdated),
                        ("places_resolved", result.placesResolved), ("places_pending", result.placesPending), ("calls", result.calls),
                        ("records_skipped", result.recordsSkipped), ("future_dates_ignored", result.futureDatesIgnored),
                        ("places_left_at_deadline", result.placesLeftAtDeadline),
                        ("seconds", String(format: "%.2f", result.seconds)), ("error", result.error ?? "")])
                    for record in result.skippedRecords { log("warning", "skipped-record", [("record", record)]) }
                    return result.outcome == .failed
                } catch is CancellationError {
                    log("info", "sync-cancelled")
                    return nil
                } catch {
                    log("error", "sync", [("result", "failed"), ("error", "\(error)")])
                    return true
                }
            }
            await state.run(Task { _ = await pass.value })
            await state.track(pass)
            switch await pass.value {
            case true?: failures += 1
            case false?: failures = 0
            case nil: break
            }
            guard await !state.stopping else { break }
            if await state.takePassRequest() { continue }
            // After failures, try again sooner, backing off up to the interval.
            let base = failures == 0 ? interval : min(interval, 30 * pow(2, Double(failures - 1)))
            let wait = base * Double.random(in: 0.9...1.1)
            log("info", "sleep", [("seconds", Int(wait)), ("failures", failures)])
            let sleep = Task<Void, Never> { try? await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
            await state.track(nil)
            await state.run(sleep)
            await sleep.value
            if await state.takePassRequest() { log("info", "pass-requested", [("signal", "HUP")]) }
        }
        withExtendedLifetime(signals) {}
        log("info", "stop", [("pid", getpid())])
        return 0
    }
}
