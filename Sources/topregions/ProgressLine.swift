import Foundation
import Synchronization
import TopRegionsKit

/// One line on stderr that a sync keeps up to date while it runs: pages read, photos
/// stored, places answered, and what holds the pass (the rate limit, another sync). Only on
/// a terminal, and never with `--json` or `--quiet`; cleared when the pass ends.
final class ProgressLine: Sendable {
    private struct State {
        var pages = "", places = "", waiting = ""
        /// The pages' counters in fewer words, for a narrow line.
        var shortPages = ""
        /// The wait in a few words, for a line too narrow for `waiting`.
        var shortWaiting = ""
        var lastDrawn = Date.distantPast
        var shown = false
    }

    private let state = Mutex(State())
    let isShown: Bool
    /// Columns the line may take: one less than the terminal's, so that it never wraps
    /// (a wrapped line leaves its first row behind at each redraw).
    private let width: Int

    init(output: Output) {
        isShown = output.errorIsTerminal && !output.json && !output.quiet
        width = max(10, output.errorTerminalWidth - 1)
    }

    /// Takes one progress event (from any of the pass's tasks).
    func update(_ progress: SyncProgress) {
        guard isShown else { return }
        let line: String? = state.withLock { state in
            switch progress {
            case .pages(let read, let of, let stored):
                state.pages = "pages \(read)/\(of) · \(plural(stored, "photo")) stored"
                state.shortPages = "pages \(read)/\(of) · \(plural(stored, "photo"))"
                state.waiting = ""
                state.shortWaiting = ""
            case .places(let answered, let of):
                state.places = "places \(answered)/\(of)"
                state.waiting = ""
                state.shortWaiting = ""
            case .waitingForRateLimit(let seconds, let limit):
                let next = String(format: "%.1f", seconds)
                state.waiting = "waiting for the rate limit (\(limit.formatted()) calls/h): next call in \(next) s"
                state.shortWaiting = "rate limit \(limit.formatted())/h: next in \(next) s"
            case .waitingForLock(let pid):
                state.waiting = "waiting for another sync" + (pid.map { " (pid \($0))" } ?? "")
                state.shortWaiting = state.waiting
            }
            let now = Date()
            // At most ten redraws a second; a wait is always shown.
            guard now.timeIntervalSince(state.lastDrawn) >= 0.1 || !state.waiting.isEmpty else { return nil }
            state.lastDrawn = now
            state.shown = true
            let full = [state.pages, state.places, state.waiting].filter { !$0.isEmpty }.joined(separator: " · ")
            guard Table.displayWidth(full) > width else { return full }
            // Too narrow: fewer words, and what holds the pass first, so that a cut takes
            // the counters rather than the reason the pass waits.
            return [state.shortWaiting, state.shortPages, state.places].filter { !$0.isEmpty }.joined(separator: " · ")
        }
        if let line { StandardStreams.err(Data(("\r\u{1B}[K" + Self.fitted(line, width: width)).utf8)) }
    }

    /// The line cut to `width` columns, with "…" where it was cut.
    static func fitted(_ line: String, width: Int) -> String {
        guard Table.displayWidth(line) > width else { return line }
        var kept = "", used = 0
        for character in line {
            let columns = Table.width(of: character)
            if used + columns > width - 1 { break }
            kept.append(character)
            used += columns
        }
        return kept + "…"
    }

    /// Clears the line (before the pass's result is printed).
    func finish() {
        let shown = state.withLock { $0.shown }
        if shown { StandardStreams.err(Data("\r\u{1B}[K".utf8)) }
    }
}
