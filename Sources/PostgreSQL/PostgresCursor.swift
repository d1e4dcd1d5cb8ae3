import CPostgreSQL
import Glibc

/// The rows of a result read in place, one row at a time (`PostgresConnection.query(_:_:eachRow:)`):
/// numbers are parsed straight from libpq's text, without a `String` made for each. Valid
/// only inside the call it is handed to.
public final class PostgresCursor {
    private let result: OpaquePointer
    /// The columns' names, in order.
    public let columns: [String]
    /// The columns' types, as PostgreSQL's type ids (`pg_type.oid`).
    public let columnTypes: [UInt32]
    /// How many rows the result holds.
    public let rowCount: Int
    /// The row being read.
    public internal(set) var row: Int32 = 0

    init(_ result: OpaquePointer) {
        self.result = result
        let count = PQnfields(result)
        columns = (0..<count).map { String(cString: PQfname(result, $0)) }
        columnTypes = (0..<count).map { UInt32(PQftype(result, $0)) }
        rowCount = Int(PQntuples(result))
    }

    /// Whether the column holds NULL.
    public func isNull(_ column: Int) -> Bool { PQgetisnull(result, row, Int32(column)) == 1 }

    /// The column's bytes in text format; nil for NULL.
    private func cell(_ column: Int) -> UnsafeBufferPointer<UInt8>? {
        guard !isNull(column), let pointer = PQgetvalue(result, row, Int32(column)) else { return nil }
        let length = Int(PQgetlength(result, row, Int32(column)))
        return UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: length)
    }

    /// The column's text; nil for NULL.
    public func text(_ column: Int) -> String? {
        cell(column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The column's integer; nil for NULL or text that is no 64-bit integer.
    public func integer(_ column: Int) -> Int64? {
        guard let bytes = cell(column), !bytes.isEmpty else { return nil }
        let negative = bytes[0] == UInt8(ascii: "-")
        let digits = bytes.dropFirst(negative || bytes[0] == UInt8(ascii: "+") ? 1 : 0)
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let digit = Int64(byte - UInt8(ascii: "0"))
            // Accumulated negatively: Int64.min has no positive counterpart.
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, underflow) = shifted.subtractingReportingOverflow(digit)
            guard !overflow, !underflow else { return nil }
            value = next
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// The column's number; nil for NULL or text that is no number. Reads PostgreSQL's
    /// float output, `NaN` and `Infinity` included (the C library's reading: this program
    /// never changes the C locale from "C").
    public func real(_ column: Int) -> Double? {
        guard let pointer = PQgetvalue(result, row, Int32(column)), !isNull(column) else { return nil }
        let length = Int(PQgetlength(result, row, Int32(column)))
        // strtod would skip leading white space, which no number PostgreSQL writes has.
        guard length > 0, isspace(Int32(pointer[0])) == 0 else { return nil }
        var end: UnsafeMutablePointer<CChar>?
        let value = strtod(pointer, &end)
        guard let end, end - pointer == length else { return nil }
        return value
    }

    /// The column's bytes, a `bytea` in PostgreSQL's hex output (`\x0a0b`); nil for NULL or
    /// text that is not that.
    public func bytes(_ column: Int) -> [UInt8]? {
        guard let text = cell(column) else { return nil }
        return PostgresResult.decodeHex(text)
    }
}
