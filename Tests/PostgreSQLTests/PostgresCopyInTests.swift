import Foundation
import PostgreSQL
import TestSupport
import Testing

@Suite("COPY FROM STDIN through a connection", postgresAvailable)
struct PostgresCopyInTests {
    private static let table = "CREATE TABLE sample (id bigint PRIMARY KEY, name text, count bigint, ratio double precision, flag boolean, data bytea)"
    private static let copy = "COPY sample (id, name, count, ratio, flag, data) FROM STDIN"

    /// A text from the characters COPY's text format escapes or could misread, and others.
    private static func hostileText(_ random: inout SeededGenerator) -> String {
        let pieces = ["\\", "\t", "\n", "\r", "\\N", "\\x41", "\\.", "'", "\"", ",", "é", "e\u{301}", "東京", "🐱", "\u{200D}", " ", "a", "7"]
        return (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random) ?? "" }.joined()
    }

    @Test("Random rows of hostile text, extreme numbers, NULLs and bytes come back exactly as sent (seed printed)")
    func randomRowsRoundTrip() throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresCopyInTests.randomRowsRoundTrip")
        var random = SeededGenerator(seed: seed)
        let (_, connection) = try freshDatabase()
        try connection.execute(Self.table)
        let reals: [Double] = [0, -0.0, 0.1, 1e-300, -1e300, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .infinity, -.infinity]
        var sent: [[PostgresValue]] = []
        for id in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...8, using: &random)).map { _ in [0, 0x5c, 0x0a, 0x09, 0xff, 0x4e].randomElement(using: &random) ?? 0 } as [UInt8]
            let maybe = { (value: PostgresValue, random: inout SeededGenerator) in Int.random(in: 0..<5, using: &random) == 0 ? PostgresValue.null : value }
            sent.append([.integer(Int64(id)), maybe(.text(Self.hostileText(&random)), &random),
                         maybe(.integer(Int64.random(in: .min ... .max, using: &random)), &random),
                         maybe(.real(reals.randomElement(using: &random) ?? 0), &random), maybe(.boolean(Bool.random(using: &random)), &random),
                         maybe(.bytes(bytes), &random)])
        }
        #expect(try connection.copyIn(Self.copy, rows: sent) == sent.count, "seed \(seed)")
        let result = try connection.query("SELECT id, name, count, ratio::text AS ratio, flag, data FROM sample ORDER BY id")
        #expect(result.rows.count == sent.count)
        for (row, values) in sent.enumerated() {
            let back: [PostgresValue] = [
                .integer(try result.integer(row, "id") ?? -1),
                try result.text(row, "name").map(PostgresValue.text) ?? .null,
                try result.integer(row, "count").map(PostgresValue.integer) ?? .null,
                try result.text(row, "ratio").map { PostgresValue.real(Double($0) ?? .nan) } ?? .null,
                try result.boolean(row, "flag").map(PostgresValue.boolean) ?? .null,
                try result.bytes(row, "data").map(PostgresValue.bytes) ?? .null,
            ]
            #expect(back == values, "row \(row), seed \(seed)")
            if back != values { break }
        }
    }

    @Test("A value the column refuses, or text with NUL, loads no row; the connection stays usable")
    func failureLoadsNothing() throws {
        let (_, connection) = try freshDatabase()
        try connection.execute(Self.table)
        let good: [PostgresValue] = [.integer(1), .text("fine"), .integer(1), .real(1), .boolean(true), .bytes([1])]
        let duplicate: [PostgresValue] = [.integer(1), .text("again"), .null, .null, .null, .null]
        #expect(throws: PostgresError.self) { try connection.copyIn(Self.copy, rows: [good, duplicate]) }
        let withNUL: [PostgresValue] = [.integer(2), .text("a\u{0}b"), .null, .null, .null, .null]
        do {
            try connection.copyIn(Self.copy, rows: [good, withNUL])
            Issue.record("text with NUL was sent")
        } catch let error as PostgresError {
            #expect(error.kind == .invalidParameter && error.message.contains("NUL"), "\(error)")
        }
        #expect(try connection.query("SELECT count(*) AS n FROM sample").integer(0, "n") == 0)
        #expect(try connection.copyIn(Self.copy, rows: [good]) == 1)
        do {
            try connection.copyIn("COPY nowhere FROM STDIN", rows: [good])
            Issue.record("a COPY into a missing table ran")
        } catch let error as PostgresError {
            #expect(error.kind == .server && error.message.contains("nowhere"), "\(error)")
        }
        #expect(try connection.query("SELECT count(*) AS n FROM sample").integer(0, "n") == 1)
    }
}
