import Foundation
import TopRegionsKit

// `sync`: one pass, and its result as scripts read it (`daemon` runs the same pass on a timer).
extension Commands {
    static let sync = Command(name: "sync", abstract: "Run one sync pass: recent photos, their places, their regions.",
                              usage: "sync [source options]", options: sourceOptions, example: "topregions sync --json") { context in
        let gallery = try context.openGallery(.create)
        defer { gallery.close() }
        let (client, source) = try context.source(gallery: gallery)
        let options = try context.syncOptions()
        _ = try context.arguments.positionals(0...0, "")
        if context.output.errorIsTerminal && !context.output.json { context.output.diagnostic("syncing from \(source)…") }
        let result = try await gallery.sync(client: client, options: options)
        if context.output.json {
            context.output.emit(syncJSON(result))
        } else {
            context.output.write("\(result.outcome.rawValue): \(result.photosNew) new photos, \(result.photosUpdated) updated; places \(result.placesResolved) resolved, \(result.placesPending) pending, \(result.placesFailed) failed; \(result.calls) calls in \(String(format: "%.1f", result.seconds)) s\n")
        }
        for note in result.notes { context.output.diagnostic("topregions: note: \(note)") }
        for record in result.skippedRecords { context.output.diagnostic("topregions: skipped \(record)") }
        if result.outcome == .failed { context.output.diagnostic("topregions: sync failed: \(result.error ?? "unknown error")") }
        return result.outcome == .failed ? 1 : 0
    }

    static func syncJSON(_ result: SyncResult) -> [String: Any] {
        ["result": result.outcome.rawValue, "photos": ["new": result.photosNew, "updated": result.photosUpdated],
         "places": ["resolved": result.placesResolved, "pending": result.placesPending, "failed": result.placesFailed],
         "calls": result.calls, "seconds": (result.seconds * 1000).rounded() / 1000,
         "recordsSkipped": result.recordsSkipped, "futureDatesIgnored": result.futureDatesIgnored,
         "placesLeftAtDeadline": result.placesLeftAtDeadline, "notes": result.notes]
    }
}
