import Foundation

/// A value as SQLite stores it: the five storage classes.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var int64: Int64? {
        switch self {
        case .integer(let value): return value
        case .real(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    public var double: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .real(let value): return value
        default: return nil
        }
    }

    public var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    public var bytes: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }
}

/// A Swift value that can be stored in a column.
public protocol SQLValueConvertible: Sendable {
    var sqlValue: SQLValue { get }
}

extension SQLValue: SQLValueConvertible {
    public var sqlValue: SQLValue { self }
}
extension Int64: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(self) }
}
extension Int: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}
extension Int32: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}
extension Bool: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
}
extension Double: SQLValueConvertible {
    public var sqlValue: SQLValue { .real(self) }
}
extension String: SQLValueConvertible {
    public var sqlValue: SQLValue { .text(self) }
}
extension Substring: SQLValueConvertible {
    public var sqlValue: SQLValue { .text(String(self)) }
}
extension Date: SQLValueConvertible {
    /// Dates are stored as seconds since 1970 (REAL), which sort and compare in SQL.
    public var sqlValue: SQLValue { .real(timeIntervalSince1970) }
}
extension Data: SQLValueConvertible {
    public var sqlValue: SQLValue { .blob([UInt8](self)) }
}
extension Array: SQLValueConvertible where Element == UInt8 {
    public var sqlValue: SQLValue { .blob(self) }
}
extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    public var sqlValue: SQLValue {
        switch self {
        case .none: return .null
        case .some(let wrapped): return wrapped.sqlValue
        }
    }
}
