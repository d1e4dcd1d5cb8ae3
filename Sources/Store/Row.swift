/// The names of a result's columns, shared by all its rows.
public final class RowColumns: Sendable {
    /// The column names, in result order.
    public var names: [String] { index.names }
    private let index: NameIndex

    init(names: [String]) {
        index = NameIndex(names)
    }

    /// The position of the first column with this name.
    func index(of name: String) -> Int? { index[name] }
}

/// One row of a result: values by column position or name.
public struct Row: Sendable {
    let columns: RowColumns
    /// The values, in column order.
    public internal(set) var values: [SQLValue]

    init(columns: RowColumns, values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    /// The column names, in result order.
    public var columnNames: [String] { columns.names }

    /// The value at column position `index`; traps when out of range.
    public subscript(index: Int) -> SQLValue { values[index] }

    /// The value of the named column; `.null` when the row has no such column.
    public subscript(name: String) -> SQLValue {
        guard let index = columns.index(of: name) else { return .null }
        return values[index]
    }

    /// Whether the row has a column called `name`.
    public func hasColumn(_ name: String) -> Bool { columns.index(of: name) != nil }

    // Typed accessors: they throw a decoding error that names the column when the stored
    // value is missing or of another type.

    /// The named column's integer (or a whole-number real).
    public func int64(_ name: String) throws -> Int64 {
        guard let value = self[name].int64 else { throw mismatch(name, "an integer") }
        return value
    }

    /// The named column's integer, as an `Int`.
    public func int(_ name: String) throws -> Int { Int(try int64(name)) }

    /// The named column's number, integers included.
    public func double(_ name: String) throws -> Double {
        guard let value = self[name].double else { throw mismatch(name, "a number") }
        return value
    }

    /// The named column's text.
    public func string(_ name: String) throws -> String {
        guard let value = self[name].string else { throw mismatch(name, "text") }
        return value
    }

    /// The named column's integer as a flag: 0 is false, anything else true.
    public func bool(_ name: String) throws -> Bool { try int64(name) != 0 }

    /// The named column's integer; nil for NULL, a missing column or another type.
    public func optionalInt64(_ name: String) -> Int64? { self[name].int64 }
    /// The named column's number; nil for NULL, a missing column or another type.
    public func optionalDouble(_ name: String) -> Double? { self[name].double }
    /// The named column's text; nil for NULL, a missing column or another type.
    public func optionalString(_ name: String) -> String? { self[name].string }
    /// The named column's blob; nil for NULL, a missing column or another type.
    public func optionalBytes(_ name: String) -> [UInt8]? { self[name].bytes }

    private func mismatch(_ name: String, _ expected: String) -> StoreError {
        let found: String
        switch self[name] {
        case .null: found = hasColumn(name) ? "NULL" : "no such column"
        case .integer: found = "an integer"
        case .real: found = "a real number"
        case .text: found = "text"
        case .blob: found = "a blob"
        }
        return StoreError(.decoding, "Column \(name) should hold \(expected), found \(found)")
    }
}
