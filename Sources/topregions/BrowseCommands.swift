import Flickr
import Foundation
import Store
import TopRegionsKit

// `regions`, `photos`, `photo`: reading what the store holds.
extension Commands {
    static let regions = Command(name: "regions", abstract: "List the top regions by number of distinct photographers.",
                                 usage: "regions [--limit 50] [--by-country]",
                                 options: ["--limit N          how many regions (default: 50)", "--by-country       group by country"],
                                 example: "topregions regions --limit 10") { context in
        let limit = try context.arguments.integer("limit", default: 50, range: 1...10_000)
        let byCountry = context.arguments.flag("by-country")
        let gallery = try context.openGalleryForCommandWithoutArguments(.read)
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
        let gallery = try context.openGalleryForCommandWithoutArguments(.read)
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
        let gallery = try context.openGallery(.read)
        defer { gallery.close() }
        guard let photo = try gallery.photo(flickrID: id, imageBase: base) else { throw RuntimeError("no photo has id \(id)") }
        if context.output.json { context.output.emit(photoJSON(photo, detail: true)) } else {
            context.output.table(["FIELD", "VALUE"], photoJSON(photo, detail: true).sorted { $0.key < $1.key }.map { [$0.key, "\($0.value is NSNull ? "" : $0.value)"] })
        }
        return 0
    }
}
