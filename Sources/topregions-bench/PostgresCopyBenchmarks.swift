import Foundation
import PostgreSQL
import PostgresStore
import SampleDataSupport
import Store
import TestSupport
import TopRegionsKit

/// copy.postgresql: a synced gallery of N photos copied into PostgreSQL (`copy --to URL`:
/// read from SQLite, sort keys computed, rows sent with `COPY`, one transaction), against
/// libpq loading the same rows (read beforehand) with one prepared `INSERT` each, and with
/// `COPY`, each in one transaction; and the copy back out into a new SQLite store.
enum PostgresCopyBenchmarks {
    static let scenario = Scenario(name: "copy.postgresql",
                                   summary: "a gallery copied into PostgreSQL vs libpq's prepared inserts and COPY of the same rows; and back") { quick in
        try (quick ? [5_000] : [100_000]).flatMap { try copy(n: $0) }
    }

    static func copy(n: Int) throws -> [Figure] {
        guard PostgresTestServer.programDirectory != nil else {
            throw BenchError("PostgreSQL is not installed: scripts/install-dependencies --test")
        }
        let server = try PostgresTestServer()
        return try withScratchDirectory { directory in
            let (small, large) = try ProductBenchmarks.generatePages(photos: n, in: directory)
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
            let raw = try rawLoad(from: target, into: try server.makeDatabase("raw"), copy: false)
            let rawCopy = try rawLoad(from: target, into: try server.makeDatabase("rawcopy"), copy: true)

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
                Figure(scenario: "copy.postgresql", n: Int(rows), seconds: ours, baseline: "libpq COPY of the same rows, one transaction",
                       baselineSeconds: rawCopy.seconds, extra: ["store": "postgresql", "direction": "sqlite → postgresql", "rowsAllTables": raw.rows]),
                Figure(scenario: "copy.postgresql", n: Int(rows), seconds: out,
                       extra: ["store": "postgresql", "direction": "postgresql → sqlite", "perSecond": Double(raw.rows) / out]),
            ]
        }
    }

    /// Loads every row of every table of the store at `source` into the same tables,
    /// created empty at `destination`, in one transaction: one prepared `INSERT` per row, or
    /// one `COPY` per table (the rows are read beforehand, untimed).
    private static func rawLoad(from source: String, into destination: String, copy: Bool) throws -> (seconds: Double, rows: Int) {
        let reader = try PostgresConnection(source)
        defer { reader.close() }
        var tables: [(insert: String, copy: String, rows: [[PostgresValue]])] = []
        for entity in TopRegionsSchema.postgres.schema.entities {
            let result = try reader.query("SELECT * FROM \(PostgresSchema.identifier(entity.name))")
            let table = PostgresSchema.identifier(entity.name), columns = result.columns.map(PostgresSchema.identifier).joined(separator: ", ")
            let parameters = (1...max(1, result.columns.count)).map { "$\($0)" }.joined(separator: ", ")
            tables.append(("INSERT INTO \(table) (\(columns)) VALUES (\(parameters))", "COPY \(table) (\(columns)) FROM STDIN",
                           result.rows.map { row in row.map { $0.map(PostgresValue.text) ?? .null } }))
        }
        let schema = try PostgresStore(location: destination, schema: TopRegionsSchema.postgres)
        try schema.migrate()
        schema.close()
        let writer = try PostgresStoreBenchmarks.rawConnection(destination)
        defer { writer.close() }
        let seconds = try measure {
            try writer.transaction(.readCommitted, attempts: 1) { connection in
                for table in tables {
                    if copy {
                        try connection.copyIn(table.copy, rows: table.rows)
                    } else {
                        for row in table.rows { try connection.query(table.insert, row) }
                    }
                }
            }
        }
        return (seconds, tables.reduce(0) { $0 + $1.rows.count })
    }
}
