import CPostgreSQL

/// The rows a statement returned, copied out of libpq's result in text format.
public struct PostgresResult: Sendable {
    /// The columns' names, in order.
    public let columns: [String]
    /// The columns' types, in order, as PostgreSQL's type ids (`pg_type.oid`: 20 for
    /// `bigint`, 25 for `text`, 17 for `bytea` …).
    public let columnTypes: [UInt32]
    /// Each row's values in text format, nil for NULL.
    public let rows: [[String?]]
    /// How many rows an INSERT, UPDATE or DELETE touched (0 for other statements).
    public let affectedRows: Int

    init(_ result: OpaquePointer) {
        let columnCount = PQnfields(result)
        let rowCount = PQntuples(result)
        columns = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
        columnTypes = (0..<columnCount).map { UInt32(PQftype(result, $0)) }
        rows = (0..<rowCount).map { row in
            (0..<columnCount).map { column in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
        affectedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// The value at `row` in the column named `column`, as text (nil for NULL).
    public func text(_ row: Int, _ column: String) throws -> String? {
        guard rows.indices.contains(row) else {
            throw PostgresError(.unexpectedResult, "no row \(row) (the result has \(rows.count))")
        }
        guard let index = columns.firstIndex(of: column) else {
            throw PostgresError(.unexpectedResult, "no column \"\(column)\" (the result has \(columns.joined(separator: ", ")))")
        }
        return rows[row][index]
    }

    /// The value at `row` in `column` as an integer (nil for NULL).
    public func integer(_ row: Int, _ column: String) throws -> Int64? {
        guard let text = try text(row, column) else { return nil }
        guard let value = Int64(text) else {
            throw PostgresError(.unexpectedResult, "column \"\(column)\" holds \"\(text)\", not an integer")
        }
        return value
    }

    /// The value at `row` in `column` as a boolean (nil for NULL).
    public func boolean(_ row: Int, _ column: String) throws -> Bool? {
        switch try text(row, column) {
        case nil: return nil
        case "t": return true
        case "f": return false
        case let other?: throw PostgresError(.unexpectedResult, "column \"\(column)\" holds \"\(other)\", not a boolean")
        }
    }

    /// The value at `row` in `column`, a `bytea` in PostgreSQL's hex output (`\x0a0b`), as bytes.
    public func bytes(_ row: Int, _ column: String) throws -> [UInt8]? {
        guard let text = try text(row, column) else { return nil }
        guard let bytes = Self.decodeHex(text) else {
            throw PostgresError(.unexpectedResult, "column \"\(column)\" is not a bytea in hex form")
        }
        return bytes
    }

    /// A `bytea` in PostgreSQL's hex output (`\x0a0b`) as bytes; nil when it is not that.
    static func decodeHex(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decodeHex($0) }
    }

    /// `decodeHex` of text given as its UTF-8 bytes.
    static func decodeHex(_ digits: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard digits.count >= 2, digits[0] == UInt8(ascii: "\\"), digits[1] == UInt8(ascii: "x"), digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((digits.count - 2) / 2)
        var index = 2
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
