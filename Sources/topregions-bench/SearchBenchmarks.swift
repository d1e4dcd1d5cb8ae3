import CSQLite
import Foundation
import PostgreSQL
import Store
import TestSupport
import TopRegionsKit

/// query.search: two-word searches of a 1,000,000-photo gallery, a page of 24 photos each,
/// through `search` as the CLI and the API call it (the full-text query, then the page's
/// records, photographers and regions, and the matching regions), on SQLite and on
/// PostgreSQL. Baseline, in the same run: the same full-text queries and the same page's
/// rows (photo, photographer, region) read directly through SQLite's C API and through
/// libpq. Figures: the p50 and p99 of the queries' times, and their ratio.
enum SearchBenchmarks {
    static let scenario = Scenario(name: "query.search", summary: "two-word searches of 1M photos on SQLite and PostgreSQL vs the same SQL through their C APIs") { quick in
        try run(photos: quick ? 50_000 : 1_000_000, queries: quick ? 60 : 300)
    }

    /// Two words a person might type in the synthetic gallery: a title word and the start of a number.
    static func queries(_ count: Int) -> [String] {
        var random = BenchRandom(state: 7)
        return (0..<count).map { index in
            let word = ["img", "tokyo", "東京", "ete"][index % 4]
            return "\(word) \(Int.random(in: 10..<500, using: &random))"
        }
    }

    static let pageSize = 24

