import Foundation
import TopRegionsKit

/// What `sync --json` prints (a contract: see docs/cli.md).
struct SyncReport: Encodable {
    struct Photos: Encodable { var new: Int; var updated: Int }
    struct Places: Encodable { var resolved: Int; var pending: Int; var failed: Int }
    struct Failure: Encodable {
        var message: String
        /// `temporary` (exit 75: try again later) or `permanent` (exit 1).
        var kind: String
        var source: String?
        var hint: String?

        enum CodingKeys: String, CodingKey { case message, kind, source, hint }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(message, forKey: .message)
            try container.encode(kind, forKey: .kind)
            try container.encode(source, forKey: .source)
            try container.encode(hint, forKey: .hint)
        }
    }

    var result: String
    var photos: Photos
    var places: Places
    var calls: Int
    var seconds: Double
    var recordsSkipped: Int
    var futureDatesIgnored: Int
    var placesLeftAtDeadline: Int
    var notes: [String]
    var error: Failure?

    /// The report of a pass that never ran: the store could not be opened, another sync
    /// holds it, the key file cannot be read.
    init(failureBeforeThePass error: Error) {
        result = "failed"
        photos = Photos(new: 0, updated: 0)
        places = Places(resolved: 0, pending: 0, failed: 0)
        calls = 0
        seconds = 0
        recordsSkipped = 0
        futureDatesIgnored = 0
        placesLeftAtDeadline = 0
        notes = []
        let galleryError = error as? GalleryError
        self.error = Failure(message: galleryError?.message ?? ExitStatus.message(error),
                             kind: ExitStatus.of(error) == ExitStatus.temporaryFailure ? "temporary" : "permanent",
                             source: nil, hint: galleryError?.hint)
    }

    init(_ result: SyncResult) {
        self.result = result.outcome.rawValue
        photos = Photos(new: result.photosNew, updated: result.photosUpdated)
        places = Places(resolved: result.placesResolved, pending: result.placesPending, failed: result.placesFailed)
        calls = result.calls
        seconds = (result.seconds * 1000).rounded() / 1000
        recordsSkipped = result.recordsSkipped
        futureDatesIgnored = result.futureDatesIgnored
        placesLeftAtDeadline = result.placesLeftAtDeadline
        notes = result.notes
        error = result.failure.map { Failure(message: $0.message, kind: $0.isTemporary ? "temporary" : "permanent", source: $0.source, hint: $0.hint) }
    }

    enum CodingKeys: String, CodingKey {
        case result, photos, places, calls, seconds, recordsSkipped, futureDatesIgnored, placesLeftAtDeadline, notes, error
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(result, forKey: .result)
        try container.encode(photos, forKey: .photos)
        try container.encode(places, forKey: .places)
        try container.encode(calls, forKey: .calls)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(recordsSkipped, forKey: .recordsSkipped)
        try container.encode(futureDatesIgnored, forKey: .futureDatesIgnored)
        try container.encode(placesLeftAtDeadline, forKey: .placesLeftAtDeadline)
        try container.encode(notes, forKey: .notes)
        try container.encode(error, forKey: .error)
    }
}

extension Commands {
    static let sync = Command(
        name: "sync", abstract: "Run one sync pass: recent photos, their places, their regions.",
        options: SourceOptions.all,
        examples: [Example(arguments: ["sync"], explanation: "sync the bundled SampleData (no key, no network)"),
                   Example(arguments: ["sync", "--json", "--pages", "2"], explanation: "read at most two pages; the result as JSON")],
        discussion: "Exit status 75 when another sync holds the store, the source failed for a reason that may pass, or the pass was stopped by SIGTERM, SIGINT or SIGHUP after recording what it stored (try again later); 1 for a failure that will not."
    ) { invocation in
        // With --json, a pass that cannot start still answers with the report's shape.
        do {
            return try await runSync(invocation)
        } catch let error where invocation.output.json && !(error is UsageError) {
            try invocation.output.emit(SyncReport(failureBeforeThePass: error))
            invocation.output.diagnostic("topregions: " + ExitStatus.message(error))
            return ExitStatus.of(error)
        }
    }

    private static func runSync(_ invocation: Invocation) async throws -> Int32 {
        let source = try invocation.source()
        let options = try invocation.syncOptions()
        let gallery = try invocation.openSyncer()
        defer { gallery.close() }
        let output = invocation.output
        let progress = ProgressLine(output: output)
        var passOptions = options
        passOptions.progress = { progress.update($0) }
        if progress.isShown { output.diagnostic("syncing from \(source.name)…") }
        let pass = Task { try await gallery.sync(from: source, options: passOptions) }
        // SIGTERM, SIGINT or SIGHUP stop the pass, which first records what it stored and the
        // calls it made, and reports them as a failure that may pass (exit 75).
        let signals = SignalEvents { _ in pass.cancel() }
        let result: SyncResult
        do {
            result = try await pass.value
        } catch let stopped as Gallery.SyncStopped {
            result = stopped.result
        }
        withExtendedLifetime(signals) {}
        progress.finish()
        if output.json {
            try output.emit(SyncReport(result))
        } else {
            output.line("\(result.outcome.rawValue): \(plural(result.photosNew, "new photo")), \(result.photosUpdated) updated; places \(result.placesResolved) resolved, \(result.placesPending) pending, \(result.placesFailed) failed; \(plural(result.calls, "call")) in \(String(format: "%.1f", result.seconds)) s")
        }
        for note in result.notes { output.diagnostic("topregions: note: \(note)") }
        for record in result.skippedRecords { output.diagnostic("topregions: skipped \(record)") }
        guard let failure = result.failure else { return 0 }
        output.diagnostic("topregions: sync failed: \(failure.message)" + (failure.hint.map { "; \($0)" } ?? ""))
        return failure.isTemporary ? ExitStatus.temporaryFailure : ExitStatus.failure
    }
}
