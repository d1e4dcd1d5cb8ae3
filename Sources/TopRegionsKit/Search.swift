import Flickr
import Foundation
import Store

/// What a search finds: the regions whose name or country holds every word, then a page of
/// photos whose title, description, photographer, region or country holds every word.
public struct SearchResults: Sendable, Encodable {
    /// The query as read: its words, folded (case and accents do not matter), in order.
    public var query: String
    /// Regions that match, in top-regions order (on the first page only; later pages: none).
    public var regions: [RegionRow]
    /// The page's photos: those with every word in their title first, then the others;
    /// within each, the most recently stored first.
    public var photos: [PhotoDetail]
    /// Where the next page of photos starts; nil on the last page.
    public var next: ListCursor?

    enum CodingKeys: String, CodingKey { case query, regions, photos }

    /// Writes the query, regions and photos (the cursor is the caller's to link).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(query, forKey: .query)
        try container.encode(regions, forKey: .regions)
        try container.encode(photos, forKey: .photos)
    }
}

/// Search results as the CLI and the API write them: the results' fields and `next`, where
/// the next page is (a cursor, or a link, as each caller speaks; null on the last page).
public struct SearchAnswer: Encodable, Sendable {
    /// The results.
    public var results: SearchResults
    /// The next page: the CLI's cursor, the API's link; nil on the last page.
    public var next: String?

    /// An answer with these values.
    public init(results: SearchResults, next: String?) {
        self.results = results
        self.next = next
    }

    enum CodingKeys: String, CodingKey { case next }

    /// Writes the results' fields and `next` beside them.
    public func encode(to encoder: Encoder) throws {
        try results.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(next, forKey: .next)
    }
}

// Search over the full-text indexes (`SearchIndex`): the same hits, in the same order, on
// SQLite and PostgreSQL.
extension GalleryReading {
    /// The most regions a search lists.
    public static var searchRegionsLimit: Int { 10 }
    /// The most characters a query may have: a person's search, not a document.
    public static var searchQueryLimit: Int { 200 }

    /// Why `text` cannot be a query (too long, or holding control characters), or nil.
    public static func searchQueryProblem(_ text: String) -> String? {
        if text.count > searchQueryLimit { return "the words to find are longer than \(searchQueryLimit) characters" }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "the words to find hold a control character"
        }
        return nil
    }

    /// Searches for `text` (words in any order, each a word's beginning: "que" finds
    /// "Québec"); `region` keeps photos of that region only; `limit` photos a page, after
    /// `after` (a page's `next` cursor, as text). A query without a word finds nothing.
    public func search(_ text: String, region: RegionRecord? = nil, limit: Int, after: String? = nil,
                       imageBase: URL = FlickrConfiguration.defaultImageBase) throws -> SearchResults {
        let terms = SearchTerms.query(text)
        let list = "search:\(region?.placeID ?? ""):\(terms.joined(separator: " "))"
        guard !terms.isEmpty else { return SearchResults(query: "", regions: [], photos: [], next: nil) }
        let start = try after.map { try PhotoSearchPosition(ListCursor(text: $0, list: list)) } ?? PhotoSearchPosition(tier: 0, rowID: nil, position: 0)
        let (ids, next) = try readableStore.read { context in
            try PhotoSearchQuery(terms: terms, regionID: region?.id).page(from: start, limit: limit, in: context)
        }
        let records = try readableStore.read { try $0.fetch(PhotoRecord.self, ids: ids) }
        let byID = Dictionary(records.compactMap { record in record.id.map { ($0, record) } }, uniquingKeysWith: { first, _ in first })
        let photos = try summaries(ids.compactMap { byID[$0] }, imageBase: imageBase).map(PhotoDetail.init)
        let regions = after == nil && region == nil ? try matchingRegions(terms) : []
        return SearchResults(query: terms.joined(separator: " "), regions: regions, photos: photos,
                             next: next.map { ListCursor(list: list, values: [.integer(Int64($0.tier)), .integer($0.rowID ?? 0)], position: $0.position) })
    }

    /// The regions (with photos) whose name and country hold every term, in top-regions
    /// order, found through the regions' full-text index.
    private func matchingRegions(_ terms: [String]) throws -> [RegionRow] {
        try readableStore.read { context in
            let (sql, arguments) = PhotoSearchQuery.regionsSQL(terms, dialect: context.dialect)
            let candidates = try context.rows(sql, arguments).compactMap { $0[0].int64 }
            guard !candidates.isEmpty else { return [] }
            var request = Gallery.topRegionsRequest(limit: Self.searchRegionsLimit)
            request.predicate = request.predicate.map { $0 && Key("id").isIn(candidates) }
            let found = try context.fetch(request, as: RegionRecord.self)
            guard !found.isEmpty else { return [] }
            // Ranks are places in the whole list: its ids, read in order from its index.
            var whole = Gallery.topRegionsRequest(limit: 0)
            whole.fetchLimit = nil
            let order = try context.fetchIDs(whole)
            let rank = Dictionary(order.enumerated().map { ($0.element, $0.offset + 1) }, uniquingKeysWith: { first, _ in first })
            return found.map { region in
                RegionRow(rank: region.id.flatMap { rank[$0] } ?? 0, id: region.placeID, name: region.name, country: region.country,
                          photographers: Int(region.photographerCount), photos: Int(region.photoCount))
            }
        }
    }
}

