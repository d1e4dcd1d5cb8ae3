import Foundation
import PostgreSQL
import Store
import TestSupport
import TopRegionsKit

/// query.postgresql: `query.topRegions` and `query.regionPhotos` on a PostgreSQL store (the
/// same synthetic gallery, copied in untimed), through `PostgresGallery` as the CLI reads
/// it: each a repeatable-read snapshot, the fetch request compiled to PostgreSQL's SQL,
/// records decoded. Baseline: hand-written SQL giving the same rows through libpq (text
/// rows, not decoded). The SQLite store's times for the same queries, measured in the same
/// run, are in `sqliteSeconds`.
enum PostgresQueryBenchmarks {
    static let scenario = Scenario(name: "query.postgresql",
                                   summary: "top regions of 1M photos and a region's 10,000 from PostgreSQL vs hand-written SQL through libpq") { quick in
        try queries(photos: quick ? 50_000 : 1_000_000, regions: quick ? 1_000 : 10_000, photographers: quick ? 5_000 : 100_000)
    }

    /// The top 50 regions as the index orders them, by hand.
    static let handTopRegions = """
        SELECT id, placeid, name, country, photographercount, photocount FROM region
        WHERE photocount > 0 AND name <> ''
        ORDER BY photographercount DESC, substring(name_sortkey FROM 1 FOR 1024), name_sortkey, placeid COLLATE "C", id LIMIT 50
        """

    /// A region's photos in title order, by hand.
    static let handRegionPhotos = """
        SELECT * FROM photo WHERE region_id = $1
        ORDER BY substring(title_sortkey FROM 1 FOR 1024), title_sortkey, flickrnumber, id
        """

    static func queries(photos: Int, regions: Int, photographers: Int) throws -> [Figure] {
        guard PostgresTestServer.programDirectory != nil else {
            throw BenchError("PostgreSQL is not installed: scripts/install-dependencies --test")
        }
        let server = try PostgresTestServer()
        return try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("query.sqlite").path
            try ProductBenchmarks.buildStore(path: path, photos: photos, regions: regions, photographers: photographers)
            let database = try server.makeDatabase("query")
            try Gallery.copyStore(from: path, to: database)
            let connection = try PostgresConnection(database)
            defer { connection.close() }
            try connection.execute("VACUUM ANALYZE")

            let sqlite = try Gallery(path: path)
            defer { sqlite.close() }
            let postgres = try PostgresGallery(location: database)
            defer { postgres.close() }

            var top: [RegionSummary] = [], handTop: [[String?]] = []
            let ours = try medianSeconds(runs: 21) { top = try postgres.topRegions() }
            let hand = try medianSeconds(runs: 21) { handTop = try connection.query(handTopRegions).rows }
            let sqliteTop = try medianSeconds(runs: 21) { _ = try sqlite.topRegions() }
            guard top.map(\.placeID) == handTop.map({ $0[1] ?? "" }), top == (try sqlite.topRegions()) else {
                throw BenchError("the top regions from PostgreSQL disagree with the hand-written query or with SQLite")
            }

            var records: [PhotoRecord] = [], handRows: [[String?]] = []
            let request = Gallery.regionPhotosRequest(regionID: 1)
            let regionPhotos = try medianSeconds(runs: 11) {
                records = try postgres.readableStore.read { try $0.fetch(request, as: PhotoRecord.self) }
            }
            let handRegion = try medianSeconds(runs: 11) { handRows = try connection.query(handRegionPhotos, [.integer(1)]).rows }
            let sqliteRegion = try medianSeconds(runs: 11) { _ = try sqlite.readableStore.read { try $0.fetch(request, as: PhotoRecord.self) } }
            let sqliteRecords = try sqlite.readableStore.read { try $0.fetch(request, as: PhotoRecord.self) }
            guard records.count == 10_000, records == sqliteRecords, records.map(\.id) == handRows.map({ $0[0].flatMap { Int64($0) } }) else {
                throw BenchError("the region's photos from PostgreSQL disagree with the hand-written query or with SQLite")
            }
            return [
                Figure(scenario: "query.topRegions", n: photos, seconds: ours, baseline: "the same rows by hand-written SQL through libpq",
                       baselineSeconds: hand, extra: ["store": "postgresql", "sqliteSeconds": sqliteTop, "regions": regions]),
                Figure(scenario: "query.regionPhotos", n: records.count, seconds: regionPhotos,
                       baseline: "the same rows by hand-written SQL through libpq, as text", baselineSeconds: handRegion,
                       extra: ["store": "postgresql", "sqliteSeconds": sqliteRegion]),
            ]
        }
    }
}
