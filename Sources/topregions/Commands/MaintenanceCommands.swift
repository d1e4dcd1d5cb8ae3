import Foundation
import PostgresStore
import TopRegionsKit

/// What `check --json` prints.
struct CheckReport: Encodable {
    var ok: Bool
    var problems: [String]
}

// `prune`, `status`, `check`: looking after the store.
extension Commands {
    static let prune = Command(
        name: "prune", abstract: "Delete photos downloaded long ago (keeping Recents and Favorites) and what is left empty.",
        options: [.value("older-than", "DURATION", "age to prune at: 90s, 20m, 1h30m, 7d", default: "7d")],
        examples: [Example(arguments: ["prune", "--older-than", "14d"], explanation: "prune photos downloaded more than two weeks ago")]
    ) { invocation in
        let age = try invocation.duration("older-than", default: Gallery.defaultRetention, range: 1...(3650 * 86_400))
        let gallery = try invocation.openWriter()
        defer { gallery.close() }
        let result = try gallery.prune(olderThan: age)
        if invocation.output.json {
            try invocation.output.emit(["photos": result.photos, "photographers": result.photographers, "places": result.places, "regions": result.regions])
        } else {
            invocation.output.line("pruned \(plural(result.photos, "photo")), \(plural(result.photographers, "photographer")), \(plural(result.places, "place")), \(plural(result.regions, "region"))")
        }
        return 0
    }

