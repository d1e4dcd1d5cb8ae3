import CSQLite

/// A prepared statement. Owned by its `Connection`; not `Sendable`.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    /// The statement only reads (a query).
    let isReadOnly: Bool
    private unowned let connection: Connection
    /// Column names, shared by every row this statement produces.
    private(set) lazy var columns: RowColumns = {
        let count = Int(sqlite3_column_count(handle))
        return RowColumns(names: (0..<count).map { String(cString: sqlite3_column_name(handle, Int32($0))) })
    }()

    init(connection: Connection, sql: String) throws {
        var handle: OpaquePointer?
        let result = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard result == SQLITE_OK, let handle else {
            throw connection.lastError(result, sql: sql)
        }
        self.handle = handle
        self.sql = sql
        self.isReadOnly = sqlite3_stmt_readonly(handle) != 0
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ values: [SQLValue]) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw StoreError(.invalidRequest, "The statement takes \(expected) arguments, \(values.count) were given", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    func bind(_ value: SQLValue, at index: Int32) throws {
        let result: Int32
        switch value {
        case .null:
            result = sqlite3_bind_null(handle, index)
        case .integer(let integer):
            result = sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            result = sqlite3_bind_double(handle, index, real)
        case .text(let text):
            var text = text
            result = text.withUTF8 { buffer in
                guard !buffer.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, nil) }
                return buffer.withMemoryRebound(to: CChar.self) { characters in
                    sqlite3_bind_text(handle, index, characters.baseAddress, Int32(characters.count),
                                      topregions_sqlite_transient())
                }
            }
        case .blob(let bytes):
            result = bytes.withUnsafeBytes { buffer in
                sqlite3_bind_blob(handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count),
                                  topregions_sqlite_transient())
            }
        }
        guard result == SQLITE_OK else { throw connection.lastError(result, sql: sql) }
    }

    /// Advances to the next row: true when a row is there, false when the statement is done.
    /// On an error the statement is reset, so a failed write releases what it held.
    func step() throws -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW:
            return true
        case SQLITE_DONE:
            sqlite3_reset(handle)
            return false
        default:
            let error = connection.lastError(result, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    func value(at index: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard let pointer = sqlite3_column_text(handle, index) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return .blob([]) }
            return .blob([UInt8](UnsafeRawBufferPointer(start: pointer, count: count)))
        default:
            return .null
        }
    }

    func int64(at index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// The current row as a value that outlives the statement.
    func row() -> Row {
        var row = Row(columns: columns, values: [])
        read(into: &row)
        return row
    }

    /// Overwrites `row` with the current row. When nothing else holds `row`'s values (the
    /// record decoded from the previous row did not keep the row), their storage is reused:
    /// decoding thousands of records then allocates no array per row.
    func read(into row: inout Row) {
        let count = Int32(columns.names.count)
        row.values.removeAll(keepingCapacity: true)
        row.values.reserveCapacity(Int(count))
        for index in 0..<count { row.values.append(value(at: index)) }
    }
}
