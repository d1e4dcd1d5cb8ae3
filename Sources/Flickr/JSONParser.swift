import Foundation

/// A strict RFC 8259 JSON parser over UTF-8 bytes, producing `JSONValue`.
///
/// Strict means: no comments, no trailing commas, no NaN or Infinity, no control
/// characters or invalid UTF-8 inside strings, no lone surrogates in `\u` escapes, nothing
/// but whitespace after the value, and at most `maximumDepth` nested arrays and objects.
/// Every refusal names what was wrong and the byte offset where it was found. A leading
/// UTF-8 byte order mark is skipped.
/// Duplicate keys keep the last value, as `JSONSerialization` does.
struct JSONParser {
    struct Error: Swift.Error, CustomStringConvertible, Equatable {
        var reason: String
        var offset: Int
        var description: String { "\(reason) at byte \(offset)" }
    }

    static let maximumDepth = 512

    static func parse(_ data: Data) throws(Error) -> JSONValue {
        let result: Result<JSONValue, Error> = data.withUnsafeBytes { raw in
            var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self))
            return Result { () throws(Error) in try parser.parseDocument() }
        }
        return try result.get()
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var offset = 0
    private var depth = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private mutating func parseDocument() throws(Error) -> JSONValue {
        // RFC 8259 lets a parser ignore a UTF-8 byte order mark.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { offset = 3 }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard offset == bytes.count else { throw failure("unexpected \(describe(bytes[offset])) after the JSON value") }
        return value
    }

    // MARK: Values

    private mutating func parseValue() throws(Error) -> JSONValue {
        guard offset < bytes.count else { throw failure("the document ends where a value was expected") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case let byte: throw failure("unexpected \(describe(byte)) where a value was expected")
        }
    }

    private mutating func parseObject() throws(Error) -> JSONValue {
        try enterContainer()
        defer { depth -= 1 }
        offset += 1
        var members = JSONObject()
        skipWhitespace()
        if try consumeIf(UInt8(ascii: "}"), inside: "an object") { return .object(members) }
        while true {
            skipWhitespace()
            guard offset < bytes.count else { throw failure("the document ends inside an object") }
            guard bytes[offset] == UInt8(ascii: "\"") else { throw failure("unexpected \(describe(bytes[offset])) where an object key was expected") }
            let key = try parseString()
            skipWhitespace()
            guard try consumeIf(UInt8(ascii: ":"), inside: "an object") else {
                throw failure("unexpected \(describe(bytes[offset])) after an object key, expected ':'")
            }
            skipWhitespace()
            members.append(key, try parseValue())
            skipWhitespace()
            if try consumeIf(UInt8(ascii: ","), inside: "an object") { continue }
            if try consumeIf(UInt8(ascii: "}"), inside: "an object") { break }
            throw failure("unexpected \(describe(bytes[offset])) in an object, expected ',' or '}'")
        }
        return .object(members)
    }

    private mutating func parseArray() throws(Error) -> JSONValue {
        try enterContainer()
        defer { depth -= 1 }
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try consumeIf(UInt8(ascii: "]"), inside: "an array") { return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            if try consumeIf(UInt8(ascii: ","), inside: "an array") { continue }
            if try consumeIf(UInt8(ascii: "]"), inside: "an array") { break }
            throw failure("unexpected \(describe(bytes[offset])) in an array, expected ',' or ']'")
        }
        return .array(elements)
    }

    private mutating func enterContainer() throws(Error) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw failure("arrays and objects nest deeper than \(Self.maximumDepth)") }
    }

    // MARK: Strings

    /// A string starting at the opening quote. Runs without escapes are copied in one piece;
    /// `pieces` gathers the UTF-8 only once there is an escape (every escape adds a byte).
    private mutating func parseString() throws(Error) -> String {
        let start = offset
        offset += 1
        var runStart = offset
        var isASCII = true
        var pieces: [UInt8] = []
        while true {
            if !skipPlainStringBytes() { isASCII = false }
            guard offset < bytes.count else { offset = start; throw failure("the document ends inside a string that starts") }
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                if pieces.isEmpty { pieces.reserveCapacity(offset - runStart + 16) }
                pieces.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<offset]))
                try appendEscape(to: &pieces)
                runStart = offset
                continue
            }
            throw failure("a control character (\(describe(byte))) inside a string")
        }
        let run = UnsafeBufferPointer(rebasing: bytes[runStart..<offset])
        offset += 1
        if pieces.isEmpty { return try makeString(run, isASCII: isASCII, start: start) }
        pieces.append(contentsOf: run)
        return try pieces.withUnsafeBufferPointer { (all) throws(Error) in try makeString(all, isASCII: isASCII, start: start) }
    }

    /// Moves past the string's bytes up to the next quote, backslash or control character
    /// (or the end); returns whether they were all ASCII. In locals, in one tight loop: this
    /// is where parsing a page spends most of its time.
    private mutating func skipPlainStringBytes() -> Bool {
        var index = offset
        var allBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { break }
            allBits |= byte
            index += 1
        }
        offset = index
        return allBits < 0x80
    }

    private func makeString(_ utf8: UnsafeBufferPointer<UInt8>, isASCII: Bool, start: Int) throws(Error) -> String {
        if isASCII { return String(decoding: utf8, as: UTF8.self) }
        guard let text = String(validating: utf8, as: UTF8.self) else {
            throw Error(reason: "invalid UTF-8 in the string", offset: start)
        }
        return text
    }

    /// Reads the escape at `offset` (a backslash) and appends its UTF-8.
    private mutating func appendEscape(to utf8: inout [UInt8]) throws(Error) {
        guard offset + 1 < bytes.count else { throw failure("the document ends inside an escape") }
        let letter = bytes[offset + 1]
        offset += 2
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(letter)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"): utf8.append(contentsOf: String(Character(try unicodeEscape())).utf8)
        default:
            offset -= 2
            throw failure("an invalid escape \\\(describe(letter)) inside a string")
        }
    }

    /// The scalar of `\uXXXX` (the `\u` already read), joining a surrogate pair.
    private mutating func unicodeEscape() throws(Error) -> Unicode.Scalar {
        let escapeStart = offset - 2
        let first = try hexQuad()
        if (0xDC00...0xDFFF).contains(first) {
            throw Error(reason: "a lone low surrogate \\u\(String(first, radix: 16)) in a string", offset: escapeStart)
        }
        guard (0xD800...0xDBFF).contains(first) else {
            // Not a surrogate, so always a valid scalar.
            return Unicode.Scalar(first) ?? "\u{FFFD}"
        }
        guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
            throw Error(reason: "a high surrogate \\u\(String(first, radix: 16)) without its low surrogate", offset: escapeStart)
        }
        offset += 2
        let second = try hexQuad()
        guard (0xDC00...0xDFFF).contains(second) else {
            throw Error(reason: "a high surrogate \\u\(String(first, radix: 16)) followed by \\u\(String(second, radix: 16))", offset: escapeStart)
        }
        let value = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
        return Unicode.Scalar(value) ?? "\u{FFFD}"
    }

    private mutating func hexQuad() throws(Error) -> UInt16 {
        guard offset + 4 <= bytes.count else { throw failure("the document ends inside a \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("\(describe(byte)) is not a hex digit in a \\u escape")
            }
            value = value << 4 | UInt16(digit)
            offset += 1
        }
        return value
    }

    // MARK: Numbers

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`: an exact `integer` when there is
    /// no fraction or exponent and it fits in 64 bits, otherwise a `number`.
    private mutating func parseNumber() throws(Error) -> JSONValue {
        let start = offset
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard offset < bytes.count, isDigit(bytes[offset]) else { throw failure("a number without digits") }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
            if offset < bytes.count, isDigit(bytes[offset]) { throw failure("a number with a leading zero") }
        } else {
            skipDigits()
        }
        var isInteger = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw failure("a number with no digits after its decimal point") }
            skipDigits()
        }
        if offset < bytes.count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw failure("a number with no digits in its exponent") }
            skipDigits()
        }
        let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isInteger, let integer = Int64(literal) { return .integer(integer) }
        guard !isInteger, let number = Double(literal), number.isFinite else { return .numberText(literal) }
        return .number(number)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
    }

    // MARK: Small pieces

    /// JSON's whitespace: space, line feed, carriage return, tab.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count, Self.isWhitespace(bytes[offset]) { offset += 1 }
    }

    /// Consumes `byte` when it is next; throws when the document has ended.
    private mutating func consumeIf(_ byte: UInt8, inside container: String) throws(Error) -> Bool {
        guard offset < bytes.count else { throw failure("the document ends inside \(container)") }
        guard bytes[offset] == byte else { return false }
        offset += 1
        return true
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Error) {
        let count = literal.utf8CodeUnitCount
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        guard offset + count <= bytes.count, UnsafeBufferPointer(rebasing: bytes[offset..<offset + count]).elementsEqual(expected) else {
            throw failure("unexpected \(describe(bytes[offset])) where a value was expected")
        }
        offset += count
    }

    private func failure(_ reason: String) -> Error {
        Error(reason: reason, offset: offset)
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }
}