    static let status = Command(
        name: "status", abstract: "Show what the store holds, the last sync, the daemon and the rate limit.",
        examples: [Example(arguments: ["status", "--json"], explanation: "the same as JSON")]
    ) { invocation in
        let status: GalleryStatus
        if Gallery.isPostgres(invocation.storePath) {
            status = try Gallery.postgresStatus(invocation.storePath, busyTimeout: try invocation.busyTimeout())
        } else {
            let gallery = try invocation.openGallery(.read)
            defer { gallery.close() }
            status = try gallery.status()
        }
        let path = Gallery.displayed(invocation.storePath)
        let report = StatusReport(status, store: path)
        if invocation.output.json { try invocation.output.emit(report); return 0 }
        var rows: [(String, String)] = [("store", path), ("photos", "\(status.photos)"), ("regions", "\(status.regions)"),
                                        ("photographers", "\(status.photographers)"), ("pending places", "\(status.pendingPlaces)"),
                                        ("daemon", daemonLine(status.daemons))]
        if let run = status.lastSync {
            rows.append(("last sync", "\(run.result), started \(run.startedAt.iso8601)" + (run.finishedAt.map { ", finished \($0.iso8601)" } ?? ", did not finish")))
            rows.append(("  photos", "\(run.photosNew) new, \(run.photosUpdated) updated"))
            rows.append(("  places", "\(run.placesResolved) resolved, \(run.placesPending) pending, \(run.placesFailed) failed"))
            rows.append(("  calls", "\(run.calls)"))
            if let error = run.error { rows.append(("  error", error)) }
        } else {
            rows.append(("last sync", "none yet"))
        }
        let limit = status.rateLimit.map { "\($0.formatted()) calls/h" } ?? (status.rateLimitIsNone ? "none" : "not known yet")
        rows.append(("rate limit", limit))
        rows.append(("calls in the last hour", plural(Int(status.callsLastHour), "call")))
        rows.append(("commits noticed by", status.observation))
        var table = Table([("", .key), ("", .text)])
        for row in rows { table.append([row.0, row.1]) }
        // Without the header line: a status is fields, not a list.
        invocation.output.write(table.text(width: nil).split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n"))
        return 0
    }

    /// `not running`, `running (pid 12)` on this host, `running on web2 (pid 34)`; of
    /// several (daemons sharing a database), each.
    static func daemonLine(_ daemons: [RunningDaemon]) -> String {
        func one(_ daemon: RunningDaemon) -> String {
            let pid = daemon.pid.map { "pid \($0)" } ?? "pid not known"
            return daemon.isOnThisHost ? "\(pid) here" : "\(pid) on \(daemon.host ?? "a host not known")"
        }
        switch daemons.count {
        case 0: return "not running"
        case 1 where daemons[0].isOnThisHost: return "running (pid \(daemons[0].pid.map(String.init) ?? "not known"))"
        default:
            let shown = daemons.sorted { $0.isOnThisHost && !$1.isOnThisHost }
            return "\(daemons.count) running: " + shown.map(one).joined(separator: ", ")
        }
    }

    static let check = Command(
        name: "check", abstract: "Recompute the counts and run the store's integrity and foreign key checks.",
        examples: [Example(arguments: ["check"], explanation: "\"ok\", or each problem found (exit 1)")],
        discussion: "This is the way to check a store: the sqlite3 shell cannot run PRAGMA integrity_check on it (see docs/store.md). "
            + "A PostgreSQL store (--store postgresql://…) gets the same count checks, and its sort keys are compared with this program's order."
    ) { invocation in
        let problems: [String]
        do {
            problems = try checkProblems(of: invocation.storePath, invocation)
        } catch {
            // A store that cannot even be read is the check's answer too, in JSON as well.
            guard invocation.output.json, !(error is UsageError) else { throw error }
            try invocation.output.emit(CheckReport(ok: false, problems: [ExitStatus.message(error)]))
            return ExitStatus.of(error)  // a busy store is 75, as without --json
        }
        if invocation.output.json { try invocation.output.emit(CheckReport(ok: problems.isEmpty, problems: problems)) } else {
            if problems.isEmpty { invocation.output.write("ok\n") }
            for problem in problems { invocation.output.line(problem) }
        }
        return problems.isEmpty ? 0 : ExitStatus.failure
    }
}

extension Commands {
    static let migrate = Command(
        name: "migrate", abstract: "Create the store, or bring it to this program's schema (sync does it on first use too).",
        examples: [Example(arguments: ["migrate"], explanation: "create or upgrade the store")],
        discussion: "With --store postgresql://USER@HOST/DATABASE it creates the tables of a PostgreSQL store in an empty database (docs/operations.md)."
    ) { invocation in
        var outcome = PostgresStore.MigrationOutcome.current
        if Gallery.isPostgres(invocation.storePath) {
            outcome = try Gallery.migratePostgres(invocation.storePath, busyTimeout: try invocation.busyTimeout())
        } else {
            let existed = FileManager.default.fileExists(atPath: invocation.storePath)
            let gallery = try invocation.openGallery(.create)
            gallery.close()
            if !existed { outcome = .created }
        }
        let store = Gallery.displayed(invocation.storePath)
        if invocation.output.json { try invocation.output.emit(["store": store, "schema": "current"]) } else {
            switch outcome {
            case .created: invocation.output.line("created the store's tables in \(store)")
            case .upgraded: invocation.output.line("upgraded the store in \(store) to this program's schema")
            case .current: invocation.output.line("the store at \(store) has this program's schema")
            }
        }
        return 0
    }
}

extension Commands {
    static let copy = Command(
        name: "copy", abstract: "Copy a whole gallery to a new store: users, Recents, Favorites and thumbnails included.",
        options: [.value("from", "STORE", "the store to copy (default: the one --store names)"),
                  .value("to", "STORE", "the new store: a file that must not exist, or a PostgreSQL URL of a database with no gallery")],
        examples: [Example(arguments: ["copy", "--to", "backup.sqlite"], explanation: "a consistent copy, even while a daemon or server writes")],
        discussion: "Either store may be a SQLite file or a PostgreSQL URL (--to postgresql://USER@HOST/DATABASE moves a gallery up into an empty database; --from postgresql://… --to FILE copies it back). The copy is what was committed when it began; the store keeps being written meanwhile. The store copied is only read (a store of an older version is not migrated); the copy is brought to this version and checked (as `topregions check` does) once written. A copy that fails leaves nothing at the destination. Large images stay in the image cache, which every store of the user shares.",
        loneWordOption: "to"
    ) { invocation in
        guard let destination = invocation.value("to"), !destination.isEmpty else {
            throw UsageError("copy needs --to STORE: the new store's file or PostgreSQL URL", command: invocation.command)
        }
        let source = invocation.value("from") ?? invocation.storePath
        guard !source.isEmpty else { throw UsageError("--from needs a store's path or URL", command: invocation.command) }
        let copied = try Gallery.copyStore(from: source, to: destination, busyTimeout: try invocation.busyTimeout())
        let (from, to, problems) = (Gallery.displayed(source), Gallery.displayed(destination), copied.problems)
        if invocation.output.json {
            try invocation.output.emit(CopyReport(from: from, to: to, photos: copied.photos, regions: copied.regions,
                                                  check: CheckReport(ok: problems.isEmpty, problems: problems)))
        } else {
            invocation.output.line("copied \(from) to \(to): \(copied.photos) photos, \(copied.regions) regions; check: \(problems.isEmpty ? "ok" : plural(problems.count, "problem"))")
            for problem in problems { invocation.output.line(problem) }
        }
        return problems.isEmpty ? 0 : ExitStatus.failure
    }

    /// `check`'s problems with the store at `location`, a SQLite file or a PostgreSQL URL.
    static func checkProblems(of location: String, _ invocation: Invocation) throws -> [String] {
        if Gallery.isPostgres(location) { return try Gallery.checkPostgres(location, busyTimeout: try invocation.busyTimeout()) }
        let gallery = try invocation.openGallery(.read, at: location)
        defer { gallery.close() }
        return try gallery.check()
    }

}

/// `copy --json`: where from and to, what the copy holds, and its check.
struct CopyReport: Encodable {
    var from: String
    var to: String
    var photos: Int64
    var regions: Int64
    var check: CheckReport
}
