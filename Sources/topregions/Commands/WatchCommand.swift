import Dispatch
import Foundation
import Synchronization
import TopRegionsKit

/// Prints a live list: on a terminal, its table redrawn in place, fitted to the screen;
/// elsewhere, the table after each change as a delimited block; with `--json`, the list's
/// events as JSON lines (a snapshot, then one batch per change).
struct WatchPrinter<Row: TableRow & Encodable & Sendable> {
    let output: Output
    let title: String

    func print(_ event: ListEvent<Row>, list: LiveList<Row>) throws {
        if output.json { return try output.emit(event) }
        guard case .snapshot(let token, let sections) = try list.snapshot else { return }
        let table = table(sections.map { (heading: $0.name.isEmpty && $0.value.isNull ? nil : $0.name, rows: $0.rows) })
        if output.isTerminal {
            output.write("\u{1B}[H\u{1B}[2J" + Self.fitted(table.text(width: output.terminalWidth), height: output.terminalHeight - 1))
        } else {
            output.write("── \(TerminalText.escape(title)) at token \(token) ──\n" + table.text(width: nil))
        }
    }

    /// The first lines that fit, the header kept, the rest counted.
    static func fitted(_ text: String, height: Int) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        guard lines.count > height, height >= 2 else { return text }
        return lines.prefix(height - 1).joined(separator: "\n") + "\n… \(lines.count - (height - 1)) more\n"
    }
}

extension Commands {
    static let watch = Command(
        name: "watch", abstract: "Show a list live as it changes (also changes made by other processes).",
        arguments: [Argument(name: "LIST", help: "regions, recents, favorites or photos")],
        options: [.value("region", "NAME|ID", "for photos: the region"),
                  .value("limit", "N", "for regions: how many", default: "50"),
                  .value("exit-after", "N", "stop after N changes"), userOption],
        examples: [Example(arguments: ["watch", "recents", "--json", "--exit-after", "1"], explanation: "Recents, then its next change, as JSON lines")]
    ) { invocation in
        let exitAfter = try invocation.value("exit-after").map { _ in try invocation.integer("exit-after", default: 1, range: 1...1_000_000) }
        let limit = try invocation.integer("limit", default: 50, range: 1...10_000)
        let list = invocation.positional(0) ?? ""
        if ["regions", "recents", "favorites"].contains(list), invocation.value("region") != nil {
            throw UsageError("--region goes with watch photos, not watch \(list)", command: invocation.command)
        }
        if ["photos", "recents", "favorites"].contains(list), invocation.value("limit") != nil {
            throw UsageError("--limit goes with watch regions, not watch \(list)", command: invocation.command)
        }
        let gallery = try invocation.openObserver()
        defer { gallery.close() }
        switch list {
        case "regions": return try await follow(try gallery.liveTopRegions(limit: limit), "top regions", invocation, exitAfter)
        case "recents":
            let user = try invocation.user(of: gallery)
            return try await follow(try gallery.liveRecents(for: user), "recents", invocation, exitAfter, endingWithout: (user, gallery))
        case "favorites":
            let user = try invocation.user(of: gallery)
            return try await follow(try gallery.liveFavorites(for: user), "favorites", invocation, exitAfter, endingWithout: (user, gallery))
        case "photos":
            guard let name = invocation.value("region") else { throw UsageError("watch photos needs --region NAME|ID", command: invocation.command) }
            let region = try gallery.region(named: name)
            return try await follow(try gallery.liveRegionPhotos(regionID: region.id ?? -1), "photos of \(region.name)", invocation, exitAfter)
        default:
            throw UsageError("watch takes regions, recents, favorites or photos, not \"\(list)\"", command: invocation.command)
        }
    }

    /// Prints the list's events until `exitAfter` changes, SIGTERM, SIGINT or SIGHUP; or,
    /// for a user's list, until the user is removed (status 1: a user of that name added
    /// later is someone else, with lists of their own).
    static func follow<Row: TableRow & Encodable & Sendable>(_ list: LiveList<Row>, _ title: String, _ invocation: Invocation,
                                                             _ exitAfter: Int?,
                                                             endingWithout owner: (user: GalleryUser, gallery: any GalleryObserving)? = nil) async throws -> Int32 {
        let printer = WatchPrinter<Row>(output: invocation.output, title: title)
        let events = list.events()
        // The signals are caught before the first line is printed: a signal sent as soon as
        // the snapshot is seen must end the watch cleanly, not by the signal's default.
        // SIGHUP too: for a watch it means its terminal went away, not "sync now".
        let running = Mutex<(task: Task<Void, Error>?, signalled: Bool)>((nil, false))
        let signals = SignalEvents { _ in
            running.withLock { state in
                state.signalled = true
                state.task?.cancel()
            }
        }
        let reader = Task {
            var changes = 0
            for await event in events {
                try printer.print(event, list: list)
                if case .batch = event { changes += 1 }
                if let exitAfter, changes >= exitAfter { return }
            }
        }
        running.withLock { state in
            state.task = reader
            if state.signalled { reader.cancel() }
        }
        let userRemoved = Mutex(false)
        let userWatch = owner.map { owner in
            let endIfRemoved: @Sendable () -> Void = {
                guard let users = try? owner.gallery.users(), !users.contains(where: { $0.id == owner.user.id }) else { return }
                userRemoved.withLock { $0 = true }
                reader.cancel()
            }
            let observation = owner.gallery.observeUserChanges(endIfRemoved)
            endIfRemoved()  // removed before the observation began
            return observation
        }
        _ = try? await reader.value
        withExtendedLifetime((signals, userWatch)) {}
        if let owner, userRemoved.withLock({ $0 }) {
            throw RuntimeError("user \(owner.user.name) was removed while their \(title) were watched")
        }
        if !reader.isCancelled, let reason = list.endReason { throw RuntimeError(reason) }
        return 0
    }
}
