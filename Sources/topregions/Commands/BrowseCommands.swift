import Foundation
import PostgreSQL
import Store
import TopRegionsKit

// `regions`, `photos`, `photo`: reading what the store holds.
extension Commands {
    static let regions = Command(
        name: "regions", abstract: "List the top regions by number of distinct photographers.",
        options: [.value("limit", "N", "how many regions, 1 to 10,000; given, the list is a page and stderr says how to get the next", default: "50"),
                  .value("after", "CURSOR", "the next page: the cursor the page before named on stderr"),
                  .flag("all", "every region, past the top 50, ranks going on"),
                  .flag("by-country", "group by country, each region keeping its rank")],
        examples: [Example(arguments: ["regions", "--limit", "10"], explanation: "the ten most popular regions; stderr says how to ask for the next ten"),
                   Example(arguments: ["regions", "--all", "--json"], explanation: "every region, as JSON"),
                   Example(arguments: ["regions", "--by-country", "--json"], explanation: "by country, as JSON")],
        discussion: "Without options: the top 50. With --limit or --after the list is read a page at a time, as the API pages it: when more regions follow, stderr ends with a line such as `next page: topregions regions --limit 10 --after CURSOR`, the command for the next page (stdout keeps only the rows, so --json stays one array). --all is not paged; --by-country lists are not paged either.",
        loneWordOption: "limit"
    ) { invocation in
        let all = invocation.flag("all"), byCountry = invocation.flag("by-country")
        if all, let other = ["limit", "after"].first(where: invocation.given) {
            throw UsageError("--all lists every region from the first: leave out --\(other), or --all", command: invocation.command)
        }
        if byCountry, invocation.given("after") {
            throw UsageError("--by-country lists are not paged: leave out --after, or --by-country", command: invocation.command)
        }
        let limit = try invocation.integer("limit", default: Gallery.topRegionsLimit, range: 1...10_000)
        // Before the store is opened: a cursor of the regions names its list.
        let after = try invocation.cursor(list: ListCursor.regionsList)
        let paged = !byCountry && (invocation.given("limit") || after != nil)
        let gallery = try invocation.openReader()
        defer { gallery.close() }
        var next: ListCursor?
        let rows: [RegionRow]
        if all {
            rows = try allRegionRows(gallery, byCountry: byCountry)
        } else if paged {
            let page = try gallery.regionPage(limit: limit, after: after)
            (rows, next) = (page.rows, page.next)
        } else {
            rows = try gallery.topRegionRows(limit: limit, byCountry: byCountry)
        }
        let output = invocation.output
        if output.json || rows.isEmpty || !byCountry {
            try show(rows, output, empty: after == nil ? "No regions yet: run `topregions sync`." : "No more regions.")
        } else {
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
        }
        if let next { invocation.showNextPage(limit: limit, after: next) }
        return 0
    }

    /// Every region, ranked from 1, read in pages so that no single query has to be
    /// unbounded; `byCountry` orders them as `topRegionRows` does (by country, then rank).
    private static func allRegionRows(_ gallery: any GalleryReading, byCountry: Bool) throws -> [RegionRow] {
        var rows: [RegionRow] = []
        var after: ListCursor?
        repeat {
            let page = try gallery.regionPage(limit: 10_000, after: after)
            rows += page.rows
            after = page.next
        } while after != nil
        guard byCountry else { return rows }
        return rows.sorted { left, right in
            let order = Collation.localizedStandard.compare(left.country ?? "", right.country ?? "")
            return order == .orderedSame ? left.rank < right.rank : order == .orderedAscending
        }
    }

    /// A region's photos a page holds when `--after` is given without `--limit` (as the API).
    static let photosPageSize = 100

