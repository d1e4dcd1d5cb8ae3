@testable import Flickr
import Foundation
import TestSupport
import Testing

/// Random JSON trees and their text: the parser must give back the tree it was written from.
private struct JSONTreeGenerator {
    var random: SeededGenerator
    let stringPieces = ["a", "Z", " ", "é", "東京", "😀", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1F}", "\u{7F}", "Ω", "e\u{301}", "", "123"]

    mutating func value(depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 6 : 8), using: &random) {
        case 0: return .string(string())
        case 1: return .integer([0, 1, -1, Int64.max, Int64.min, Int64.random(in: -1_000_000...1_000_000, using: &random)][Int.random(in: 0..<6, using: &random)])
        case 2: return .number([0.5, -2.25, 1e-5, 6.02e23, Double.random(in: -1e9...1e9, using: &random)][Int.random(in: 0..<5, using: &random)])
        case 3: return .bool(Bool.random(using: &random))
        case 4: return .null
        case 5: return .string(string())
        case 6: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth: depth + 1) })
        default:
            var members = JSONObject()
            for _ in 0..<Int.random(in: 0...4, using: &random) { members.append(string(), value(depth: depth + 1)) }
            return .object(members)
        }
    }

    mutating func string() -> String {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in stringPieces[Int.random(in: 0..<stringPieces.count, using: &random)] }.joined()
    }

    mutating func whitespace() -> String {
        ["", "", " ", "\n", "\t ", "\r\n"][Int.random(in: 0..<6, using: &random)]
    }

    mutating func text(_ value: JSONValue) -> String {
        let ws = whitespace()
        switch value {
        case .string(let string): return ws + quoted(string)
        case .integer(let integer): return ws + String(integer)
        case .number(let number): return ws + "\(number)"
        case .numberText(let literal): return ws + literal
        case .bool(let flag): return ws + (flag ? "true" : "false")
        case .null: return ws + "null"
        case .array(let elements): return ws + "[" + elements.map { text($0) + whitespace() }.joined(separator: ",") + whitespace() + "]"
        case .object(let members):
            return ws + "{" + zip(members.keys, members.values).map { key, value in whitespace() + quoted(key) + whitespace() + ":" + text(value) }.joined(separator: ",") + whitespace() + "}"
        }
    }

    /// Escapes what must be escaped, and some of what may be, in every form JSON allows.
    mutating func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += Bool.random(using: &random) ? "\\t" : "\\u0009"
            case "/": out += Bool.random(using: &random) ? "\\/" : "/"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            case _ where scalar.value > 0xFFFF && Bool.random(using: &random):
                let offset = scalar.value - 0x10000
                out += String(format: "\\uD%03X\\u%04X", 0x800 + (offset >> 10), 0xDC00 + (offset & 0x3FF))
            case _ where (0x80...0xFFFF).contains(scalar.value) && Bool.random(using: &random): out += String(format: "\\u%04X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

@Suite("The JSON parser")
struct JSONParserTests {
    @Test("2,000 generated documents parse back to the trees they were written from, and JSONSerialization accepts them too")
    func roundTrips() throws {
        var generator = JSONTreeGenerator(random: SeededGenerator(seed: 8_259))
        for _ in 0..<2_000 {
            let tree = generator.value(depth: 0)
            let text = generator.text(tree) + generator.whitespace()
            let parsed = try JSONParser.parse(Data(text.utf8))
            #expect(parsed == tree, "\(text)")
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil, "not JSON: \(text)")
        }
    }

    @Test("Numbers: exact 64-bit integers, longer integers as their digits, the rest as doubles")
    func numbers() throws {
        #expect(try JSONParser.parse(Data("53012345678".utf8)) == .integer(53_012_345_678))
        #expect(try JSONParser.parse(Data("-9223372036854775808".utf8)) == .integer(.min))
        #expect(try JSONParser.parse(Data("9223372036854775808".utf8)) == .numberText("9223372036854775808"))
        #expect(try JSONParser.parse(Data("-0.5e-3".utf8)) == .number(-0.0005))
        #expect(try JSONParser.parse(Data("1E2".utf8)) == .number(100))
    }

    @Test("A UTF-8 byte order mark before the document is skipped")
    func byteOrderMark() throws {
        #expect(try JSONParser.parse(Data([0xEF, 0xBB, 0xBF]) + Data(#"{"stat": "ok"}"#.utf8)) == .object(["stat": .string("ok")]))
    }

    @Test("Duplicate keys keep the last value")
    func duplicateKeys() throws {
        let parsed = try JSONParser.parse(Data(#"{"a": 1, "b": 3, "a": 2}"#.utf8))
        #expect(parsed == .object(["a": .integer(2), "b": .integer(3)]))
        #expect(parsed["a"] == .integer(2))
        #expect(parsed["b"] == .integer(3))
        #expect(parsed["c"] == nil)
    }

    @Test("Invalid documents are refused with what was wrong and where", arguments: [
        ("", "ends where a value was expected", 0),
        ("{", "ends inside an object", 1),
        (#"{"a":1,}"#, "where an object key was expected", 7),
        ("[1,]", "where a value was expected", 3),
        ("[1 2]", "expected ',' or ']'", 3),
        (#"{"a" 1}"#, "expected ':'", 5),
        ("{1:2}", "where an object key was expected", 1),
        ("01", "leading zero", 1),
        ("1.", "no digits after its decimal point", 2),
        ("1e", "no digits in its exponent", 2),
        ("-", "a number without digits", 1),
        ("NaN", "where a value was expected", 0),
        ("tru", "where a value was expected", 0),
        ("'a'", "where a value was expected", 0),
        ("// comment\n1", "where a value was expected", 0),
        ("\"a\u{1}\"", "control character", 2),
        (#""\x""#, "invalid escape", 1),
        (#""\u12x4""#, "not a hex digit", 5),
        (#""\u12""#, "ends inside a \\u escape", 3),
        (#""\uD800""#, "without its low surrogate", 1),
        (#""\uD800\u0041""#, "followed by", 1),
        (#""\uDC00""#, "lone low surrogate", 1),
        (#""abc"#, "ends inside a string that starts", 0),
        ("[1] x", "after the JSON value", 4),
    ])
    func refusals(text: String, reason: String, offset: Int) {
        #expect {
            try JSONParser.parse(Data(text.utf8))
        } throws: { error in
            guard let error = error as? JSONParser.Error else { return false }
            return error.reason.contains(reason) && error.offset == offset
        }
    }

    @Test("Numbers that no Int64 or finite Double holds stay as the text sent", arguments: [
        "1180591620717411303424", "-99999999999999999999", "1e400", "-1E+999",
    ])
    func numbersKeptAsText(literal: String) throws {
        #expect(try JSONParser.parse(Data("[\(literal)]".utf8)) == .array([.numberText(literal)]))
    }

    @Test("Invalid UTF-8 inside a string is refused, not repaired")
    func invalidUTF8() {
        #expect(throws: JSONParser.Error(reason: "invalid UTF-8 in the string", offset: 1)) {
            try JSONParser.parse(Data([0x5B, 0x22, 0x61, 0xFF, 0x22, 0x5D]))
        }
    }

    @Test("Nesting deeper than 512 is refused; 512 is accepted")
    func depth() throws {
        let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try JSONParser.parse(Data(deepest.utf8)) }
        let tooDeep = "[" + deepest + "]"
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(Data(tooDeep.utf8)) }
    }

    @Test("Every truncation of a SampleData page is refused")
    func truncations() throws {
        let page = try Data(contentsOf: try #require(try SampleDataFiles.pageFiles(.json).sorted { $0.path < $1.path }.first))
        #expect(try JSONParser.parse(page).objectMembers?["photos"] != nil)
        for length in stride(from: 0, to: page.count - 1, by: 97) {
            #expect(throws: JSONParser.Error.self) { try JSONParser.parse(page.prefix(length)) }
        }
    }
}
