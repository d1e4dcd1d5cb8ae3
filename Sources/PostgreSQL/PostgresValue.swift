import Foundation

/// A value bound to a statement's `$n` parameter.
///
/// Text, numbers and booleans travel in PostgreSQL's text format, which every column type
/// parses; bytes travel in binary format, so a `bytea` arrives exactly as given.
public enum PostgresValue: Sendable, Hashable {
    case null
    case text(String)
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case bytes([UInt8])

    /// The parameter as libpq takes it: its bytes (nil for NULL) and format (0 text, 1 binary).
    var wireForm: (bytes: [UInt8]?, format: Int32) {
        switch self {
        case .null: return (nil, 0)
        case .text(let text): return (Array(text.utf8), 0)
        case .integer(let value): return (Array(String(value).utf8), 0)
        case .real(let value): return (Array(Self.text(of: value).utf8), 0)
        case .boolean(let value): return (Array((value ? "t" : "f").utf8), 0)
        case .bytes(let bytes): return (bytes, 1)
        }
    }

    /// A double in the text PostgreSQL's float8 input reads back to the same value.
    private static func text(of value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "Infinity" : "-Infinity" }
        return "\(value)"
    }
}

extension PostgresValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(nilLiteral: ()) { self = .null }
}