    static let photos = Command(
        name: "photos", abstract: "List the photos of a region, by title as the Finder sorts.",
        options: [.value("region", "NAME|ID", "the region: its name (case and accents need not match) or Flickr place id"),
                  .flag("by-photographer", "order by photographer first (not paged)"),
                  .value("limit", "N", "a page of N photos, 1 to 10,000; stderr says how to get the next (default: all the photos)"),
                  .value("after", "CURSOR", "the next page: the cursor the page before named on stderr (100 photos without --limit)"),
                  .value("image-base", "URL", "base of the image URLs shown", default: "https://live.staticflickr.com", environment: "FLICKR_IMAGE_BASE")],
        examples: [Example(arguments: ["photos", "--region", "Yucatán"], explanation: "the photos taken in Yucatán"),
                   Example(arguments: ["photos", "--region", "quebec", "--json"], explanation: "the same for Quebec, as JSON"),
                   Example(arguments: ["photos", "--region", "yucatan", "--limit", "5"], explanation: "the first five; stderr says how to ask for the next five")],
        discussion: "With --limit or --after the photos are read a page at a time, as the API pages them: when more follow, stderr ends with a line such as `next page: topregions photos --region yucatan --limit 5 --after CURSOR`, the command for the next page (stdout keeps only the rows, so --json stays one array). A cursor belongs to its region's list.",
        loneWordOption: "region"
    ) { invocation in
        guard let name = invocation.value("region") else { throw UsageError("photos needs --region NAME|ID", command: invocation.command) }
        let byPhotographer = invocation.flag("by-photographer")
        let paged = invocation.given("limit") || invocation.given("after")
        if paged, byPhotographer {
            throw UsageError("--by-photographer lists are not paged: leave out --limit and --after, or --by-photographer", command: invocation.command)
        }
        let limit = try invocation.integer("limit", default: photosPageSize, range: 1...10_000)
        let base = try invocation.imageSource().imageBase
        let gallery = try invocation.openReader()
        defer { gallery.close() }
        let region = try gallery.region(named: name)
        guard paged else {
            let rows = try base.map { try gallery.photoRows(inRegion: region.id ?? -1, byPhotographer: byPhotographer, imageBase: $0) }
                ?? gallery.photoRows(inRegion: region.id ?? -1, byPhotographer: byPhotographer)
            try show(rows, invocation.output, empty: "No photos in \(region.name) yet.", orderedBy: byPhotographer ? "PHOTOGRAPHER" : nil)
            return 0
        }
        // A cursor of a region's photos names the region (its place id): checked once it is found.
        let after = try invocation.cursor(list: ListCursor.photosList(region))
        let page = try base.map { try gallery.photoPage(inRegion: region, limit: limit, after: after, imageBase: $0) }
            ?? gallery.photoPage(inRegion: region, limit: limit, after: after)
        try show(page.rows, invocation.output, empty: after == nil ? "No photos in \(region.name) yet." : "No more photos in \(region.name).")
        if let next = page.next { invocation.showNextPage(limit: limit, after: next) }
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

// Pages of a list, as the API gives them: a cursor in, and the command for the next page out.
extension Invocation {
    /// `--after`'s cursor, which must page `list`; a cursor of another list or one that is
    /// no cursor is a usage error, in the gallery's words.
    func cursor(list: String) throws -> ListCursor? {
        guard let text = value("after") else { return nil }
        do { return try ListCursor(text: text, list: list) } catch let error as GalleryError {
            throw UsageError("--after: " + error.message, command: command)
        }
    }

    /// Prints on stderr (stdout holds only the rows: `--json` stays one array) the command
    /// that gives the next page: this one as given, `--limit` made explicit, `--after` the
    /// cursor. One line, in shell words, so that a person can paste it and a script can
    /// take the text after "next page: " (or its last word: the cursor alone).
    func showNextPage(limit: Int, after cursor: ListCursor) {
        var words = ["topregions"]
        // A password in a store URL is not printed (keep it in PGPASSFILE).
        if let store = storeArgument { words += ["--store", PostgresLocation.redactingSecrets(in: store)] }
        words.append(command.name)
        for option in command.options where option.name != "limit" && option.name != "after" {
            if let value = values[option.name] { words += ["--\(option.name)", value] } else if flags.contains(option.name) { words.append("--\(option.name)") }
        }
        if output.json { words.append("--json") }
        words += ["--limit", "\(limit)", "--after", cursor.text]
        output.diagnostic("next page: " + words.map(ShellWord.quoted).joined(separator: " "))
    }
}
