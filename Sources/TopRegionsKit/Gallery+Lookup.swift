import Foundation
import Store

// Finding what a person names: photos by Flickr id, regions by name or place id.
extension Gallery {
    /// The photo with this Flickr id, if its region is known: a photo whose place is not
    /// resolved, or has no region, appears in no query (product rule).
    static func shownPhoto(flickrID: String) -> FetchPredicate {
        Key("flickrID") == flickrID && Key("region").isNotNull
    }

    /// A name's part before its first comma.
    static func shortName(_ name: String) -> String {
        name.split(separator: ",", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? name
    }

    /// A name for loose comparison: no case, no accents.
    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: Locale(identifier: "en_US_POSIX"))
    }

    /// The names closest to `folded` by edit distance (of their short forms), at most
    /// `count`, and only those within a third of the length (2 edits for short names, 1 for
    /// a name of one or two letters, which two edits would turn into any other).
    static func closest(to folded: String, among names: [String], count: Int) -> [String] {
        let scored = names.map { name in (name, EditDistance.between(folded, fold(shortName(name)))) }
        let limit = folded.count <= 2 ? 1 : max(2, folded.count / 3)
        return scored.filter { $0.1 <= limit }.sorted { $0.1 == $1.1 ? $0.0 < $1.0 : $0.1 < $1.1 }.prefix(count).map(\.0)
    }
}

/// Levenshtein distance, for "did you mean".
public enum EditDistance {
    /// The fewest single-character insertions, deletions and substitutions from one to the other.
    public static func between(_ left: String, _ right: String) -> Int {
        let a = Array(left), b = Array(right)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

// Finding regions, in any store a gallery can be read from.
extension GalleryReading {
    /// The row id of the photo with this Flickr id; `notFound` when there is none, or when
    /// its region is not known (such a photo counts as not downloaded yet) unless
    /// `evenWithoutRegion` (to take out of Favorites a photo that lost its region).
    func photoRowID(flickrID: String, evenWithoutRegion: Bool = false) throws -> Int64 {
        let predicate = evenWithoutRegion ? Key("flickrID") == flickrID : Gallery.shownPhoto(flickrID: flickrID)
        guard let id = try readableStore.read({ try $0.fetch(PhotoRecord.self, where: predicate).first?.id }) else {
            throw GalleryError(.notFound, "no photo has id \(flickrID)")
        }
        return id
    }

    /// The one region `query` names: its place id, its name (exactly, or the part before a
    /// comma: "California" for "California, United States"), or failing those the same
    /// ignoring case and accents ("yucatan" for "Yucatán"). `ambiguous` when several share
    /// the name (listing their ids), `notFound` with the closest names otherwise.
    public func region(named query: String) throws -> RegionRecord {
        // By place id, not row id: the same list on every store, however each was filled.
        let matches = try regions(matching: query).sorted { $0.placeID.utf8.lexicographicallyPrecedes($1.placeID.utf8) }
        if matches.count == 1, let only = matches.first { return only }
        if matches.count > 1 {
            throw GalleryError(.ambiguous, "\(matches.count) regions are called \"\(query)\": "
                               + matches.map { "\($0.placeID) (\($0.country ?? "no country"))" }.joined(separator: ", "), hint: "give an id")
        }
        let all = try readableStore.read { try $0.fetch(RegionRecord.self, where: Key("photoCount") > 0) }
        let folded = Gallery.fold(query)
        let loose = all.filter { Gallery.fold($0.name) == folded || Gallery.fold(Gallery.shortName($0.name)) == folded }
            .sorted { $0.placeID.utf8.lexicographicallyPrecedes($1.placeID.utf8) }
        if loose.count == 1, let only = loose.first { return only }
        if loose.count > 1 {
            throw GalleryError(.ambiguous, "\(loose.count) regions are called \"\(query)\": "
                               + loose.map { "\($0.placeID) (\"\($0.name)\", \($0.country ?? "no country"))" }.joined(separator: ", "), hint: "give an id")
        }
        let suggestions = Gallery.closest(to: folded, among: Array(Set(all.map(\.name))), count: 3)
        throw GalleryError(.notFound, "no region is called \"\(query)\"",
                           hint: suggestions.isEmpty ? "see `topregions regions`" : "did you mean " + suggestions.map { "\"\($0)\"" }.joined(separator: ", ") + "?")
    }

    /// The region whose Flickr place id is exactly `placeID`, if any.
    public func region(placeID: String) throws -> RegionRecord? {
        try readableStore.read { try $0.fetch(RegionRecord.self, where: Key("placeID") == placeID).first }
    }

    /// The regions whose place id is exactly `nameOrID`, or else whose name is it (or it
    /// followed by a comma and a country), canonically: "Zürich" typed precomposed names
    /// the regions stored decomposed too, so two regions of such names are `ambiguous`.
    public func regions(matching nameOrID: String) throws -> [RegionRecord] {
        try readableStore.read { context in
            let byID = try context.fetch(RegionRecord.self, where: Key("placeID") == nameOrID)
            if !byID.isEmpty { return byID }
            // Swift compares strings by canonical equivalence, SQL by bytes: so in Swift
            // (regions are a few thousand at most).
            return try context.fetch(RegionRecord.self, sortedBy: [SortKey("placeID")])
                .filter { $0.name == nameOrID || $0.name.hasPrefix(nameOrID + ",") }
        }
    }
}