    static func run(photos: Int, queries count: Int) throws -> [Figure] {
        try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("search.sqlite").path
            try ProductBenchmarks.buildStore(path: path, photos: photos, regions: 10_000, photographers: photos / 10)
            let gallery = try Gallery(path: path)
            defer { gallery.close() }
            let raw = try RawSQLite.open(path)
            defer { sqlite3_close_v2(raw) }
            let queries = queries(count)
            // Warm both (caches, statements), then time each query once.
            for query in queries.prefix(10) { _ = try gallery.search(query, limit: pageSize); _ = try rawSQLite(query, raw) }
            var ours: [Double] = [], baseline: [Double] = []
            for query in queries {
                var found: [String] = [], expected: [String] = []
                ours.append(try measure { found = try gallery.search(query, limit: pageSize).photos.map(\.photo.id) })
                baseline.append(try measure { expected = try rawSQLite(query, raw) })
                guard found == expected else { throw BenchError("search \"\(query)\" on SQLite disagrees with the same SQL through the C API") }
            }
            var figures = [figure(ours, baseline, store: "sqlite", photos: photos, baseline: "the same FTS5 queries and page rows through SQLite's C API")]
            if PostgresTestServer.programDirectory != nil {
                figures.append(try postgres(path: path, queries: queries, sqlite: gallery, photos: photos))
            } else {
                FileHandle.standardError.write(Data("topregions-bench: query.search on PostgreSQL skipped: scripts/install-dependencies --bench\n".utf8))
            }
            return figures
        }
    }

    private static func postgres(path: String, queries: [String], sqlite: Gallery, photos: Int) throws -> Figure {
        let server = try PostgresTestServer()
        let database = try server.makeDatabase("search")
        try Gallery.copyStore(from: path, to: database)
        let connection = try PostgresConnection(database)
        defer { connection.close() }
        try connection.execute("VACUUM ANALYZE")
        let gallery = try PostgresGallery(location: database)
        defer { gallery.close() }
        for query in queries.prefix(10) { _ = try gallery.search(query, limit: pageSize); _ = try rawPostgres(query, connection) }
        var ours: [Double] = [], baseline: [Double] = []
        for query in queries {
            var found: [String] = [], expected: [String] = []
            ours.append(try measure { found = try gallery.search(query, limit: pageSize).photos.map(\.photo.id) })
            baseline.append(try measure { expected = try rawPostgres(query, connection) })
            guard found == expected, found == (try sqlite.search(query, limit: pageSize).photos.map(\.photo.id)) else {
                throw BenchError("search \"\(query)\" on PostgreSQL disagrees with libpq or with SQLite")
            }
        }
        return figure(ours, baseline, store: "postgresql", photos: photos, baseline: "the same tsquery queries and page rows through libpq")
    }

    private static func figure(_ ours: [Double], _ baseline: [Double], store: String, photos: Int, baseline name: String) -> Figure {
        let (p50, p99) = (percentile(ours, 0.5), percentile(ours, 0.99))
        let (base50, base99) = (percentile(baseline, 0.5), percentile(baseline, 0.99))
        return Figure(scenario: "query.search", n: photos, seconds: p99, baseline: name, baselineSeconds: base99,
                      extra: ["store": store, "queries": ours.count, "p50": p50, "p99": p99, "baselineP50": base50, "baselineP99": base99,
                              "goal": "p99 < 0.010 s, baseline/ours ≥ 0.5"])
    }

    private static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }

    // MARK: Baselines

    private static func terms(_ query: String) -> [String] { SearchTerms.query(query) }

    /// Title matches, newest first, then the rest; then the page's photo, photographer and
    /// region rows in one query.
    static func rawSQLite(_ query: String, _ db: OpaquePointer) throws -> [String] {
        let words = terms(query)
        let inTitle = words.map { "searchTitle : \"\($0)\"*" }.joined(separator: " AND ")
        let everywhere = words.map { "\"\($0)\"*" }.joined(separator: " AND ")
        var ids: [Int64] = []
        for match in [inTitle, "(\(everywhere)) NOT (\(inTitle))"] where ids.count <= pageSize {
            ids += try RawSQLite.integers(db, """
                SELECT f.rowid FROM PhotoSearch f JOIN Photo p ON p.id = f.rowid WHERE PhotoSearch MATCH ?1 AND p.region_id IS NOT NULL
                ORDER BY f.rowid DESC LIMIT \(pageSize + 1 - ids.count)
                """, text: match)
        }
        let page = Array(ids.prefix(pageSize))
        guard !page.isEmpty else { return [] }
        let rows = try RawSQLite.texts(db, """
            SELECT p.id, p.flickrID, p.title, g.name, r.name, r.country FROM Photo p LEFT JOIN Photographer g ON g.id = p.photographer_id
            LEFT JOIN Region r ON r.id = p.region_id WHERE p.id IN (\(page.map(String.init).joined(separator: ",")))
            """)
        let byID = Dictionary(rows.map { ($0[0], $0[1]) }, uniquingKeysWith: { first, _ in first })
        return page.compactMap { byID[String($0)] }
    }

    static func rawPostgres(_ query: String, _ connection: PostgresConnection) throws -> [String] {
        let tsquery = terms(query).map { "'\($0)':*" }.joined(separator: " & ")
        let title = "array_to_tsvector(array_remove(string_to_array(searchtitle, ' '), ''))"
        let all = "array_to_tsvector(array_remove(string_to_array(searchtitle || ' ' || searchtext, ' '), ''))"
        var ids: [String] = []
        for condition in ["\(title) @@ $1::tsquery", "\(all) @@ $1::tsquery AND NOT coalesce(\(title) @@ $1::tsquery, false)"] where ids.count <= pageSize {
            ids += try connection.query("SELECT id FROM photo WHERE \(condition) AND region_id IS NOT NULL ORDER BY id DESC LIMIT \(pageSize + 1 - ids.count)",
                                        [.text(tsquery)]).rows.compactMap { $0[0] }
        }
        let page = Array(ids.prefix(pageSize))
        guard !page.isEmpty else { return [] }
        let rows = try connection.query("""
            SELECT p.id, p.flickrid, p.title, g.name, r.name, r.country FROM photo p LEFT JOIN photographer g ON g.id = p.photographer_id
            LEFT JOIN region r ON r.id = p.region_id WHERE p.id = ANY($1::bigint[])
            """, [.text("{\(page.joined(separator: ","))}")]).rows
        let byID = Dictionary(rows.map { ($0[0] ?? "", $0[1] ?? "") }, uniquingKeysWith: { first, _ in first })
        return page.compactMap { byID[$0] }
    }
}

extension RawSQLite {
    /// The first column of each row, as integers, of `sql` with `text` bound to ?1.
    static func integers(_ db: OpaquePointer, _ sql: String, text: String) throws -> [Int64] {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(db, sql, -1, &statement, nil), db)
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, text, -1, topregions_sqlite_transient())
        var values: [Int64] = []
        while true {
            let result = sqlite3_step(statement)
            guard result == SQLITE_ROW else { try check(result, db); return values }
            values.append(sqlite3_column_int64(statement, 0))
        }
    }

    /// Every row of `sql`, each column as text ("" for NULL).
    static func texts(_ db: OpaquePointer, _ sql: String) throws -> [[String]] {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(db, sql, -1, &statement, nil), db)
        defer { sqlite3_finalize(statement) }
        var rows: [[String]] = []
        while true {
            let result = sqlite3_step(statement)
            guard result == SQLITE_ROW else { try check(result, db); return rows }
            rows.append((0..<sqlite3_column_count(statement)).map { column in
                sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
            })
        }
    }
}
