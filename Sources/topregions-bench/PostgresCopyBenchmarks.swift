import Foundation
import PostgreSQL
import PostgresStore
import SampleDataSupport
import Store
import TestSupport
import TopRegionsKit

/// copy.postgresql: a synced gallery of N photos copied into PostgreSQL (`copy --to URL`:
/// read from SQLite, sort keys computed, rows sent in multi-row inserts, one transaction),
/// against libpq inserting the same rows one prepared statement each in one transaction;
/// and the copy back out into a new SQLite store.
enum PostgresCopyBenchmarks {
    static let scenario = Scenario(name: "copy.postgresql",
                                   summary: "a gallery copied into PostgreSQL vs libpq's prepared single-row inserts of the same rows; and back") { quick in
        try (quick ? [5_000] : [100_000]).flatMap { try copy(n: $0) }
    }

    static func copy(n: Int) throws -> [Figure] {
        guard PostgresTestServer.programDirectory != nil else {
            throw BenchError("PostgreSQL is not installed: scripts/install-dependencies --test")
        }
        let server = try PostgresTestServer()
        return try withScratchDirectory { directory in
            let small = directory.appendingPathComponent("places"), large = directory.appendingPathComponent("photos")
            try SampleDataGenerator.generateJSONPages(photos: 1_200, into: small)
            try SampleDataGenerator.generateJSONPages(photos: n, into: large)
            let synced = directory.appendingPathComponent("synced.sqlite").path
            let stored = try ProductBenchmarks.timedSync(n: n, places: small, photos: large, into: synced).stored

            let target = try server.makeDatabase("copy")
            let gallery = try Gallery(path: synced)
            let rows = try ProductBenchmarks.storeBeneath(gallery).read { try $0.scalar("SELECT count(*) FROM Photo")?.int64 ?? 0 }
            let ours = try measure {
                let store = try PostgresStore(location: target, schema: TopRegionsSchema.postgres)
                defer { store.close() }
                try store.copy(from: try ProductBenchmarks.storeBeneath(gallery))
            }
            gallery.close()
            let raw = try rawInserts(from: target, into: try server.makeDatabase("raw"))

            let back = directory.appendingPathComponent("back.sqlite").path
            let out = try measure { try Gallery.copyStore(from: target, to: back) }
            let copy = try Gallery.open(path: back, for: .read)
            defer { copy.close() }
            guard try copy.check().isEmpty, try copy.status().photos == rows else {
                throw BenchError("the copy back does not hold the gallery whole")
            }
            return [
                Figure(scenario: "copy.postgresql", n: Int(rows), seconds: ours, baseline: "libpq prepared single-row inserts of the same rows, one transaction",
                       baselineSeconds: raw.seconds, extra: ["store": "postgresql", "direction": "sqlite → postgresql", "rowsAllTables": raw.rows,
                                                             "perSecond": Double(raw.rows) / ours, "synced": stored]),
                Figure(scenario: "copy.postgresql", n: Int(rows), seconds: out,
                       extra: ["store": "postgresql", "direction": "postgresql → sqlite", "perSecond": Double(raw.rows) / out]),
            ]
        }
    }

    /// Inserts every row of every table of the store at `source` into the same tables,
    /// created empty at `destination`, with one prepared statement per table and one
    /// round trip per row, in one transaction (the rows are read beforehand, untimed).
    private static func rawInserts(from source: String, into destination: String) throws -> (seconds: Double, rows: Int) {
        let reader = try PostgresConnection(source)
        defer { reader.close() }
        var tables: [(sql: String, rows: [[PostgresValue]])] = []
        for entity in TopRegionsSchema.postgres.schema.entities {
            let result = try reader.query("SELECT * FROM \(PostgresSchema.quote(entity.name))")
            let columns = result.columns.map(PostgresSchema.quote).joined(separator: ", ")
            let parameters = (1...max(1, result.columns.count)).map { "$\($0)" }.joined(separator: ", ")
            tables.append(("INSERT INTO \(PostgresSchema.quote(entity.name)) (\(columns)) VALUES (\(parameters))",
                           result.rows.map { row in row.map { $0.map(PostgresValue.text) ?? .null } }))
        }
        let schema = try PostgresStore(location: destination, schema: TopRegionsSchema.postgres)
        try schema.migrate()
        schema.close()
        let writer = try PostgresConnection(destination)
        defer { writer.close() }
        let seconds = try measure {
            try writer.transaction(.readCommitted, attempts: 1) { connection in
                for table in tables {
                    for row in table.rows { try connection.query(table.sql, row) }
                }
            }
        }
        return (seconds, tables.reduce(0) { $0 + $1.rows.count })
    }
}
