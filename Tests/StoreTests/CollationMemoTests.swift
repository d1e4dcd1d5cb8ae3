import Foundation
@testable import Store
import TestSupport
import Testing

@Suite("The caseInsensitive collation's memo of Foundation's answers")
struct CollationMemoTests {
    /// Asks `memo` about `left` and `right`, answering `answer` when it has to compute;
    /// returns the memo's result and whether it computed.
    static func ask(_ memo: CollationMemo, _ left: String, _ right: String,
                    answer: ComparisonResult = .orderedAscending) -> (result: ComparisonResult, computed: Bool) {
        var computed = false
        let leftBytes = Array(left.utf8), rightBytes = Array(right.utf8)
        let result = leftBytes.withUnsafeBufferPointer { leftBuffer in
            rightBytes.withUnsafeBufferPointer { rightBuffer in
                memo.result(leftBuffer, rightBuffer) {
                    computed = true
                    return answer
                }
            }
        }
        return (result, computed)
    }

    @Test("A pair is computed once, then answered from the memo with the answer it had")
    func repeatedPairIsRemembered() {
        let memo = CollationMemo()
        #expect(Self.ask(memo, "Été à Paris", "Ñandú", answer: .orderedDescending) == (.orderedDescending, true))
        #expect(Self.ask(memo, "Été à Paris", "Ñandú", answer: .orderedAscending) == (.orderedDescending, false))
        #expect(memo.hits == 1 && memo.misses == 1)
    }

    @Test("An entry serves only the same bytes in the same order and split")
    func entriesAreExact() {
        let memo = CollationMemo()
        _ = Self.ask(memo, "ab", "c", answer: .orderedDescending)
        // The same bytes split differently, the pair the other way round, and a pair that
        // differs in one byte are other pairs: each is computed.
        #expect(Self.ask(memo, "a", "bc").computed)
        #expect(Self.ask(memo, "c", "ab").computed)
        #expect(Self.ask(memo, "ab", "d").computed)
        #expect(Self.ask(memo, "", "").computed)
        #expect(Self.ask(memo, "", "").computed == false)
    }

    @Test("A pair longer than the memo keeps is computed every time")
    func longPairsAreNotKept() {
        let memo = CollationMemo()
        let long = String(repeating: "é", count: CollationMemo.longestPair)
        #expect(Self.ask(memo, long, "x").computed)
        #expect(Self.ask(memo, long, "x").computed)
        #expect(memo.hits == 0)
    }

    @Test("The memo stays within its slots: many more pairs than slots evict older ones, and answers stay right")
    func boundedAndStillRight() {
        let memo = CollationMemo()
        let pairs = (0..<(CollationMemo.slotCount * 3)).map { ("Café \($0) à", "Été \($0 * 7)") }
        for (left, right) in pairs { _ = Self.ask(memo, left, right, answer: left.count % 2 == 0 ? .orderedAscending : .orderedDescending) }
        var recomputed = 0
        for (left, right) in pairs {
            let (result, computed) = Self.ask(memo, left, right, answer: left.count % 2 == 0 ? .orderedAscending : .orderedDescending)
            #expect(result == (left.count % 2 == 0 ? .orderedAscending : .orderedDescending))
            if computed { recomputed += 1 }
        }
        // At most one pair per slot survives: at least two thirds had been pushed out.
        #expect(recomputed >= pairs.count - CollationMemo.slotCount)
    }

    @Test("SQL comparisons answered from the memo equal Foundation's, both ways round, on 2,000 pairs asked three times")
    func sqlAnswersFromTheMemoAgree() throws {
        let titles = generatedTitles(count: 2_000, seed: 41)
        var random = SeededGenerator(seed: 42)
        let pairs = (0..<2_000).map { _ in (titles[Int.random(in: 0..<titles.count, using: &random)], titles[Int.random(in: 0..<titles.count, using: &random)]) }
        let store = try makeMemoryStore()
        var disagreements: [String] = []
        try store.read { context in
            for round in 0..<3 {
                for (left, right) in pairs {
                    let row = try context.rows("SELECT (? COLLATE caseInsensitive) < ?, (? COLLATE caseInsensitive) < ?",
                                               [.text(left), .text(right), .text(right), .text(left)])[0]
                    let expected = Collation.caseInsensitive.compare(left, right)
                    let leftFirst = row[0].int64 == 1, rightFirst = row[1].int64 == 1
                    if leftFirst != (expected == .orderedAscending) || rightFirst != (expected == .orderedDescending) {
                        disagreements.append("round \(round): \(left.debugDescription) vs \(right.debugDescription)")
                    }
                }
            }
        }
        #expect(disagreements.count == 0, "\(disagreements.prefix(3))")
    }

    @Test("No connection lets SQLite's sorter use helper threads, which would call the memo at once: PRAGMA threads stays 0")
    func sorterHelperThreadsAreRefused() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.path("store.sqlite"), schema: Schema([]))
        defer { store.close() }
        #expect(throws: StoreError.self) { try store.write { try $0.execute("PRAGMA threads = 4") } }
        #expect(throws: StoreError.self) { try store.read { try $0.rows("PRAGMA threads = 2") } }
        #expect(try store.write { try $0.scalar("PRAGMA threads")?.int64 } == 0)
        #expect(try store.read { try $0.scalar("PRAGMA threads = 0")?.int64 } == 0)
    }
}
