import CPostgreSQL
import Foundation

extension PostgresConnection {
    /// Loads `rows` with `COPY table (columns) FROM STDIN`: PostgreSQL's bulk load, many
    /// times faster than one `INSERT` per row. `sql` is the `COPY … FROM STDIN` statement
    /// (text format, the default); each row holds one value per column it names. Returns
    /// the rows loaded. A failure (a value the column refuses, a lost connection) loads none
    /// of them; inside a transaction, the transaction is then failed and must be rolled back.
    @discardableResult
    public func copyIn(_ sql: String, rows: some Sequence<[PostgresValue]>) throws -> Int {
        let connection = try open()
        guard let started = PQexec(connection, sql) else { throw connectionError(sql: sql) }
        defer { PQclear(started) }
        guard PQresultStatus(started) == PGRES_COPY_IN else { throw failure(of: started, sql: sql) }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.copyChunkSize + 4096)
        var failure: Error?
        do {
            for row in rows {
                try Self.appendCopyRow(row, to: &buffer)
                if buffer.count >= Self.copyChunkSize {
                    try sendCopyData(buffer, on: connection, sql: sql)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            if !buffer.isEmpty { try sendCopyData(buffer, on: connection, sql: sql) }
        } catch {
            failure = error
        }
        // Ending with an error message makes the server abandon the COPY: nothing is loaded.
        let ended = failure == nil ? PQputCopyEnd(connection, nil) : PQputCopyEnd(connection, "abandoned by the client")
        if ended != 1 && failure == nil { failure = connectionError(sql: sql) }
        let loaded: Int
        do {
            loaded = try finishCopy(on: connection, sql: sql)
        } catch {
            throw failure ?? error  // the server's "abandoned" answers the client's own failure
        }
        if let failure { throw failure }
        return loaded
    }

    /// How many bytes of rows go to libpq at a time.
    static let copyChunkSize = 256 * 1024

    private func sendCopyData(_ bytes: [UInt8], on connection: OpaquePointer, sql: String) throws {
        let sent = bytes.withUnsafeBytes { buffer -> Int32 in
            guard let start = buffer.baseAddress?.assumingMemoryBound(to: CChar.self) else { return 1 }
            return PQputCopyData(connection, start, Int32(clamping: buffer.count))
        }
        guard sent == 1 else { throw connectionError(sql: sql) }
    }

    /// Reads the COPY's results to the end: the rows loaded, or the server's error.
    private func finishCopy(on connection: OpaquePointer, sql: String) throws -> Int {
        var loaded = 0
        var error: PostgresError?
        while let result = PQgetResult(connection) {
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK:
                loaded = Int(String(cString: PQcmdTuples(result))) ?? 0
            default:
                error = error ?? failure(of: result, sql: sql)
            }
            PQclear(result)
        }
        if let error { throw error }
        return loaded
    }

    /// One row in COPY's text format: values separated by tabs, `\N` for NULL, a newline
    /// after. Backslash, tab, newline and carriage return in text are escaped; bytes go in
    /// `bytea`'s hex form.
    static func appendCopyRow(_ row: [PostgresValue], to buffer: inout [UInt8]) throws {
        for (index, value) in row.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: "\t")) }
            switch value {
            case .null:
                buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
            case .text(let text):
                for byte in text.utf8 {
                    switch byte {
                    case 0: throw PostgresError(.invalidParameter, "column \(index + 1) is text holding NUL, which PostgreSQL cannot store")
                    case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                    case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                    case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                    case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                    default: buffer.append(byte)
                    }
                }
            case .integer, .real, .boolean:
                buffer.append(contentsOf: value.wireForm.bytes ?? [])
            case .bytes(let bytes):
                // `\x…` is bytea's input; its backslash is COPY's escape character, doubled.
                buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")])
                for byte in bytes {
                    buffer.append(hexDigits[Int(byte >> 4)])
                    buffer.append(hexDigits[Int(byte & 0x0F)])
                }
            }
        }
        buffer.append(UInt8(ascii: "\n"))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
