import CSQLite
import Foundation

/// A Swift type a column holds: how it is stored, and read back. The store's records
/// declare their columns with such types (`TableRecord`).
public protocol ColumnValue: SQLValueConvertible {
    /// The column's storage type.
    static var columnType: ColumnType { get }
    /// Whether NULL is one of its values (an `Optional`); the column is then nullable.
    static var acceptsNull: Bool { get }
    /// The value stored in `column`; throws a decoding error naming the column when the
    /// stored value is of another type (or NULL for a type that has none).
    init(stored value: SQLValue, column: String) throws
    /// The value in a fetched row's `index`th column, read without an intermediate
    /// `SQLValue` (the fetch's hot path).
    static func read(_ row: ColumnReader, _ index: Int32, column: String) throws -> Self
}

extension ColumnValue {
    /// By default a type has no NULL: its column is NOT NULL.
    public static var acceptsNull: Bool { false }

    /// By default, reads the column as an `SQLValue`, then decodes it.
    public static func read(_ row: ColumnReader, _ index: Int32, column: String) throws -> Self {
        try Self(stored: row.value(index), column: column)
    }
}

/// A decoding error: what a column should hold, and what it held.
func columnMismatch(_ column: String, _ expected: String, _ found: SQLValue) -> StoreError {
    let what: String
    switch found {
    case .null: what = "NULL"
    case .integer: what = "an integer"
    case .real: what = "a real number"
    case .text: what = "text"
    case .blob: what = "a blob"
    }
    return StoreError(.decoding, "Column \(column) should hold \(expected), found \(what)")
}

extension String: ColumnValue {
    /// Stored as TEXT.
    public static var columnType: ColumnType { .text }
    /// The stored text; anything else throws a decoding error.
    public init(stored value: SQLValue, column: String) throws {
        guard case .text(let text) = value else { throw columnMismatch(column, "text", value) }
        self = text
    }
    /// The column's text, read in place; anything else throws a decoding error.
    public static func read(_ row: ColumnReader, _ index: Int32, column: String) throws -> String {
        guard let text = row.text(index) else { throw columnMismatch(column, "text", row.value(index)) }
        return text
    }
}

extension Int64: ColumnValue {
    /// Stored as INTEGER.
    public static var columnType: ColumnType { .integer }
    /// The stored integer (or a real that is a whole number); anything else throws.
    public init(stored value: SQLValue, column: String) throws {
        guard let number = value.int64 else { throw columnMismatch(column, "an integer", value) }
        self = number
    }
    /// The column's integer, read in place; anything else decodes through `SQLValue`.
    public static func read(_ row: ColumnReader, _ index: Int32, column: String) throws -> Int64 {
        guard row.type(index) == SQLITE_INTEGER else { return try Int64(stored: row.value(index), column: column) }
        return row.int64(index)
    }
}

extension Int: ColumnValue {
    /// Stored as INTEGER.
    public static var columnType: ColumnType { .integer }
    /// The stored integer, when `Int` can hold it; anything else throws a decoding error.
    public init(stored value: SQLValue, column: String) throws {
        guard let number = value.int64, let int = Int(exactly: number) else { throw columnMismatch(column, "an integer", value) }
        self = int
    }
}

extension Double: ColumnValue {
    /// Stored as REAL.
    public static var columnType: ColumnType { .real }
    /// The stored number (integers too); anything else throws a decoding error.
    public init(stored value: SQLValue, column: String) throws {
        guard let number = value.double else { throw columnMismatch(column, "a number", value) }
        self = number
    }
    /// The column's number, read in place; anything else decodes through `SQLValue`.
    public static func read(_ row: ColumnReader, _ index: Int32, column: String) throws -> Double {
        let type = row.type(index)
        guard type == SQLITE_FLOAT || type == SQLITE_INTEGER else { return try Double(stored: row.value(index), column: column) }
        return row.double(index)
    }
}

extension Bool: ColumnValue {
    /// Stored as INTEGER: 0 is false, anything else true.
    public static var columnType: ColumnType { .integer }
    /// The stored integer as a flag; anything else throws a decoding error.
    public init(stored value: SQLValue, column: String) throws {
        guard let number = value.int64 else { throw columnMismatch(column, "an integer", value) }
        self = number != 0
    }
}

extension Date: ColumnValue {
    /// Seconds since 1970 (REAL), which sort and compare in SQL.
    public static var columnType: ColumnType { .real }
    /// The date that many seconds after 1970; anything but a number throws.
    public init(stored value: SQLValue, column: String) throws {
        guard let seconds = value.double else { throw columnMismatch(column, "a date (seconds since 1970)", value) }
        self = Date(timeIntervalSince1970: seconds)
    }
    /// The column's seconds since 1970, read in place.
    public static func read(_ row: ColumnReader, _ index: Int32, column: String) throws -> Date {
        Date(timeIntervalSince1970: try Double.read(row, index, column: column))
    }
}

