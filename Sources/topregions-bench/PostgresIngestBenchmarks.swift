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
            let (small, large) = try ProductBenchmarks.generatePages(photos: n, in: directory)
            let database = try server.makeDatabase("ingest")
            let gallery = try PostgresGallery.openForSyncing(location: database)
            let (seconds, stored) = try ProductBenchmarks.timedSync(n: n, places: small, photos: large, into: gallery) {
                try Gallery.checkPostgres(database)
            }
            gallery.close()

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
            // The same scenario and JSON line as SQLite's `sync.ingest`, told apart by "store".
            return Figure(scenario: "sync.ingest", n: n, seconds: seconds, baseline: "raw libpq inserts of the same photo rows",
                          baselineSeconds: baseline,
                          extra: ["store": "postgresql", "perSecond": Double(stored) / seconds,
                                  "baselinePerSecond": Double(values.count) / baseline])
        }
    }
}
