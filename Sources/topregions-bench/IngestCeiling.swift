import CSQLite
import Foundation
import SampleDataSupport
import Store
import TopRegionsKit

/// `sync.ceiling`: what SQLite itself does with the photo rows a sync stores, schema part by
/// schema part, with no TopRegions code in the timed loop. It is the floor under
/// `sync.ingest`: a goal that this scenario's fastest figure misses cannot be met by any
/// sync on this schema and machine.
enum IngestCeiling {
    static let scenario = Scenario(name: "sync.ceiling",
                                   summary: "raw SQLite inserts of a sync's photo rows without Photo's indexes, with BINARY titles, in 8,000-row commits, with the indexes built after, with only the query's index built after") { quick in
        try (quick ? [20_000] : [100_000, 1_000_000]).flatMap { try ceiling(n: $0) }
    }

    /// One way of inserting the rows; each figure's ratio is against `productSchema`.
    enum Variant: String, CaseIterable {
        /// The product's schema, one transaction: `sync.ingest`'s baseline.
        case productSchema = "product schema, one transaction"
        /// The same, committed every 8,000 rows, as a sync of 16-page groups commits.
        case syncCommits = "product schema, a commit every 8,000 rows"
        /// `photo_region_title` ordered by byte value instead of `localizedStandard`.
        case binaryTitles = "photo_region_title with BINARY titles, one transaction"
        /// No index on Photo but its primary key and the Flickr id's uniqueness.
        case noPhotoIndexes = "no Photo index but the unique Flickr id, one transaction"
        /// The product's schema, its Photo indexes dropped before the rows and built after
        /// them: the floor under the sync's bulk load (`Store.deferIndexes(of:)`).
        case indexesAfter = "product schema, Photo's indexes built after the rows"
        /// Only the index `query.regionPhotos` reads, ordered by byte value (as a stored sort
        /// key would be) and built after the rows: the most that any schema still serving the
        /// query goals could reach, before the sync's own work (counts, photographers).
        case queryIndexAfter = "only photo_region_title, BINARY titles, built after the rows"

        var rowsPerCommit: Int { self == .syncCommits ? 8_000 : Int.max }

        /// `photo_region_title` with its titles in byte order instead of `localizedStandard`.
        static let binaryTitleIndex = "CREATE INDEX photo_region_title ON Photo (region_id, title, flickrNumber)"

        /// Changes a freshly created store into this variant's schema; returns the statements
        /// to run after the rows, which are timed with them.
        func prepare(_ db: OpaquePointer) throws -> [String] {
            switch self {
            case .productSchema, .syncCommits:
                return []
            case .binaryTitles:
                try RawSQLite.check(sqlite3_exec(db, "DROP INDEX photo_region_title; \(Self.binaryTitleIndex)", nil, nil, nil), db)
                return []
            case .noPhotoIndexes, .indexesAfter, .queryIndexAfter:
                let indexes = try IngestCeiling.declaredIndexes(of: "Photo", in: db)
                for index in indexes {
                    try RawSQLite.check(sqlite3_exec(db, "DROP INDEX \"\(index.name)\"", nil, nil, nil), db)
                }
                switch self {
                case .indexesAfter: return indexes.map(\.sql)
                case .queryIndexAfter: return [Self.binaryTitleIndex]
                default: return []
                }
            }
        }
    }

    /// Syncs `n` photos once (untimed) for their rows, then inserts those rows raw, once per
    /// variant, each into a fresh store holding the same photographers, places and regions.
    static func ceiling(n: Int) throws -> [Figure] {
        try withScratchDirectory { directory in
            let (small, large) = try ProductBenchmarks.generatePages(photos: n, in: directory)
            let synced = directory.appendingPathComponent("synced.sqlite").path
            _ = try ProductBenchmarks.timedSync(n: n, places: small, photos: large, into: synced)
            let rows = try ProductBenchmarks.photoRows(of: synced)
            let rowCount = rows.values.count
            var seconds: [Variant: Double] = [:]
            for variant in Variant.allCases {
                let path = directory.appendingPathComponent("ceiling-\(variant).sqlite").path
                try Gallery(path: path).close()
                try ProductBenchmarks.copyReferences(from: synced, into: path)
                let db = try RawSQLite.open(path)
                let after = try variant.prepare(db)
                sqlite3_close_v2(db)
                flushFileSystems()
                seconds[variant] = try measure {
                    try ProductBenchmarks.rawInsert(rows, path: path, rowsPerCommit: variant.rowsPerCommit)
                    try RawSQLite.execute(after, path: path)
                }
            }
            let product = seconds[.productSchema] ?? 0
            return Variant.allCases.map { variant in
                let time = seconds[variant] ?? 0
                return Figure(scenario: "sync.ceiling", n: rowCount, seconds: time, baseline: Variant.productSchema.rawValue,
                              baselineSeconds: product, extra: ["variant": variant.rawValue, "perSecond": Double(rowCount) / time])
            }
        }
    }

    /// The indexes declared on `table` (not those SQLite makes for UNIQUE), with the SQL
    /// that created each.
    static func declaredIndexes(of table: String, in db: OpaquePointer) throws -> [(name: String, sql: String)] {
        var statement: OpaquePointer?
        try RawSQLite.check(sqlite3_prepare_v2(db, "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
                                               -1, &statement, nil), db)
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, table, -1, topregions_sqlite_transient())
        var indexes: [(name: String, sql: String)] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            if let name = sqlite3_column_text(statement, 0), let sql = sqlite3_column_text(statement, 1) {
                indexes.append((String(cString: name), String(cString: sql)))
            }
        }
        guard !indexes.isEmpty else { throw StoreError(.invalidRequest, "\(table) has no declared index to drop") }
        return indexes
    }
}
