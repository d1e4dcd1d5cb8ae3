import Foundation
import StoreTestSupport
import Testing
@testable import topregions

/// The tool's JSON is a public contract: the hand-written writer must give exactly what
/// `JSONSerialization` gave before it.
@Suite("The tool's JSON text")
struct JSONTextTests {
    private func serialization(_ value: Any) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    @Test("Numbers, strings with every escape, booleans, null, nesting: the same text as JSONSerialization")
    func sameAsSerialization() throws {
        let doubles: [Double] = [1.0, 1.5, 0.1, 1e21, 1e-7, 37.7749, -122.4194, 1_796_088_208.734, 123_456_789_012, 2.5e15, 1e16, -0.0, .leastNonzeroMagnitude]
        let strings = ["", "plain", "a/b", "quote \" backslash \\", "\u{1}\u{1F}\u{7F}", "\n\r\t\u{8}\u{C}", "é東京😀", "\u{2028}\u{2029}", "e\u{301}"]
        let value: [String: Any] = [
            "doubles": doubles, "strings": strings, "ints": [0, -7, Int.max, Int.min], "flags": [true, false], "null": NSNull(),
            "nested": [["b": 1, "a": [["z": "last", "y": NSNull()]]], [:] as [String: Any], [] as [Any]],
            "zeta": 1, "Alpha": 2, "alpha": 3, "_": 4, "a10": 5, "a2": 6, "é": 7, "e": 8, "Z": 9, "photo_id": 10, "photoID": 11, "x-y": 12, "x y": 13, "東京": 14,
        ]
        let ours = JSONText.of(value), theirs = try serialization(value)
        #expect(ours == theirs, "\n\(ours)\n\(theirs)")
        for double in doubles { #expect(JSONText.of(double) == (try serialization(double)), "\(double)") }
        for string in strings { #expect(JSONText.of(string) == (try serialization(string)), "\(string.debugDescription)") }
    }

    @Test("Generated documents of the tool's shapes: the same text as JSONSerialization")
    func generatedDocuments() throws {
        var random = SeededGenerator(seed: 6_502)
        let words = ["Yucatán", "Capital Region", "東京", "", "a\"b", "IMG 0042", "😀 on the roof", "\t"]
        for _ in 0..<500 {
            let rows: [[String: Any]] = (0..<Int.random(in: 0...5, using: &random)).map { index in
                ["rank": index + 1, "name": words[Int.random(in: 0..<words.count, using: &random)],
                 "latitude": Double.random(in: -90...90, using: &random), "photos": Int.random(in: 0...100_000, using: &random),
                 "favorite": Bool.random(using: &random), "viewed": Bool.random(using: &random) ? NSNull() : Double(Int.random(in: 0...2_000_000_000, using: &random))]
            }
            #expect(JSONText.of(rows) == (try serialization(rows)))
        }
    }

    @Test("An optional is its value or null")
    func optionals() {
        let present: Int? = 3, absent: String? = nil
        #expect(JSONText.of(["a": present as Any, "b": absent as Any]) == #"{"a":3,"b":null}"#)
    }
}
