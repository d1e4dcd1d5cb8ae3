import Flickr
import Foundation
import Store

/// Where the next page of a list starts: the ordering values of the last row given (keyset
/// paging, `FetchRequest.startingAfter`), so that a page neither repeats nor skips a row
/// when a sync adds or removes rows before it. Clients see it as opaque text (base64url of
/// a small JSON object) and hand it back unchanged; it names the list it belongs to, so a
/// cursor of one list is refused by another.
public struct ListCursor: Sendable, Equatable {
    /// The list the cursor pages: `regions`, `photos:<place id>`, `search:<query>`.
    public var list: String
    /// The last row's ordering values (the sort descriptors', then its primary key).
    var values: [SQLValue]
    /// How many rows came before the next page: ranks go on from it.
    public var position: Int

    init(list: String, values: [SQLValue], position: Int) {
        self.list = list
        self.values = values
        self.position = position
    }

    /// The most characters a cursor may have: it holds a few values, one of them a title.
    static let maximumLength = 4096

    /// The cursor as opaque text.
    public var text: String {
        let object: [String: Any] = ["l": list, "p": position, "v": values.map(Self.encode)]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The cursor in `text`, which must page `list`; throws `invalidArgument` naming what
    /// is wrong (not a cursor, or another list's).
    public init(text: String, list: String) throws {
        let invalid = GalleryError(.invalidArgument, "the cursor is not one this gallery gave (pass the `after` value of a page's next link unchanged)")
        guard !text.isEmpty, text.count <= Self.maximumLength,
              text.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") }) else {
            throw invalid
        }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let cursorList = object["l"] as? String, let position = object["p"] as? Int, position >= 0,
              let encoded = object["v"] as? [Any], !encoded.isEmpty, encoded.count <= 8 else {
            throw invalid
        }
        let values = encoded.compactMap(Self.decode)
        guard values.count == encoded.count else { throw invalid }
        guard cursorList == list else {
            throw GalleryError(.invalidArgument, "the cursor pages another list; start this one again without `after`")
        }
        self.init(list: list, values: values, position: position)
    }

    /// A value as JSON: `{"i": n}`, `{"r": x}`, `{"t": "…"}` (a cursor holds no NULL or bytes).
    private static func encode(_ value: SQLValue) -> [String: Any] {
        switch value {
        case .integer(let number): return ["i": number]
        case .real(let number): return ["r": number]
        case .text(let text): return ["t": text]
        case .null, .blob: return [:]
        }
    }

    private static func decode(_ value: Any) -> SQLValue? {
        guard let object = value as? [String: Any], object.count == 1 else { return nil }
        if let number = object["i"] as? NSNumber, let exact = Int64(exactly: number.doubleValue) ?? Int64(exactly: number.int64Value) {
            return .integer(exact)
        }
        if let number = object["r"] as? NSNumber, number.doubleValue.isFinite { return .real(number.doubleValue) }
        if let text = object["t"] as? String, text.utf8.count <= 2048 { return .text(text) }
        return nil
    }
}

/// One page of a list: its rows, and where the next page starts (nil on the last page).
public struct ListPage<Row: Sendable>: Sendable {
    /// The page's rows, in the list's order.
    public var rows: [Row]
    /// The cursor of the next page; nil when this page is the last.
    public var next: ListCursor?

    /// A page with these values.
    public init(rows: [Row], next: ListCursor?) {
        self.rows = rows
        self.next = next
    }
}

// Pages of the catalogue's lists.
extension GalleryReading {
    /// A page of regions in top-regions order (by photographers, name, place id), past the
    /// top 50 too: `limit` rows after `after` (from the top when nil); ranks go on from the
    /// cursor's.
    public func regionPage(limit: Int, after: ListCursor?) throws -> ListPage<RegionRow> {
        var request = Gallery.topRegionsRequest(limit: limit + 1)
        request.startingAfter = after?.values
        let records = try readableStore.read { try $0.fetch(request, as: RegionRecord.self) }
        let start = after?.position ?? 0
        let shown = records.prefix(limit)
        let rows = shown.enumerated().map { index, record in
            RegionRow(rank: start + index + 1, id: record.placeID, name: record.name, country: record.country,
                      photographers: Int(record.photographerCount), photos: Int(record.photoCount))
        }
        let next = records.count > limit ? shown.last.map { last in
            ListCursor(list: ListCursor.regionsList, values: [.integer(last.photographerCount), .text(last.name), .text(last.placeID), .integer(last.id ?? 0)],
                       position: start + shown.count)
        } : nil
        return ListPage(rows: rows, next: next)
    }

    /// A page of a region's photos in title order: `limit` rows after `after`.
    public func photoPage(inRegion region: RegionRecord, limit: Int, after: ListCursor?,
                          imageBase: URL = FlickrConfiguration.defaultImageBase) throws -> ListPage<PhotoRow> {
        var request = Gallery.regionPhotosRequest(regionID: region.id ?? -1)
        request.fetchLimit = limit + 1
        request.startingAfter = after?.values
        let records = try readableStore.read { try $0.fetch(request, as: PhotoRecord.self) }
        let shown = Array(records.prefix(limit))
        let rows = try summaries(shown, imageBase: imageBase).map(PhotoRow.init)
        let next = records.count > limit ? shown.last.map { last in
            ListCursor(list: ListCursor.photosList(region), values: [.text(last.title), .integer(last.flickrNumber), .integer(last.id ?? 0)],
                       position: (after?.position ?? 0) + shown.count)
        } : nil
        return ListPage(rows: rows, next: next)
    }
}

extension ListCursor {
    /// The list name the cursors of a region's photos carry.
    public static func photosList(_ region: RegionRecord) -> String { "photos:\(region.placeID)" }
    /// The list name the cursors of the regions carry.
    public static let regionsList = "regions"
}
