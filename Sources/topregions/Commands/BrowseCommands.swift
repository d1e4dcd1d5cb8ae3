import Foundation
import TopRegionsKit

// `regions`, `photos`, `photo`: reading what the store holds.
extension Commands {
    static let regions = Command(
        name: "regions", abstract: "List the top regions by number of distinct photographers.",
        options: [.value("limit", "N", "how many regions", default: "50"),
                  .flag("by-country", "group by country, each region keeping its rank")],
        examples: [Example(arguments: ["regions", "--limit", "10"], explanation: "the ten most popular regions"),
                   Example(arguments: ["regions", "--by-country", "--json"], explanation: "by country, as JSON")]
    ) { invocation in
        let limit = try invocation.integer("limit", default: 50, range: 1...10_000)
        let byCountry = invocation.flag("by-country")
        let gallery = try invocation.openReader()
        defer { gallery.close() }
        let rows = try gallery.topRegionRows(limit: limit, byCountry: byCountry)
        let output = invocation.output
        if output.json || rows.isEmpty || !byCountry {
            try show(rows, output, empty: "No regions yet: run `topregions sync`.")
            return 0
        }
        var sections: [(heading: String?, rows: [RegionRow])] = []
        for row in rows {
            let heading = row.country ?? "no country"
            // By bytes, as the store groups them: two countries whose names are only
            // canonically equal are two sections, as in the JSON and in `watch`.
            if let last = sections.last?.heading, last.utf8.elementsEqual(heading.utf8) {
                sections[sections.count - 1].rows.append(row)
            } else {
                sections.append((heading, [row]))
            }
        }
        output.table(table(sections))
        return 0
    }

    static let photos = Command(
        name: "photos", abstract: "List the photos of a region, by title as the Finder sorts.",
        options: [.value("region", "NAME|ID", "the region: its name (case and accents need not match) or Flickr place id"),
                  .flag("by-photographer", "order by photographer first"),
                  .value("image-base", "URL", "base of the image URLs shown", default: "https://live.staticflickr.com", environment: "FLICKR_IMAGE_BASE")],
        examples: [Example(arguments: ["photos", "--region", "Yucatán"], explanation: "the photos taken in Yucatán"),
                   Example(arguments: ["photos", "--region", "quebec", "--json"], explanation: "the same for Quebec, as JSON")]
    ) { invocation in
        guard let name = invocation.value("region") else { throw UsageError("photos needs --region NAME|ID", command: invocation.command) }
        let base = try invocation.imageSource().imageBase
        let gallery = try invocation.openReader()
        defer { gallery.close() }
        let region = try gallery.region(named: name)
        let rows = try base.map { try gallery.photoRows(inRegion: region.id ?? -1, byPhotographer: invocation.flag("by-photographer"), imageBase: $0) }
            ?? gallery.photoRows(inRegion: region.id ?? -1, byPhotographer: invocation.flag("by-photographer"))
        try show(rows, invocation.output, empty: "No photos in \(region.name) yet.",
                 orderedBy: invocation.flag("by-photographer") ? "PHOTOGRAPHER" : nil)
        return 0
    }

    static let photo = Command(
        name: "photo", abstract: "Show one photo: title, photographer, licence, region, country, place, its Flickr page, URLs.",
        arguments: [Argument(name: "ID", help: "the photo's Flickr id")],
        options: [.value("image-base", "URL", "base of the image URLs shown", default: "https://live.staticflickr.com", environment: "FLICKR_IMAGE_BASE")],
        examples: [Example(arguments: ["photo", "53300015459", "--json"], explanation: "one photo, as JSON")]
    ) { invocation in
        let id = try invocation.photoID(at: 0)
        let base = try invocation.imageSource().imageBase
        let gallery = try invocation.openReader()
        defer { gallery.close() }
        guard let photo = try base.map({ try gallery.photoDetail(flickrID: id, imageBase: $0) }) ?? gallery.photoDetail(flickrID: id) else {
            throw GalleryError(.notFound, "no photo has id \(id)")
        }
        try showDetail(photo, invocation.output)
        return 0
    }

    /// A photo as `field  value` lines (nothing cut), or JSON.
    static func showDetail(_ photo: PhotoDetail, _ output: Output) throws {
        if output.json { return try output.emit(photo) }
        var fields: [(String, String)] = [("id", photo.photo.id), ("title", photo.photo.title), ("subtitle", photo.photo.subtitle),
                                          ("photographer", photo.photo.photographer ?? ""),
                                          ("photographerURL", photo.photo.photographerURL?.absoluteString ?? ""),
                                          ("pageURL", photo.photo.pageURL?.absoluteString ?? ""),
                                          ("license", photo.photo.license.name),
                                          ("licenseURL", photo.photo.license.url?.absoluteString ?? ""),
                                          ("uploaded", photo.photo.uploaded?.iso8601 ?? ""),
                                          ("region", photo.region ?? ""), ("regionID", photo.regionID ?? ""), ("country", photo.country ?? ""),
                                          ("latitude", photo.latitude.map { "\($0)" } ?? ""), ("longitude", photo.longitude.map { "\($0)" } ?? ""),
                                          ("thumbnailURL", photo.photo.thumbnailURL?.absoluteString ?? ""),
                                          ("imageURL", photo.photo.imageURL?.absoluteString ?? "")]
        if let viewed = photo.lastViewed { fields.append(("lastViewed", viewed.iso8601)) }
        var table = Table([("FIELD", .key), ("VALUE", .key)])
        for (name, value) in fields { table.append([name, value]) }
        output.write(table.text(width: nil))
    }
}
