import Flickr
import Foundation
import ResultsController
import Store
import TopRegionsKit

/// One command of the tool: a one-line abstract, its usage and options, an example, and
/// what it does.
struct Command: Sendable {
    var name: String
    var abstract: String
    var usage: String
    var options: [String] = []
    var example: String
    var run: @Sendable (inout Context) async throws -> Int32

    var help: String {
        var text = "\(abstract)\n\nUsage: topregions \(usage)\n"
        let global = ["--store PATH       the store (default: $TOPREGIONS_STORE, else $XDG_DATA_HOME/topregions/store.sqlite)",
                      "--json             print JSON on stdout and nothing else"]
        text += "\nOptions:\n" + (options + global).map { "  " + $0 }.joined(separator: "\n") + "\n"
        text += "\nExample:\n  \(example)\n"
        return text
    }
}

let sourceOptions = [
    "--endpoint URL     Flickr REST endpoint (default: $FLICKR_ENDPOINT; none and no key: the bundled SampleData)",
    "--api-key KEY      Flickr API key (default: $FLICKR_API_KEY)",
    "--format json|xml  response format (default: json)",
    "--image-base URL   base of photo URLs (default: $FLICKR_IMAGE_BASE, else https://live.staticflickr.com)",
    "--pages N          pages of recent photos to read at most (default: 8)",
    "--per-page N       photos per page, at most 500 (default: 500)",
    "--rate-limit N|none  API calls per hour (default: 3600)",
]

enum Commands {
    static let all: [Command] = [sync, daemon, regions, photos, photo, view, recents, favorites, thumbnail, image, watch, prune, status, check]

    static func named(_ name: String) -> Command? { all.first { $0.name == name } }

    // MARK: sync

    static let sync = Command(name: "sync", abstract: "Run one sync pass: recent photos, their places, their regions.",
                              usage: "sync [source options]", options: sourceOptions, example: "topregions sync --json") { context in
        let gallery = try context.openGallery()
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
        if result.outcome == .failed { context.output.diagnostic("topregions: sync failed: \(result.error ?? "unknown error")") }
        return result.outcome == .failed ? 1 : 0
    }

    static func syncJSON(_ result: SyncResult) -> [String: Any] {
        ["result": result.outcome.rawValue, "photos": ["new": result.photosNew, "updated": result.photosUpdated],
         "places": ["resolved": result.placesResolved, "pending": result.placesPending, "failed": result.placesFailed],
         "calls": result.calls, "seconds": (result.seconds * 1000).rounded() / 1000]
    }

    // MARK: regions, photos, photo

    static let regions = Command(name: "regions", abstract: "List the top regions by number of distinct photographers.",
                                 usage: "regions [--limit 50] [--by-country]",
                                 options: ["--limit N          how many regions (default: 50)", "--by-country       group by country"],
                                 example: "topregions regions --limit 10") { context in
        let limit = try context.arguments.integer("limit", default: 50, range: 1...10_000)
        let byCountry = context.arguments.flag("by-country")
        _ = try context.arguments.positionals(0...0, "")
        let gallery = try context.openGallery()
        defer { gallery.close() }
        var regions = try gallery.topRegions(limit: limit)
        if byCountry {
            // The store's collation, not Foundation directly: it is antisymmetric, as a sort needs.
            regions.sort { Collation.localizedStandard.compare($0.country ?? "", $1.country ?? "") == .orderedAscending }
        }
        let rows = regions.enumerated().map { index, region in
            ["rank": index + 1, "id": region.placeID, "name": region.name, "country": region.country ?? NSNull(),
             "photographers": region.photographers, "photos": region.photos] as [String: Any]
        }
        if context.output.json { context.output.emit(rows) } else {
            context.output.table(["#", "REGION", "COUNTRY", "PHOTOGRAPHERS", "PHOTOS"], regions.enumerated().map { index, region in
                ["\(index + 1)", region.name, region.country ?? "", "\(region.photographers)", "\(region.photos)"]
            })
        }
        return 0
    }

    static func photoJSON(_ photo: PhotoSummary, detail: Bool = false) -> [String: Any] {
        var object: [String: Any] = ["id": photo.flickrID, "title": photo.title, "subtitle": photo.subtitle,
                                     "photographer": photo.photographer ?? NSNull(), "uploaded": photo.uploaded?.iso8601 ?? NSNull(),
                                     "thumbnailURL": photo.thumbnailURL?.absoluteString ?? NSNull(),
                                     "imageURL": photo.imageURL?.absoluteString ?? NSNull()]
        if detail {
            object["region"] = photo.region ?? NSNull()
            object["regionID"] = photo.regionPlaceID ?? NSNull()
            object["country"] = photo.country ?? NSNull()
            object["latitude"] = photo.latitude ?? NSNull()
            object["longitude"] = photo.longitude ?? NSNull()
        }
        return object
    }

