import Foundation
@testable import Store
import StoreTestSupport
import Testing

/// Pairs of printable-ASCII strings of the kinds that decide the fast path: every
/// punctuation character, digit runs with and without leading zeros, shared prefixes, and
/// the same text in other cases.
func generatedASCIIPairs(count: Int, seed: UInt64) -> [(String, String)] {
    var random = SeededGenerator(seed: seed)
    let printable = (0x20...0x7E).map { Character(Unicode.Scalar(UInt8($0))) }
    let alphabets: [[Character]] = [printable, Array("aAbBzZ09 _-.,'!$~()1"), Array("ab01 "), Array("0001aA"), Array("IMG 0123456789")]
    func text() -> String {
        let alphabet = alphabets[Int.random(in: 0..<alphabets.count, using: &random)]
        return String((0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] })
    }
    return (0..<count).map { _ in
        let left = text()
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return (left, left + text())
        case 1: return (left, String(left.map { Bool.random(using: &random) ? Character($0.uppercased()) : $0 }))
        default: return (left, text())
        }
    }
}

@Suite("localizedStandard without Foundation for ASCII")
struct LocalizedStandardASCIITests {
    static let seed: UInt64 = 20_261_201

    private func fastOrder(_ left: String, _ right: String) -> ComparisonResult? {
        var left = left, right = right
        return left.withUTF8 { leftBytes in right.withUTF8 { LocalizedStandardASCII.compare(leftBytes, $0) } }
    }

    @Test("Where it decides, it gives Foundation's answer (200,000 generated pairs)")
    func agreesWithFoundation() {
        var decided = 0, undecided = 0
        var disagreements: [String] = []
        for (left, right) in generatedASCIIPairs(count: 200_000, seed: Self.seed) {
            guard let fast = fastOrder(left, right) else {
                undecided += 1
                continue
            }
            decided += 1
            if fast != left.localizedStandardCompare(right) {
                disagreements.append("\(left.debugDescription) vs \(right.debugDescription): fast \(fast.rawValue), Foundation \(left.localizedStandardCompare(right).rawValue)")
            }
        }
        #expect(disagreements.isEmpty, "seed \(Self.seed): \(disagreements.prefix(5))")
        // Most pairs differ beyond case; if few were decided the check above would say little.
        #expect(decided > 150_000, "decided \(decided), left to Foundation \(undecided)")
        #expect(undecided > 1_000, "the generator should also make pairs that differ only in case or leading zeros")
    }

    @Test("Ties at the first level, and anything not printable ASCII, are left to Foundation")
    func leavesTiesToFoundation() {
        #expect(fastOrder("IMG 1", "img 1") == nil)
        #expect(fastOrder("a1", "a01") == nil)
        #expect(fastOrder("café", "cafe") == nil)
        #expect(fastOrder("ab€", "ac") == nil)
        #expect(fastOrder("tab\there", "tab here") == nil)
        #expect(fastOrder("IMG 2", "IMG 10") == .orderedAscending)
        #expect(fastOrder("a-b", "ab") == .orderedAscending)
        #expect(fastOrder("Zebra", "apple") == .orderedDescending)
        #expect(fastOrder("x", "x0") == .orderedAscending)
    }

    @Test("The collation still equals Foundation on the pairs the fast path leaves")
    func collationOnTies() {
        for (left, right) in [("IMG 1", "img 1"), ("a1", "a01"), ("aB", "Ab"), ("0", "00")] {
            #expect(Collation.localizedStandard.compare(left, right) == left.localizedStandardCompare(right), "\(left) vs \(right)")
        }
    }
}
