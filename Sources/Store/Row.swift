/// The names of a result's columns, shared by all its rows.
public final class RowColumns: Sendable {
    public let names: [String]
    /// Open addressing over `names` by a cheap hash of the name's UTF-8: positions + 1,
    /// 0 for an empty slot. Records look up every column by name on every row, and
    /// `Dictionary`'s SipHash of a string was a fifth of a large fetch's time.
    private let slots: [Int32]

    init(names: [String]) {
        self.names = names
        var capacity = 8
        while capacity < names.count * 2 { capacity *= 2 }
        var slots = [Int32](repeating: 0, count: capacity)
        for (index, name) in names.enumerated() {
            var slot = Self.hash(name) & (capacity - 1)
            while slots[slot] != 0 {
                if names[Int(slots[slot]) - 1] == name { break }  // a repeated name keeps the first column
                slot = (slot + 1) & (capacity - 1)
            }
            if slots[slot] == 0 { slots[slot] = Int32(index + 1) }
        }
        self.slots = slots
    }

    /// The position of the first column with this name.
    func index(of name: String) -> Int? {
        let mask = slots.count - 1
        var slot = Self.hash(name) & mask
        while slots[slot] != 0 {
            let index = Int(slots[slot]) - 1
            if names[index] == name { return index }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// A hash of the length and three bytes of the UTF-8 (read in place): enough to tell
    /// a table's column names apart, and collisions only cost a probe.
    private static func hash(_ name: String) -> Int {
        if let hash = name.utf8.withContiguousStorageIfAvailable(sampledHash) { return hash }
        return Array(name.utf8).withUnsafeBufferPointer(sampledHash)
    }

    private static func sampledHash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let count = bytes.count
        guard count > 0 else { return 0 }
        let sample = Int(bytes[0]) &* 31 &+ Int(bytes[count / 2]) &* 7 &+ Int(bytes[count - 1])
        return (sample &* 2_654_435_761 &+ count) >> 4
    }
}

/// One row of a result: values by column position or name.
public struct Row: Sendable {
    let columns: RowColumns
    public let values: [SQLValue]

    init(columns: RowColumns, values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    public var columnNames: [String] { columns.names }

    public subscript(index: Int) -> SQLValue { values[index] }

    /// The value of the named column; `.null` when the row has no such column.
    public subscript(name: String) -> SQLValue {
        guard let index = columns.index(of: name) else { return .null }
        return values[index]
    }

    public func hasColumn(_ name: String) -> Bool { columns.index(of: name) != nil }

    // Typed accessors: they throw a decoding error that names the column when the stored
    // value is missing or of another type.

    public func int64(_ name: String) throws -> Int64 {
        guard let value = self[name].int64 else { throw mismatch(name, "an integer") }
        return value
    }

    public func int(_ name: String) throws -> Int { Int(try int64(name)) }

    public func double(_ name: String) throws -> Double {
        guard let value = self[name].double else { throw mismatch(name, "a number") }
        return value
    }

    public func string(_ name: String) throws -> String {
        guard let value = self[name].string else { throw mismatch(name, "text") }
        return value
    }

    public func bool(_ name: String) throws -> Bool { try int64(name) != 0 }

    public func optionalInt64(_ name: String) -> Int64? { self[name].int64 }
    public func optionalDouble(_ name: String) -> Double? { self[name].double }
    public func optionalString(_ name: String) -> String? { self[name].string }
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