    static func imageBase(_ context: inout Context) throws -> URL {
        let text = try context.arguments.option("image-base") ?? context.environment["FLICKR_IMAGE_BASE"].flatMap { $0.isEmpty ? nil : $0 }
        guard let text else { return FlickrConfiguration.defaultImageBase }
        guard let url = URL(string: text), url.scheme != nil else { throw UsageError("--image-base is not a URL: \(text)") }
        return url
    }

    static let photos = Command(name: "photos", abstract: "List the photos of a region, by title as the Finder sorts.",
                                usage: "photos --region NAME|ID [--by-photographer]",
                                options: ["--region NAME|ID   the region, by name or Flickr place id", "--by-photographer  group by photographer"],
                                example: "topregions photos --region California") { context in
        guard let name = try context.arguments.option("region") else { throw UsageError("photos needs --region NAME|ID") }
        let byPhotographer = context.arguments.flag("by-photographer")
        let base = try imageBase(&context)
        _ = try context.arguments.positionals(0...0, "")
        let gallery = try context.openGallery()
        defer { gallery.close() }
        let region = try resolveRegion(name, in: gallery)
        var photos = try gallery.photos(inRegion: region.id ?? -1, imageBase: base)
        if byPhotographer {
            photos = photos.enumerated().sorted { left, right in
                let order = Collation.localizedStandard.compare(left.element.photographer ?? "", right.element.photographer ?? "")
                return order == .orderedSame ? left.offset < right.offset : order == .orderedAscending
            }.map(\.element)
        }
        if context.output.json { context.output.emit(photos.map { photoJSON($0) }) } else {
            context.output.table(["ID", "TITLE", "PHOTOGRAPHER", "UPLOADED"], photos.map {
                [$0.flickrID, $0.title, $0.photographer ?? "", $0.uploaded?.iso8601 ?? ""]
            })
        }
        return 0
    }

    static func resolveRegion(_ nameOrID: String, in gallery: Gallery) throws -> RegionRecord {
        let matches = try gallery.regions(matching: nameOrID)
        guard let first = matches.first else { throw RuntimeError("no region is called \"\(nameOrID)\"") }
        guard matches.count == 1 else {
            throw RuntimeError("\(matches.count) regions are called \"\(nameOrID)\": " +
                               matches.map { "\($0.placeID) (\($0.country ?? "no country"))" }.joined(separator: ", ") + "; give an id")
        }
        return first
    }

    static let photo = Command(name: "photo", abstract: "Show one photo: title, photographer, region, country, place, URLs.",
                               usage: "photo ID", example: "topregions photo 53300015612 --json") { context in
        let base = try imageBase(&context)
        let id = try context.arguments.positionals(1...1, "the photo id")[0]
        let gallery = try context.openGallery()
        defer { gallery.close() }
        guard let photo = try gallery.photo(flickrID: id, imageBase: base) else { throw RuntimeError("no photo has id \(id)") }
        if context.output.json { context.output.emit(photoJSON(photo, detail: true)) } else {
            context.output.table(["FIELD", "VALUE"], photoJSON(photo, detail: true).sorted { $0.key < $1.key }.map { [$0.key, "\($0.value is NSNull ? "" : $0.value)"] })
        }
        return 0
    }

    // MARK: view, recents, favorites

    static let view = Command(name: "view", abstract: "Record a view of a photo in Recents.", usage: "view ID",
                              example: "topregions view 53300015612") { context in
        let base = try imageBase(&context)
        let id = try context.arguments.positionals(1...1, "the photo id")[0]
        let gallery = try context.openGallery()
        defer { gallery.close() }
        guard let photo = try gallery.photo(flickrID: id, imageBase: base) else { throw RuntimeError("no photo has id \(id)") }
        let viewed = try gallery.recordView(photoID: photo.id)
        var object = photoJSON(photo, detail: true)
        object["lastViewed"] = viewed.iso8601
        if context.output.json { context.output.emit(object) } else { context.output.write("viewed \(photo.title) at \(viewed.iso8601)\n") }
        return 0
    }

