import Foundation
import Store
import TopRegionsKit

// `prune`, `status`, `check`: looking after the store.
extension Commands {
    static let prune = Command(name: "prune", abstract: "Delete photos downloaded long ago (keeping Recents and Favorites) and what is left empty.",
                               usage: "prune [--older-than 7d]", options: ["--older-than D      age to prune at (default: 7d)"],
                               example: "topregions prune --older-than 14d") { context in
        let age = try context.arguments.duration("older-than", default: Gallery.defaultRetention, range: 1...(3650 * 86_400))
        let gallery = try context.openGalleryForCommandWithoutArguments(.write)
        defer { gallery.close() }
        let result = try gallery.prune(olderThan: age)
        let object: [String: Any] = ["photos": result.photos, "photographers": result.photographers, "places": result.places, "regions": result.regions]
        if context.output.json { context.output.emit(object) } else {
            context.output.write("pruned \(result.photos) photos, \(result.photographers) photographers, \(result.places) places, \(result.regions) regions\n")
        }
        return 0
    }

    static let status = Command(name: "status", abstract: "Show what the store holds, the last sync, the daemon and the rate limit.",
                                usage: "status", example: "topregions status --json") { context in
        let gallery = try context.openGalleryForCommandWithoutArguments(.read)
        defer { gallery.close() }
        let status = try gallery.status()
        let lastSync: Any = status.lastSync.map { run in
            ["result": run.result, "startedAt": run.startedAt.iso8601, "finishedAt": run.finishedAt?.iso8601 ?? NSNull(),
             "photos": ["new": run.photosNew, "updated": run.photosUpdated], "calls": run.calls, "error": run.error ?? NSNull()] as [String: Any]
        } ?? NSNull()
        let daemon = DaemonLock.holder(storePath: context.storePath)
        let object: [String: Any] = [
            "store": context.storePath, "photos": status.photos, "regions": status.regions,
            "photographers": status.photographers, "pendingPlaces": status.pendingPlaces, "lastSync": lastSync,
            "daemon": daemon.map { ["pid": $0] as Any } ?? NSNull(),
            "rateLimit": ["callsLastHour": status.callsLastHour, "limit": 3600],
        ]
        if context.output.json { context.output.emit(object) } else {
            context.output.table(["", ""], [["store", context.storePath], ["photos", "\(status.photos)"],
                                            ["regions", "\(status.regions)"], ["photographers", "\(status.photographers)"],
                                            ["pending places", "\(status.pendingPlaces)"],
                                            ["daemon", daemon.map { "pid \($0)" } ?? "not running"],
                                            ["calls in the last hour", "\(status.callsLastHour)"]])
        }
        return 0
    }

    static let check = Command(name: "check", abstract: "Recompute the counts and run the store's integrity and foreign key checks.",
                               usage: "check", example: "topregions check") { context in
        _ = try context.arguments.positionals(0...0, "")
        let problems: [String]
        do {
            let gallery = try context.openGallery(.read)
            defer { gallery.close() }
            problems = try gallery.check()
        } catch {
            // A store that cannot even be read is the check's answer too, in JSON as well.
            guard context.output.json else { throw error }
            context.output.emit(["ok": false, "problems": ["\(error)"],
                                 "error": ["kind": (error as? StoreError).map { "\($0.kind)" } ?? "other", "message": "\(error)"]] as [String: Any])
            return 1
        }
        if context.output.json { context.output.emit(["ok": problems.isEmpty, "problems": problems] as [String: Any]) } else {
            if problems.isEmpty { context.output.write("ok\n") }
            for problem in problems { context.output.line(problem) }
        }
        return problems.isEmpty ? 0 : 1
    }
}
