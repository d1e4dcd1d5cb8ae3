import Foundation
import PostgreSQL
import Store
import TestSupport
import Testing

/// The order of `localizedStandard` as bytes: what a store that cannot call Swift to sort
/// (PostgreSQL) orders by, and must order as SQLite's collation does.
@Suite("Sort keys in PostgreSQL", .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct SortKeyOrderTests {
    static let seed: UInt64 = 20_131_104

    @Test("The collation tests' 10,000 strings order identically in PostgreSQL by their sort keys (bytea, through an index) and in SQLite by the collation")
    func sameOrderInBothStores() throws {
        let titles = generatedTitles(count: 10_000, seed: Self.seed) + ["11", "\u{FF11}1", "1\u{FF12}", "Caf\u{E9}", "Cafe\u{301}", "a1", "a01"]
        let store = try makeMemoryStore()
        try store.write { transaction in
            for (index, title) in titles.enumerated() { try transaction.inserted(Photo(flickrID: "\(index)", title: title)) }
        }
        let sqlite = try store.read { try $0.rows("SELECT flickrID FROM Photo ORDER BY title COLLATE localizedStandard, id").compactMap { $0[0].string } }

        let connection = try PostgresConnection(try PostgresTestServer.shared().makeDatabase("sortkeys"))
        _ = try connection.execute("CREATE TABLE photo (flickr_id text PRIMARY KEY, title text NOT NULL, title_key bytea NOT NULL)")
        _ = try connection.execute("CREATE INDEX photo_title_key ON photo (title_key, flickr_id)")
        try connection.transaction(.readCommitted) { transaction in
            for (index, title) in titles.enumerated() {
                try transaction.query("INSERT INTO photo VALUES ($1, $2, $3)",
                                      [.text("\(index)"), .text(title), .bytes(Collation.localizedStandardSortKey(title))])
            }
        }
        // Flickr ids as the tie-break in both: SQLite's by row id, inserted in the same order.
        _ = try connection.execute("SET enable_seqscan = off")
        let rows = try connection.query("SELECT flickr_id FROM photo ORDER BY title_key, flickr_id::bigint")
        let postgres = try (0..<rows.rows.count).compactMap { try rows.text($0, "flickr_id") }
        let first = zip(sqlite, postgres).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(postgres.count == titles.count && first == nil,
                "seed \(Self.seed): first difference at \(first?.offset ?? -1): SQLite \(first.map { titles[Int($0.element.0) ?? 0] }.debugDescription), PostgreSQL \(first.map { titles[Int($0.element.1) ?? 0] }.debugDescription)")
    }
}
