import Foundation
@testable import Store
import TestSupport
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

/// Pairs that share an ASCII beginning and go on with the text that could upset an ASCII
/// shortcut: combining marks, ignorable characters, digits of other scripts, ligatures.
func generatedMixedPairs(count: Int, seed: UInt64) -> [(String, String)] {
    var random = SeededGenerator(seed: seed)
    let ascii = Array(" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBcCxyzXYZ") + Array("IMG 0123456789")
    let others = ["é", "e\u{301}", "\u{301}", "\u{338}", "\u{200B}", "\u{AD}", "１", "٣", "²", "½", "Ω", "ω", "東京", "😀", "ß", "ﬁ",
                  "Å", "å", "ø", "Ⅻ", "\t", "\u{0}", "ǅ", "ı", "İ", "ŀ", "ĳ", "æ", "œ", "Þ", "\u{2060}", "\u{FE0F}", "ｱ", "\u{0483}",
                  "Café à ", "Été à ", "Straße in ", "京都の秋 ", "ÉCLAIR"]
    func asciiText(_ length: Int) -> String {
        String((0..<length).map { _ in ascii[Int.random(in: 0..<ascii.count, using: &random)] })
    }
    func mixedText() -> String {
        (0..<Int.random(in: 1...4, using: &random)).map { _ in
            Bool.random(using: &random) ? asciiText(Int.random(in: 0...5, using: &random)) : others[Int.random(in: 0..<others.count, using: &random)]
        }.joined()
    }
    return (0..<count).map { _ in
        // A shared beginning, in any script, then the text where they differ.
        let prefix = Bool.random(using: &random) ? asciiText(Int.random(in: 0...4, using: &random)) : mixedText()
        let left = prefix + asciiText(Int.random(in: 0...2, using: &random)) + mixedText()
        let right = Bool.random(using: &random) ? prefix + asciiText(Int.random(in: 0...2, using: &random)) + mixedText() : left + mixedText()
        return (left, right)
    }
}

@Suite("localizedStandard without Foundation for ASCII")
struct LocalizedStandardASCIITests {
    static let seed: UInt64 = 20_261_201

    private func fastOrder(_ left: String, _ right: String) -> ComparisonResult? {
        var left = left, right = right
        return left.withUTF8 { leftBytes in right.withUTF8 { LocalizedStandardASCII.compare(leftBytes, $0) } }
    }

    @Test("Where it decides, it gives the sort keys' (ICU's) answer (200,000 generated pairs)")
    func agreesWithSortKeys() {
        var decided = 0, undecided = 0
        var disagreements: [String] = []
        for (left, right) in generatedASCIIPairs(count: 200_000, seed: Self.seed) {
            guard let fast = fastOrder(left, right) else {
                undecided += 1
                continue
            }
            decided += 1
            if fast != sortKeyOrder(left, right) {
                disagreements.append("\(left.debugDescription) vs \(right.debugDescription): fast \(fast.rawValue), keys \(sortKeyOrder(left, right).rawValue)")
            }
        }
        #expect(disagreements.isEmpty, "seed \(Self.seed): \(disagreements.prefix(5))")
        // Most pairs differ beyond case; if few were decided the check above would say little.
        #expect(decided > 120_000, "decided \(decided), left to ICU \(undecided)")
        #expect(undecided > 1_000, "the generator should also make pairs that differ only in case or leading zeros")
    }

    @Test("An ASCII difference decides even after a shared non-ASCII beginning or before non-ASCII text (100,000 generated pairs)")
    func agreesWithSortKeysOnMixedText() {
        var decided = 0
        var disagreements: [String] = []
        for (left, right) in generatedMixedPairs(count: 100_000, seed: Self.seed &+ 1) {
            guard let fast = fastOrder(left, right) else { continue }
            decided += 1
            if fast != sortKeyOrder(left, right) {
                disagreements.append("\(left.debugDescription) vs \(right.debugDescription): fast \(fast.rawValue), keys \(sortKeyOrder(left, right).rawValue)")
            }
        }
        #expect(disagreements.isEmpty, "seed \(Self.seed &+ 1): \(disagreements.prefix(5))")
        #expect(decided > 10_000, "decided only \(decided)")
    }

    @Test("Ties at the first level, and anything not printable ASCII, are left to ICU")
    func leavesTiesToICU() {
        #expect(fastOrder("IMG 1", "img 1") == nil)
        #expect(fastOrder("a1", "a01") == nil)
        #expect(fastOrder("café", "cafe") == nil)
        #expect(fastOrder("ab€", "ac") == nil)
        #expect(fastOrder("tab\there", "tab here") == nil)
        #expect(fastOrder("IMG 2", "IMG 10") == .orderedAscending)
        #expect(fastOrder("a-b", "ab") == .orderedAscending)
        #expect(fastOrder("Zebra", "apple") == .orderedDescending)
        #expect(fastOrder("x", "x0") == .orderedAscending)
        #expect(fastOrder("Straße", "Stadt") == .orderedDescending)
        #expect(fastOrder("a\u{301}", "b") == nil, "a combining mark after the difference")
        #expect(fastOrder("1٣", "2") == nil, "an Arabic-Indic digit continuing the number")
        #expect(fastOrder("abc", "abc\u{200B}") == nil, "an ignorable character after a common prefix")
        #expect(fastOrder("Café à Taka", "Café à Raven") == .orderedDescending, "an identical non-ASCII beginning is skipped")
        #expect(fastOrder("東京の夜 4901", "東京の夜 4902") == .orderedAscending)
        #expect(fastOrder("東京の夜4901", "東京の夜4902") == nil, "the shared beginning must end on an ASCII non-digit")
    }

    @Test("The collation equals the sort keys, and Foundation, on the pairs the fast path leaves")
    func collationOnTies() {
        for (left, right) in [("IMG 1", "img 1"), ("a1", "a01"), ("aB", "Ab"), ("0", "00")] {
            #expect(Collation.localizedStandard.compare(left, right) == sortKeyOrder(left, right), "\(left) vs \(right)")
            #expect(Collation.localizedStandard.compare(left, right) == foundationLocalizedStandard(left, right), "\(left) vs \(right)")
        }
    }
}
