import Foundation
import PostgresStore
import Store
import TestSupport
import Testing

@Suite("Crash consistency", .serialized)
struct CrashConsistencyTests {
    static let kills = 50

    @Test("A writer killed with SIGKILL 50 times at random moments never leaves a partial or lost transaction",
          arguments: StoreKind.available)
    func killedWriter(on kind: StoreKind) throws {
        let directory = try TemporaryDirectory()
        let path = kind == .sqlite ? directory.path("store.sqlite") : try PostgresTestServer.shared().makeDatabase("crash")
        var random = SeededGenerator(seed: testSeed("CRASH_SEED", test: "crash test"))
        let seed = random.state
        var reportedCommitted: Set<Int64> = []
        var killsAfterACommit = 0
        for round in 0..<Self.kills {
            let child = try FixtureProcess(["crash", path])
            // Half the rounds kill at any moment (even while the store opens); half wait for
            // a commit first so the kill lands in the middle of steady writing.
            if round % 2 == 1 {
                _ = eventually(timeout: 10) { !child.committedBatches.isEmpty }
            }
            Thread.sleep(forTimeInterval: Double(Int.random(in: 0...250, using: &random)) / 1000)
            child.kill()
            let committed = child.committedBatches
            if !committed.isEmpty { killsAfterACommit += 1 }
            reportedCommitted.formUnion(committed)
            if kind == .sqlite {
                try verify(path: path, reportedCommitted: reportedCommitted, round: round, seed: seed)
            } else {
                try verifyPostgres(location: path, reportedCommitted: reportedCommitted, round: round, seed: seed)
            }
        }
        #expect(killsAfterACommit >= Self.kills / 2, "most kills should land while transactions are being written")
        #expect(reportedCommitted.count > Self.kills)
    }

    @Test("A bulk loader killed with SIGKILL 20 times, while deferring, loading or building, never loses an index or a load")
    func killedBulkLoader() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let original = try Self.photoIndexStatements(path)
        var random = SeededGenerator(seed: testSeed("CRASH_SEED", test: "crash test"))
        let seed = random.state
        var loaded: Set<Int64> = [], killedUnbuilt = 0, builds = 0
        for round in 0..<20 {
            let child = try FixtureProcess(["bulk", path])
            _ = eventually(timeout: 10) { child.outputLines.contains("deferred") }
            Thread.sleep(forTimeInterval: Double(Int.random(in: 0...400, using: &random)) / 1000)
            child.kill()
            let lines = child.outputLines
            loaded.formUnion(lines.compactMap { $0.hasPrefix("loaded ") ? Int64($0.dropFirst(7)) : nil })
            builds += lines.filter { $0 == "built" }.count
            let context = "round \(round), seed \(seed)"
            let store = try TestSchema.openStore(at: path)
            defer { store.close() }
            #expect(try store.integrityCheck() == ["ok"], "\(context)")
            // Each index is either in the file or noted, never both, never neither.
            let present = try Self.photoIndexStatements(path), noted = try store.deferredIndexStatements()
            #expect(Set(present).isDisjoint(with: noted) && Set(present).union(noted) == Set(original), "\(context): \(present) and \(noted)")
            if !noted.isEmpty { killedUnbuilt += 1 }
            let photos = try store.read { try $0.scalar("SELECT count(*) FROM Photo")?.int64 ?? 0 }
            #expect(photos % 200 == 0 && photos >= Int64(loaded.count) * 200, "\(context): \(photos) photos, \(loaded.count) loads reported")
        }
        let store = try TestSchema.openStore(at: path)
        defer { store.close() }
        try store.buildDeferredIndexes()
        #expect(try Self.photoIndexStatements(path) == original)
        #expect(try store.integrityCheck() == ["ok"])
        #expect(killedUnbuilt >= 5 && builds >= 1, "kills should land while deferred, and loads should finish: \(killedUnbuilt), \(builds)")
    }

    /// The SQL of Photo's declared indexes in the file at `path`, sorted.
    private static func photoIndexStatements(_ path: String) throws -> [String] {
        let store = try TestSchema.openStore(at: path)
        defer { store.close() }
        return try DeferredIndexesTests.indexes(store).values.compactMap { $0 }.sorted()
    }

    /// What `verify` checks of the batches, in the PostgreSQL store (which keeps no history
    /// yet, and checks its own pages).
    private func verifyPostgres(location: String, reportedCommitted: Set<Int64>, round: Int, seed: UInt64) throws {
        let context = "round \(round), seed \(seed)"
        let database = try PostgresStore(location: location, schema: TestSchema.postgres)
        guard try database.state() == .current else {
            #expect(reportedCommitted.isEmpty, "\(context): batches were reported before the tables existed")
            database.close()
            return
        }
        let store = try PostgresRecordStore(database)
        defer { store.close() }
        let batches = try store.read { try $0.rows("SELECT batch, count(*) FROM Entry GROUP BY batch") }
        _ = checkBatches(batches, reportedCommitted: reportedCommitted, context: context)
    }

    /// Checks the stored batches (rows of batch, count): none partial, none reported
    /// committed missing, numbered 1, 2, 3… (one may be committed but not yet reported).
    /// Returns the batches present.
    private func checkBatches(_ batches: [Row], reportedCommitted: Set<Int64>, context: String) -> Set<Int64> {
        let present = Set(batches.compactMap { $0[0].int64 })
        let partial = batches.filter { $0[1].int64 != Int64(TestSchema.partsPerBatch) }
        #expect(partial.isEmpty, "\(context): partial batches \(partial.map { $0[0] })")
        let lost = reportedCommitted.subtracting(present)
        #expect(lost.isEmpty, "\(context): committed batches missing \(lost.sorted())")
        #expect(present.isEmpty || present == Set(1...Int64(present.count)), "\(context): batches are not contiguous")
        return present
    }

    private func verify(path: String, reportedCommitted: Set<Int64>, round: Int, seed: UInt64) throws {
        let context = "round \(round), seed \(seed)"
        let store = try TestSchema.openStore(at: path)
        defer { store.close() }
        #expect(try store.integrityCheck() == ["ok"], "\(context)")
        let (batches, historyEntries) = try store.read { context in
            let batches = try context.rows("SELECT batch, count(*), group_concat(id) FROM Entry GROUP BY batch")
            return (batches, try context.scalar("SELECT count(*) FROM store_history")?.int64 ?? -1)
        }
        let present = checkBatches(batches, reportedCommitted: reportedCommitted, context: context)
        #expect(historyEntries == Int64(present.count), "\(context): \(historyEntries) history entries for \(present.count) transactions")
        // Each history entry names exactly the rows of one batch.
        let history = try store.history(since: 0)
        let rowsByBatch = Dictionary(uniqueKeysWithValues: batches.compactMap { row -> (Set<Int64>, Bool)? in
            guard let ids = row[2].string else { return nil }
            return (Set(ids.split(separator: ",").compactMap { Int64($0) }), true)
        })
        #expect(history.allSatisfy { rowsByBatch[$0.changes["Entry"].inserted] == true }, "\(context): history and rows disagree")
    }
}