    static let recents = Command(name: "recents", abstract: "List the photos viewed most recently (at most 20).", usage: "recents",
                                 example: "topregions recents --json") { context in
        _ = try context.arguments.positionals(0...0, "")
        let gallery = try context.openGallery()
        defer { gallery.close() }
        let recents = try gallery.recents()
        if context.output.json {
            context.output.emit(recents.map { ["id": $0.photo.flickrID, "title": $0.photo.title, "subtitle": $0.photo.subtitle,
                                               "lastViewed": $0.lastViewed.iso8601] })
        } else {
            context.output.table(["ID", "TITLE", "VIEWED"], recents.map { [$0.photo.flickrID, $0.photo.title, $0.lastViewed.iso8601] })
        }
        return 0
    }

    static let favorites = Command(name: "favorites", abstract: "List, add, remove or reorder favorites.",
                                   usage: "favorites [add ID | remove ID | move FROM TO]",
                                   example: "topregions favorites move 3 1") { context in
        let words = try context.arguments.positionals(0...3, "")
        let gallery = try context.openGallery()
        defer { gallery.close() }
        func photoID(_ flickrID: String) throws -> Int64 {
            guard let photo = try gallery.photo(flickrID: flickrID) else { throw RuntimeError("no photo has id \(flickrID)") }
            return photo.id
        }
        switch (words.first, words.count) {
        case (nil, _): break
        case ("add", 2): try gallery.addFavorite(photoID: try photoID(words[1]))
        case ("remove", 2): try gallery.removeFavorite(photoID: try photoID(words[1]))
        case ("move", 3):
            guard let from = Int(words[1]), let to = Int(words[2]), from >= 1, to >= 1 else {
                throw UsageError("favorites move takes two positions from 1, not \(words[1]) and \(words[2])")
            }
            try gallery.moveFavorite(from: from - 1, to: to - 1)
        default:
            throw UsageError("favorites takes add ID, remove ID or move FROM TO")
        }
        let list = try gallery.favorites()
        if context.output.json {
            context.output.emit(list.enumerated().map { ["position": $0.offset + 1, "id": $0.element.flickrID, "title": $0.element.title] as [String: Any] })
        } else {
            context.output.table(["#", "ID", "TITLE"], list.enumerated().map { ["\($0.offset + 1)", $0.element.flickrID, $0.element.title] })
        }
        return 0
    }

    // MARK: thumbnail, image

    static func writeBytes(_ data: Data, _ output: String?, _ context: Context) throws -> Int32 {
        if let output {
            try data.write(to: URL(fileURLWithPath: output))
            return 0
        }
        guard !context.output.isTerminal else {
            throw UsageError("the image is binary: give --output FILE or redirect stdout")
        }
        context.output.write("")
        FileHandle.standardOutput.write(data)
        return 0
    }

    /// What `thumbnail` and `image` both read: the output, the store, the source, the photo.
    struct ImageRequest {
        let output: String?
        let gallery: Gallery
        let client: FlickrClient
        let photo: PhotoRecord

        init(_ context: inout Context) throws {
            output = try context.arguments.option("output")
            gallery = try context.openGallery()
            do {
                client = try context.source(gallery: gallery).client
                _ = try context.syncOptions()
                let id = try context.arguments.positionals(1...1, "the photo id")[0]
                guard let photo = try gallery.store.read({ try $0.fetch(PhotoRecord.self, where: Key("flickrID") == id).first }) else {
                    throw RuntimeError("no photo has id \(id)")
                }
                self.photo = photo
            } catch {
                gallery.close()
                throw error
            }
        }
    }

    static let thumbnail = Command(name: "thumbnail", abstract: "Write a photo's 75×75 thumbnail (downloaded once, then kept in the store).",
                                   usage: "thumbnail ID [--output FILE] [source options]",
                                   options: ["--output FILE      write there instead of stdout"] + sourceOptions,
                                   example: "topregions thumbnail 53300015612 --output thumb.jpg") { context in
        let request = try ImageRequest(&context)
        defer { request.gallery.close() }
        let data = try await ThumbnailLoader(gallery: request.gallery, client: request.client).thumbnail(photoID: request.photo.id ?? -1)
        return try writeBytes(data, request.output, context)
    }