/// Where a search's photos go on: the tier (0: every word in the title; 1: the rest) and
/// the last row id given in it.
struct PhotoSearchPosition {
    var tier: Int
    var rowID: Int64?
    var position: Int

    init(tier: Int, rowID: Int64?, position: Int) {
        self.tier = tier
        self.rowID = rowID
        self.position = position
    }

    init(_ cursor: ListCursor) throws {
        guard cursor.values.count == 2, case .integer(let tier) = cursor.values[0], (0...1).contains(tier),
              case .integer(let rowID) = cursor.values[1] else {
            throw GalleryError(.invalidArgument, "the cursor is not one this gallery gave (pass the `after` value of a page's next link unchanged)")
        }
        self.init(tier: Int(tier), rowID: rowID, position: cursor.position)
    }
}

/// The query for one tier of a search, as each database's index is asked it.
struct PhotoSearchQuery {
    let terms: [String]
    let regionID: Int64?

    /// Up to `limit` photo row ids from `start` on, and where the page after starts.
    func page(from start: PhotoSearchPosition, limit: Int, in context: ReadContext) throws -> ([Int64], PhotoSearchPosition?) {
        var ids: [Int64] = []
        var tier = start.tier
        var after = start.rowID
        while tier <= 1 {
            let wanted = limit + 1 - ids.count
            let found = try rowIDs(tier: tier, after: after, limit: wanted, in: context)
            ids += found
            if ids.count > limit {
                ids.removeLast(ids.count - limit)
                return (ids, PhotoSearchPosition(tier: tier, rowID: ids.last, position: start.position + ids.count))
            }
            tier += 1
            after = nil
        }
        return (ids, nil)
    }

    private func rowIDs(tier: Int, after: Int64?, limit: Int, in context: ReadContext) throws -> [Int64] {
        let (sql, arguments) = context.dialect.isPostgreSQL ? postgres(tier: tier, after: after, limit: limit)
                                                           : sqlite(tier: tier, after: after, limit: limit)
        return try context.rows(sql, arguments).compactMap { $0[0].int64 }
    }

    /// The ids of regions whose terms hold every term (at most 1,000 candidates).
    static func regionsSQL(_ terms: [String], dialect: SQLDialect) -> (sql: String, arguments: [SQLValue]) {
        if dialect.isPostgreSQL {
            return ("SELECT id FROM region WHERE \(SearchIndex.postgresRegionTerms) @@ $1::tsquery LIMIT 1000",
                    [.text(terms.map { "'\($0)':*" }.joined(separator: " & "))])
        }
        return ("SELECT rowid FROM \(SearchIndex.regionFTSTable) WHERE \(SearchIndex.regionFTSTable) MATCH ? LIMIT 1000",
                [.text(terms.map { "\"\($0)\"*" }.joined(separator: " AND "))])
    }

    /// FTS5: `"a"* AND "b"*` over both columns; tier 0 in the title column alone, tier 1
    /// the rest. FTS5 walks its index in row id order, so the page costs its rows, not
    /// every hit.
    private func sqlite(tier: Int, after: Int64?, limit: Int) -> (String, [SQLValue]) {
        let everywhere = terms.map { "\"\($0)\"*" }.joined(separator: " AND ")
        let inTitle = terms.map { "searchTitle : \"\($0)\"*" }.joined(separator: " AND ")
        let match = tier == 0 ? inTitle : "(\(everywhere)) NOT (\(inTitle))"
        var sql = "SELECT f.rowid FROM \(SearchIndex.ftsTable) f JOIN Photo p ON p.id = f.rowid WHERE \(SearchIndex.ftsTable) MATCH ? AND p.region_id IS NOT NULL"
        var arguments: [SQLValue] = [.text(match)]
        if let regionID { sql += " AND p.region_id = ?"; arguments.append(.integer(regionID)) }
        if let after { sql += " AND f.rowid < ?"; arguments.append(.integer(after)) }
        sql += " ORDER BY f.rowid DESC LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        return (sql, arguments)
    }

    /// PostgreSQL: the same terms as a `tsquery` of prefixes, over the GIN indexes.
    private func postgres(tier: Int, after: Int64?, limit: Int) -> (String, [SQLValue]) {
        let query = terms.map { "'\($0)':*" }.joined(separator: " & ")
        let inTitle = "\(SearchIndex.postgresTitleTerms) @@ $1::tsquery"
        var sql = "SELECT p.id FROM photo p WHERE "
            + (tier == 0 ? inTitle : "\(SearchIndex.postgresAllTerms) @@ $1::tsquery AND NOT coalesce(\(inTitle), false)")
            + " AND p.region_id IS NOT NULL"
        var arguments: [SQLValue] = [.text(query)]
        if let regionID { arguments.append(.integer(regionID)); sql += " AND p.region_id = $\(arguments.count)" }
        if let after { arguments.append(.integer(after)); sql += " AND p.id < $\(arguments.count)" }
        arguments.append(.integer(Int64(limit)))
        sql += " ORDER BY p.id DESC LIMIT $\(arguments.count)"
        return (sql, arguments)
    }
}