extension Array: ColumnValue where Element == UInt8 {
    /// Stored as BLOB.
    public static var columnType: ColumnType { .blob }
    /// The stored bytes (text as its UTF-8); anything else throws a decoding error.
    public init(stored value: SQLValue, column: String) throws {
        switch value {
        case .blob(let bytes): self = bytes
        case .text(let text): self = Array(text.utf8)
        default: throw columnMismatch(column, "a blob", value)
        }
    }
}

extension Data: ColumnValue {
    /// Stored as BLOB.
    public static var columnType: ColumnType { .blob }
    /// The stored bytes (text as its UTF-8); anything else throws a decoding error.
    public init(stored value: SQLValue, column: String) throws {
        self = Data(try [UInt8](stored: value, column: column))
    }
}

extension Optional: ColumnValue where Wrapped: ColumnValue {
    /// Stored as the wrapped type is, in a nullable column.
    public static var columnType: ColumnType { Wrapped.columnType }
    /// NULL is nil.
    public static var acceptsNull: Bool { true }
    /// Nil for NULL, else the wrapped type's value.
    public init(stored value: SQLValue, column: String) throws {
        self = value.isNull ? nil : try Wrapped(stored: value, column: column)
    }
    /// Nil for NULL, else the wrapped type's value, read in place.
    public static func read(_ row: ColumnReader, _ index: Int32, column: String) throws -> Wrapped? {
        row.type(index) == SQLITE_NULL ? nil : try Wrapped.read(row, index, column: column)
    }
}

/// A type stored as its raw value (an enum of statuses as text). Declare the conformance
/// (`extension PlaceStatus: ColumnValue {}`); a stored value that names no case is a
/// decoding error naming the column.
extension ColumnValue where Self: RawRepresentable, RawValue: ColumnValue {
    /// Stored as the raw value is.
    public static var columnType: ColumnType { RawValue.columnType }
    /// The case whose raw value is stored; a value that names no case throws.
    public init(stored value: SQLValue, column: String) throws {
        let raw = try RawValue(stored: value, column: column)
        guard let decoded = Self(rawValue: raw) else {
            throw StoreError(.decoding, "Column \(column) holds \(raw), which is no \(Self.self)")
        }
        self = decoded
    }
    /// The raw value, as stored.
    public var sqlValue: SQLValue { rawValue.sqlValue }
}

/// The columns of a fetched row, read by position: straight from a SQLite statement, or
/// from values another database's runner (`QueryRunner`) hands over row by row. Valid only
/// inside the decoding it is handed to.
public final class ColumnReader {
    /// The SQLite statement read in place; nil when rows come as values.
    private let statement: Statement?
    private var row: Row

    init(_ statement: Statement) {
        self.statement = statement
        row = Row(columns: statement.columns, values: [])
    }

    /// A reader of rows given as values (`load(_:)`), with these column names.
    public init(columnNames: [String]) {
        statement = nil
        row = Row(columns: RowColumns(names: columnNames), values: [])
    }

    /// Makes `values` the current row (a reader of values; a statement's reader ignores it).
    public func load(_ values: [SQLValue]) {
        row.values = values
    }

    /// The row as a `Row` (its storage reused from row to row when nothing kept it).
    public func currentRow() -> Row {
        statement?.read(into: &row)
        return row
    }

    /// The column's value at `index`, as an `SQLValue`.
    public func value(_ index: Int32) -> SQLValue {
        guard let statement else { return row.values[Int(index)] }
        return statement.value(at: index)
    }

    /// SQLite's type code of the column (`SQLITE_INTEGER`…).
    func type(_ index: Int32) -> Int32 {
        if let statement { return sqlite3_column_type(statement.handle, index) }
        switch row.values[Int(index)] {
        case .null: return SQLITE_NULL
        case .integer: return SQLITE_INTEGER
        case .real: return SQLITE_FLOAT
        case .text: return SQLITE_TEXT
        case .blob: return SQLITE_BLOB
        }
    }

    /// Whether the column holds NULL.
    @usableFromInline func isNull(_ index: Int32) -> Bool { type(index) == SQLITE_NULL }

    /// The column's integer (SQLite's conversion when it holds something else; 0 for a
    /// value that is no number).
    @usableFromInline func int64(_ index: Int32) -> Int64 {
        guard let statement else {
            let value = value(index)
            return value.int64 ?? value.double.flatMap { Int64(exactly: $0.rounded(.towardZero)) } ?? 0
        }
        return sqlite3_column_int64(statement.handle, index)
    }

    func double(_ index: Int32) -> Double {
        guard let statement else { return value(index).double ?? 0 }
        return sqlite3_column_double(statement.handle, index)
    }

    /// The text in a column, or nil when it holds something else.
    func text(_ index: Int32) -> String? {
        guard let statement else { return value(index).string }
        guard type(index) == SQLITE_TEXT else { return nil }
        let count = Int(sqlite3_column_bytes(statement.handle, index))
        guard let pointer = sqlite3_column_text(statement.handle, index) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }
}
