import Foundation

/// A value as SQLite stores it: the five storage classes.
public enum SQLValue: Sendable, Hashable {
    /// NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An 8-byte IEEE floating-point number.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes, as stored.
    case blob([UInt8])

    /// Whether the value is NULL.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The integer, or a real that is a whole number; nil for anything else.
    public var int64: Int64? {
        switch self {
        case .integer(let value): return value
        case .real(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// The number, integers included; nil for anything else.
    public var double: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .real(let value): return value
        default: return nil
        }
    }

    /// The text; nil for anything else (numbers are not converted).
    public var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The blob's bytes; nil for anything else (text is not converted).
    public var bytes: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }
}

/// A Swift value that can be stored in a column.
public protocol SQLValueConvertible: Sendable {
    /// The value as stored in a column.
    var sqlValue: SQLValue { get }
}

extension SQLValue: SQLValueConvertible {
    /// The value itself.
    public var sqlValue: SQLValue { self }
}
extension Int64: SQLValueConvertible {
    /// An INTEGER.
    public var sqlValue: SQLValue { .integer(self) }
}
extension Int: SQLValueConvertible {
    /// An INTEGER.
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}
extension Int32: SQLValueConvertible {
    /// An INTEGER.
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}
extension Bool: SQLValueConvertible {
    /// An INTEGER: 1 for true, 0 for false.
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
}
extension Double: SQLValueConvertible {
    /// A REAL.
    public var sqlValue: SQLValue { .real(self) }
}
extension String: SQLValueConvertible {
    /// TEXT.
    public var sqlValue: SQLValue { .text(self) }
}
extension Substring: SQLValueConvertible {
    /// TEXT.
    public var sqlValue: SQLValue { .text(String(self)) }
}
extension Date: SQLValueConvertible {
    /// Dates are stored as seconds since 1970 (REAL), which sort and compare in SQL.
    public var sqlValue: SQLValue { .real(timeIntervalSince1970) }
}
extension Data: SQLValueConvertible {
    /// A BLOB of the bytes.
    public var sqlValue: SQLValue { .blob([UInt8](self)) }
}
extension Array: SQLValueConvertible where Element == UInt8 {
    /// A BLOB of the bytes.
    public var sqlValue: SQLValue { .blob(self) }
}
extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    /// NULL for nil, else the wrapped value's.
    public var sqlValue: SQLValue {
        switch self {
        case .none: return .null
        case .some(let wrapped): return wrapped.sqlValue
        }
    }
}
