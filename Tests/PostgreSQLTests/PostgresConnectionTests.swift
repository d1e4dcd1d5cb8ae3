import Foundation
import PostgreSQL
import TestSupport
import Testing

/// The PostgreSQL tests run against a real server that the tests start (`PostgresTestServer`);
/// without PostgreSQL installed they are skipped, with the command that enables them.
let postgresAvailable = Testing.ConditionTrait.enabled(
    if: PostgresTestServer.shouldRun,
    "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)")

/// A connection to a fresh database of its own on the shared test server.
func freshDatabase() throws -> (url: String, connection: PostgresConnection) {
    let url = try PostgresTestServer.shared().makeDatabase()
    return (url, try PostgresConnection(url))
}

@Suite("A PostgreSQL connection", postgresAvailable)
struct PostgresConnectionTests {
    @Test("A URL's scheme in any case reaches the database it names (libpq alone would take it for a database name)")
    func schemeInAnyCase() throws {
        let (url, connection) = try freshDatabase()
        let database = try connection.query("SELECT current_database() AS name").text(0, "name")
        let shouted = try PostgresConnection(url.replacingOccurrences(of: "postgresql://", with: "PostgreSQL://"))
        #expect(try shouted.query("SELECT current_database() AS name").text(0, "name") == database)
    }

    @Test("Values round-trip through parameters: text, integers, reals, booleans, NULL and bytes with zeros")
    func valuesRoundTrip() throws {
        let (_, connection) = try freshDatabase()
        try connection.execute("CREATE TABLE sample (name text, count bigint, ratio double precision, flag boolean, data bytea)")
        let bytes: [UInt8] = [0, 1, 2, 0, 255, 0x5c, 0x27]
        try connection.query("INSERT INTO sample VALUES ($1, $2, $3, $4, $5)",
                             [.text("Liège e\u{300} 東京 🐱 'quoted' \\"), .integer(-9_007_199_254_740_993), .real(0.1), .boolean(true), .bytes(bytes)])
        try connection.query("INSERT INTO sample VALUES ($1, $2, $3, $4, $5)", [.null, .null, .real(.nan), .boolean(false), .bytes([])])
        let rows = try connection.query("SELECT * FROM sample ORDER BY name NULLS LAST")
        #expect(try rows.text(0, "name") == "Liège e\u{300} 東京 🐱 'quoted' \\")
        #expect(try rows.integer(0, "count") == -9_007_199_254_740_993)
        #expect(try rows.text(0, "ratio").flatMap(Double.init) == 0.1)
        #expect(try rows.boolean(0, "flag") == true)
        #expect(try rows.bytes(0, "data") == bytes)
        #expect(try rows.text(1, "name") == nil)
        #expect(try rows.integer(1, "count") == nil)
        #expect(try rows.text(1, "ratio") == "NaN")
        #expect(try rows.boolean(1, "flag") == false)
        #expect(try rows.bytes(1, "data") == [])
    }

    @Test("A statement is prepared once per connection, however often it runs")
    func statementsArePreparedOnce() throws {
        let (_, connection) = try freshDatabase()
        for value in 0..<5 {
            #expect(try connection.query("SELECT $1::bigint + 1 AS next", [.integer(Int64(value))]).integer(0, "next") == Int64(value + 1))
        }
        let prepared = try connection.query("SELECT count(*) AS count FROM pg_prepared_statements WHERE statement LIKE $1",
                                            [.text("SELECT $1::bigint + 1%")])
        #expect(try prepared.integer(0, "count") == 1)
    }

    @Test("A refused statement throws the server's SQLSTATE and message, and never a bound value")
    func serverErrorsCarryTheirState() throws {
        let (_, connection) = try freshDatabase()
        try connection.execute("CREATE TABLE person (name text PRIMARY KEY)")
        try connection.query("INSERT INTO person VALUES ($1)", [.text("secret-value-1")])
        let error = #expect(throws: PostgresError.self) {
            try connection.query("INSERT INTO person VALUES ($1)", [.text("secret-value-1")])
        }
        #expect(error?.kind == .server)
        #expect(error?.isUniqueViolation == true)
        #expect(error?.sql == "INSERT INTO person VALUES ($1)")
        #expect(error?.description.contains("secret-value-1") == false)
        // Text cannot hold NUL in PostgreSQL (libpq would cut it short there): refused, not truncated.
        let nul = #expect(throws: PostgresError.self) {
            try connection.query("INSERT INTO person VALUES ($1)", [.text("a\u{0}b")])
        }
        #expect(nul?.kind == .invalidParameter)
        #expect(nul?.description.contains("$1") == true)
        #expect(try connection.query("SELECT count(*) AS count FROM person").integer(0, "count") == 1)
    }

    @Test("A connection that cannot be made names the location with its password redacted")
    func connectionFailuresRedactThePassword() throws {
        let error = #expect(throws: PostgresError.self) {
            _ = try PostgresConnection("postgresql://alice:hunter2@127.0.0.1:1/gallery?connect_timeout=2")
        }
        #expect(error?.kind == .cannotConnect)
        #expect(error?.description.contains("hunter2") == false)
        #expect(error?.description.contains("postgresql://alice:***@127.0.0.1:1/gallery") == true)
    }

    @Test("A closed connection refuses statements with its own error")
    func closedConnectionsRefuse() throws {
        let (_, connection) = try freshDatabase()
        connection.close()
        let error = #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }
        #expect(error?.kind == .closed)
    }
}
