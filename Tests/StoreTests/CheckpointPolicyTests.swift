import Foundation
@testable import Store
import TestSupport
import Testing

@Suite("When the WAL is checkpointed")
struct CheckpointPolicyTests {
    @Test("The threshold is half the database's pages, between 10,000 and 40,000")
    func thresholds() {
        #expect(CheckpointPolicy.thresholdPages(databasePages: 0) == 10_000)
        #expect(CheckpointPolicy.thresholdPages(databasePages: 20_000) == 10_000)
        #expect(CheckpointPolicy.thresholdPages(databasePages: 50_000) == 25_000)
        #expect(CheckpointPolicy.thresholdPages(databasePages: 80_000) == 40_000)
        #expect(CheckpointPolicy.thresholdPages(databasePages: 10_000_000) == 40_000)
    }

    /// Commits `pages` rows of one page each.
    static func fill(_ store: Store, pages: Int) throws {
        try store.write { transaction in
            try transaction.execute("CREATE TABLE IF NOT EXISTS filler (bytes BLOB)")
            try transaction.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(pages))
                INSERT INTO filler SELECT zeroblob(3500) FROM n
                """)
        }
    }

    @Test("A commit checkpoints once the WAL passes the threshold for the database's size on disk; at rest the WAL is cut to 40 MB")
    func checkpointsFollowTheDatabaseSize() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try TestSchema.openStore(at: path)
        defer { store.close() }
        func bytes(_ file: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue ?? 0
        }
        func databasePages() throws -> Int { try bytes(path) / 4096 }
        func walBytes() throws -> Int { try bytes(path + "-wal") }
        // A small database: 12,000 pages in the WAL pass the minimum, and are copied over.
        let empty = try databasePages()
        try Self.fill(store, pages: 12_000)
        let afterFirst = try databasePages()
        #expect(empty < 100 && afterFirst >= 12_000, "database \(empty) → \(afterFirst) pages")
        // Now the threshold is half of ~12,000 pages, still the minimum: 9,000 pages stay in the WAL
        // (which started over, and was cut to 40 MB at that point).
        try Self.fill(store, pages: 9_000)
        #expect(try databasePages() == afterFirst)
        #expect(try walBytes() <= CheckpointPolicy.restingWALBytes)
        // A larger database: at ~24,000 pages the threshold is ~12,000, so a WAL of 11,000
        // pages is not copied yet, and one of 13,000 is.
        try Self.fill(store, pages: 3_000)
        let large = try databasePages()
        #expect(large >= 24_000, "\(large) pages")
        try Self.fill(store, pages: 11_000)
        #expect(try databasePages() == large)
        try Self.fill(store, pages: 2_000)
        #expect(try databasePages() >= large + 13_000)
    }
}
