import Foundation
import PostgreSQL
import PostgresStore
import Store
import TestSupport

/// store.postgresql: `store.insert` and `store.fetch` on a PostgreSQL store: the same
/// photo-like records through `PostgresRecordStore` (one serializable transaction, the
/// change history written by the triggers), inserted one at a time and as one batch
/// (`insert(&records)`), against libpq's own prepared statements (and `COPY`,
/// PostgreSQL's bulk load) on the same tables, in the same run.
enum PostgresStoreBenchmarks {
    static let scenario = Scenario(name: "store.postgresql",
                                   summary: "insert and fetch N photo-like records in PostgreSQL vs libpq prepared statements and COPY") { quick in
        try figures(n: quick ? 5_000 : 100_000, runs: quick ? 1 : 3)
    }

    static func figures(n: Int, runs: Int) throws -> [Figure] {
        guard PostgresTestServer.programDirectory != nil else {
            throw BenchError("PostgreSQL is not installed: scripts/install-dependencies --test")
        }
        let server = try PostgresTestServer.shared()
        let photos = BenchPhoto.generate(count: n, regions: StoreBenchmarks.regionCount)
        let columns = BenchPhoto.columns.map { $0.lowercased() }
        let rows = try photos.map { photo in try photo.storedValues().map(PostgresRows.parameter) }
        var database = ""
        let ours = try medianSeconds(runs: runs, setUp: { database = try makeDatabase(server) }) {
            let store = try PostgresRecordStore(try PostgresStore(location: database, schema: schema))
            defer { store.close() }
            try store.write { transaction in
                for photo in photos { try transaction.inserted(photo) }
            }
        }
        let batched = try medianSeconds(runs: runs, setUp: { database = try makeDatabase(server) }) {
            let store = try PostgresRecordStore(try PostgresStore(location: database, schema: schema))
            defer { store.close() }
            try store.write { transaction in
                var records = photos
                try transaction.insert(&records)
            }
        }
        let insert = "INSERT INTO benchphoto (\(columns.joined(separator: ", "))) VALUES (\(columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")))"
        let prepared = try medianSeconds(runs: runs, setUp: { database = try makeDatabase(server) }) {
            let connection = try rawConnection(database)
            defer { connection.close() }
            try connection.transaction(.readCommitted) { transaction in
                for row in rows { try transaction.query(insert, row) }
            }
        }
        let copy = try medianSeconds(runs: runs, setUp: { database = try makeDatabase(server) }) {
            let connection = try rawConnection(database)
            defer { connection.close() }
            try connection.transaction(.readCommitted) { transaction in
                try transaction.copyIn("COPY benchphoto (\(columns.joined(separator: ", "))) FROM STDIN", rows: rows)
            }
        }

        // Fetch: the last database holds the rows (COPY's); analyzed, as a server would be.
        let store = try PostgresRecordStore(try PostgresStore(location: database, schema: schema))
        defer { store.close() }
        let request = FetchRequest(BenchPhoto.self, sortDescriptors: [SortKey("uploaded", ascending: false)])
        var fetched = 0, rawFetched = 0
        let fetch = try medianSeconds(runs: runs) { fetched = try store.read { try $0.fetch(request, as: BenchPhoto.self) }.count }
        let connection = try PostgresConnection(database)
        defer { connection.close() }
        try connection.execute("ANALYZE")
        let select = "SELECT id, \(columns.joined(separator: ", ")) FROM benchphoto ORDER BY uploaded DESC, id"
        let rawFetch = try medianSeconds(runs: runs) { rawFetched = try connection.query(select).rows.count }
        guard fetched == n, rawFetched == n else { throw BenchError("fetched \(fetched) and \(rawFetched) of \(n) records") }
        let extra: [String: Any] = ["store": "postgresql", "insert": "inserted(_:) one record at a time", "perSecond": Double(n) / ours]
        return [
            Figure(scenario: "store.insert", n: n, seconds: ours, baseline: "libpq prepared statements", baselineSeconds: prepared,
                   extra: extra.merging(["baselinePerSecond": Double(n) / prepared]) { $1 }),
            Figure(scenario: "store.insert", n: n, seconds: batched, baseline: "libpq prepared statements", baselineSeconds: prepared,
                   extra: ["store": "postgresql", "insert": "insert(&records): one COPY, its rows numbered first",
                           "perSecond": Double(n) / batched, "baselinePerSecond": Double(n) / prepared]),
            Figure(scenario: "store.insert", n: n, seconds: batched, baseline: "libpq COPY", baselineSeconds: copy,
                   extra: ["store": "postgresql", "insert": "insert(&records): one COPY, its rows numbered first",
                           "perSecond": Double(n) / batched, "baselinePerSecond": Double(n) / copy]),
            Figure(scenario: "store.fetch", n: n, seconds: fetch, baseline: "libpq prepared statement, text rows", baselineSeconds: rawFetch,
                   extra: ["store": "postgresql", "perSecond": Double(n) / fetch, "baselinePerSecond": Double(n) / rawFetch]),
        ]
    }

    static let schema: PostgresSchema = {
        var migrator = Migrator.creating([BenchRegion.entity, BenchPhoto.entity], name: "bench.v1")
        migrator.register("bench.regions") { _ in }
        return PostgresSchema(Schema([BenchRegion.entity, BenchPhoto.entity]), migrator: migrator)
    }()

    /// A connection for a baseline: libpq alone, its writes neither recorded in the history
    /// nor announced as a write from outside (the triggers return at once, as they would
    /// on a table without them).
    static func rawConnection(_ database: String) throws -> PostgresConnection {
        let connection = try PostgresConnection(database)
        try connection.execute("SET topregions.record_changes = 'off'")
        return connection
    }

    /// A new database holding the bench schema and its regions.
    static func makeDatabase(_ server: PostgresTestServer) throws -> String {
        let database = try server.makeDatabase("store")
        let store = try PostgresStore(location: database, schema: schema)
        defer { store.close() }
        try store.migrate()
        try store.connection.transaction(.readCommitted) { transaction in
            for index in 1...StoreBenchmarks.regionCount {
                try transaction.query("INSERT INTO benchregion (id, name) VALUES ($1, $2)", [.integer(Int64(index)), .text("Region \(index)")])
            }
        }
        return database
    }
}
