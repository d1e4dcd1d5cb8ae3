import Flickr
import Foundation
import PostgreSQL
import SampleDataSupport
import Store
import TestSupport
import TopRegionsKit

/// sync.postgresql: `sync.ingest` into a PostgreSQL store: the same generated JSON pages,
/// synced through `PostgresGallery` as `topregions sync --store postgresql://…` does (each
/// group of pages one serializable transaction, its change history written by the
/// triggers). Baseline: the same photo rows, read back untimed, inserted through libpq with
/// one prepared statement in one transaction into a table of the same columns and indexes
/// (`LIKE photo INCLUDING ALL`: no foreign keys, no triggers).
enum PostgresIngestBenchmarks {
    static let scenario = Scenario(name: "sync.postgresql",
                                   summary: "sync N photos from JSON pages into PostgreSQL vs raw libpq inserts of the same rows") { quick in
        try (quick ? [5_000] : [100_000, 1_000_000]).map { try ingest(n: $0) }
    }

    static func ingest(n: Int) throws -> Figure {
        guard PostgresTestServer.programDirectory != nil else {
            throw BenchError("PostgreSQL is not installed: scripts/install-dependencies --test")
        }
        let server = try PostgresTestServer.shared()
        return try withScratchDirectory { directory in
            let small = directory.appendingPathComponent("places"), large = directory.appendingPathComponent("photos")
            try SampleDataGenerator.generateJSONPages(photos: 1_200, into: small)
            try SampleDataGenerator.generateJSONPages(photos: n, into: large)
            let database = try server.makeDatabase("ingest")
            let (seconds, stored) = try timedSync(n: n, places: small, photos: large, into: database)

            let connection = try PostgresConnection(database)
            defer { connection.close() }
            let rows = try connection.query("SELECT * FROM photo ORDER BY id")
            try connection.execute("CREATE TABLE photo_raw (LIKE photo INCLUDING ALL)")
            let columns = rows.columns
            let insert = "INSERT INTO photo_raw (\(columns.map { "\"\($0)\"" }.joined(separator: ", "))) "
                + "VALUES (\(columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")))"
            let values = rows.rows.map { row in row.map { $0.map(PostgresValue.text) ?? .null } }
            let baseline = try measure {
                try connection.transaction(.readCommitted) { transaction in
                    for row in values { try transaction.query(insert, row) }
                }
            }
            return Figure(scenario: "sync.postgresql", n: n, seconds: seconds, baseline: "raw libpq inserts of the same photo rows",
                          baselineSeconds: baseline,
                          extra: ["store": "postgresql", "perSecond": Double(stored) / seconds,
                                  "baselinePerSecond": Double(values.count) / baseline])
        }
    }

    /// One timed sync pass of the photos into a fresh database (whose places are resolved
    /// beforehand, untimed), checked: every photo stored, counts consistent.
    static func timedSync(n: Int, places: URL, photos: URL, into database: String) throws -> (seconds: Double, stored: Int) {
        try ProductBenchmarks.blockingAsync {
            let gallery = try PostgresGallery.openForSyncing(location: database)
            defer { gallery.close() }
            _ = try await gallery.sync(client: FlickrClient(configuration: FlickrConfiguration(), transport: try SampleDataTransport(directory: places)))
            let count = { try gallery.read { try $0.count(FetchRequest(PhotoRecord.self)) } }
            let before = try count()
            var options = SyncOptions(pages: n / 500 + 1, perPage: 500)
            options.overlap = 100 * 365 * 86_400
            let client = FlickrClient(configuration: FlickrConfiguration(), transport: try SampleDataTransport(directory: photos))
            let started = Date()
            let result = try await gallery.sync(client: client, options: options)
            let elapsed = Date().timeIntervalSince(started)
            let stored = try count()
            guard result.outcome == .newData, stored >= n else { throw BenchError("stored \(stored) of \(n) photos: \(result.error ?? "")") }
            guard try Gallery.checkPostgres(database).isEmpty else { throw BenchError("counts do not match after the ingest") }
            return (elapsed, stored - before)
        }
    }
}