    static let image = Command(name: "image", abstract: "Write a photo's large image (through the image file cache).",
                               usage: "image ID [--output FILE] [source options]",
                               options: ["--output FILE      write there instead of stdout"] + sourceOptions,
                               example: "topregions image 53300015612 --output photo.jpg") { context in
        let request = try ImageRequest(&context)
        defer { request.gallery.close() }
        let photo = request.photo
        let cache = try ImageCache(directory: context.imageCacheDirectory)
        if let cached = try cache.data(flickrID: photo.flickrID, size: .large) { return try writeBytes(cached, request.output, context) }
        let flickr = FlickrPhoto(id: photo.flickrID, owner: "", secret: photo.secret, server: photo.server)
        let data = try await request.client.image(of: flickr, size: .large)
        try cache.store(data, flickrID: photo.flickrID, size: .large)
        return try writeBytes(data, request.output, context)
    }

    // MARK: prune, status, check

    static let prune = Command(name: "prune", abstract: "Delete photos downloaded long ago (keeping Recents and Favorites) and what is left empty.",
                               usage: "prune [--older-than 7d]", options: ["--older-than D      age to prune at (default: 7d)"],
                               example: "topregions prune --older-than 14d") { context in
        let age = try context.arguments.duration("older-than", default: Gallery.defaultRetention)
        _ = try context.arguments.positionals(0...0, "")
        let gallery = try context.openGallery()
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
        _ = try context.arguments.positionals(0...0, "")
        let gallery = try context.openGallery()
        defer { gallery.close() }
        let counts = try gallery.store.read { context -> [String: Int64] in
            var counts: [String: Int64] = [:]
            for (key, sql) in [("photos", "SELECT count(*) FROM Photo"), ("regions", "SELECT count(*) FROM Region WHERE photoCount > 0"),
                               ("photographers", "SELECT count(*) FROM Photographer"),
                               ("pendingPlaces", "SELECT count(*) FROM Place WHERE status = 'pending'"),
                               ("callsLastHour", "SELECT count(*) FROM APICall WHERE at >= \(Date().timeIntervalSince1970 - 3600)")] {
                counts[key] = try context.scalar(sql)?.int64 ?? 0
            }
            return counts
        }
        let lastSync = try gallery.store.read { try $0.rows("SELECT * FROM SyncRun ORDER BY startedAt DESC LIMIT 1").first }
        var lastSyncObject: Any = NSNull()
        if let row = lastSync {
            lastSyncObject = ["result": row["result"].string ?? "", "startedAt": Date(timeIntervalSince1970: row["startedAt"].double ?? 0).iso8601,
                              "finishedAt": row["finishedAt"].double.map { Date(timeIntervalSince1970: $0).iso8601 } ?? NSNull(),
                              "photos": ["new": row["photosNew"].int64 ?? 0, "updated": row["photosUpdated"].int64 ?? 0],
                              "calls": row["calls"].int64 ?? 0, "error": row["error"].string ?? NSNull()] as [String: Any]
        }
        let daemon = DaemonLock.holder(storePath: context.storePath)
        let object: [String: Any] = [
            "store": context.storePath, "photos": counts["photos"] ?? 0, "regions": counts["regions"] ?? 0,
            "photographers": counts["photographers"] ?? 0, "pendingPlaces": counts["pendingPlaces"] ?? 0, "lastSync": lastSyncObject,
            "daemon": daemon.map { ["pid": $0] as Any } ?? NSNull(),
            "rateLimit": ["callsLastHour": counts["callsLastHour"] ?? 0, "limit": 3600],
        ]
        if context.output.json { context.output.emit(object) } else {
            context.output.table(["", ""], [["store", context.storePath], ["photos", "\(counts["photos"] ?? 0)"],
                                            ["regions", "\(counts["regions"] ?? 0)"], ["photographers", "\(counts["photographers"] ?? 0)"],
                                            ["pending places", "\(counts["pendingPlaces"] ?? 0)"],
                                            ["daemon", daemon.map { "pid \($0)" } ?? "not running"],
                                            ["calls in the last hour", "\(counts["callsLastHour"] ?? 0)"]])
        }
        return 0
    }

    static let check = Command(name: "check", abstract: "Recompute the counts and run the store's integrity check.", usage: "check",
                               example: "topregions check") { context in
        _ = try context.arguments.positionals(0...0, "")
        let gallery = try context.openGallery()
        defer { gallery.close() }
        let problems = try gallery.check()
        if context.output.json { context.output.emit(["ok": problems.isEmpty, "problems": problems] as [String: Any]) } else {
            context.output.write(problems.isEmpty ? "ok\n" : problems.joined(separator: "\n") + "\n")
        }
        return problems.isEmpty ? 0 : 1
    }
}
