import Foundation
import PostgreSQL
import Store

/// Runs a `ReadContext`'s queries on a PostgreSQL connection, in the PostgreSQL store's
/// dialect (`SQLDialect.postgresql`): fetch requests, fetches by id and raw SQL written
/// with `$n` parameters. Each statement is prepared once per connection (`query`).
final class PostgresQueryRunner: QueryRunner {
    let dialect: SQLDialect
    private(set) var queriesRun = 0
    private let connection: PostgresConnection

    init(connection: PostgresConnection, schema: PostgresSchema) {
        self.connection = connection
        dialect = schema.dialect
    }

    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (ColumnReader) throws -> Void) throws {
        queriesRun += 1
        var reader: ColumnReader?
        var values: [SQLValue] = []
        try connection.query(sql, arguments.map(PostgresRows.parameter)) { cursor in
            let current = reader ?? ColumnReader(columnNames: cursor.columns)
            reader = current
            values.removeAll(keepingCapacity: true)
            for column in cursor.columns.indices {
                values.append(try PostgresRows.value(cursor, column: column))
            }
            current.load(values)
            try body(current)
        }
    }

    /// `COPY`, its rows numbered first from the primary key's identity sequence (`COPY`
    /// returns nothing), so ids are the ones an `INSERT` would have given.
    func bulkInsert(into table: String, primaryKey: String, columns: [String], rows: [[SQLValue]]) throws -> [Int64]? {
        queriesRun += 2
        var ids: [Int64] = []
        ids.reserveCapacity(rows.count)
        try connection.query("SELECT nextval(pg_get_serial_sequence($1, $2)) FROM generate_series(1, $3)",
                             [.text(dialect.identifier(table)), .text(primaryKey.lowercased()), .integer(Int64(rows.count))]) { cursor in
            if let id = cursor.integer(0) { ids.append(id) }
        }
        guard ids.count == rows.count else { return ids }
        let names = ([primaryKey] + columns).map(dialect.identifier).joined(separator: ", ")
        try connection.copyIn("COPY \(dialect.identifier(table)) (\(names)) FROM STDIN",
                              rows: zip(ids, rows).lazy.map { id, row in [.integer(id)] + row.map(PostgresRows.parameter) })
        return ids
    }

    /// The newest commit's token, in the transaction's snapshot.
    func currentToken() throws -> Int64 {
        try PostgresHistory.currentToken(on: connection)
    }
}

/// PostgreSQL's values as the store's, and back.
public enum PostgresRows {
    /// Every row of a query without parameters as the store's values (`value(_:column:)`).
    public static func values(of sql: String, on connection: PostgresConnection) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try connection.query(sql) { cursor in
            rows.append(try cursor.columns.indices.map { try value(cursor, column: $0) })
        }
        return rows
    }

    /// The cursor's current value in `column` as the store's, by the column's type:
    /// integers, reals (`numeric` too: an integer when whole and in range), booleans as
    /// 0 and 1 (as SQLite holds them), `bytea` as bytes, anything else as text.
    static func value(_ cursor: PostgresCursor, column: Int) throws -> SQLValue {
        if cursor.isNull(column) { return .null }
        let type = cursor.columnTypes[column]
        let read: SQLValue?
        switch type {
        case 20, 21, 23, 26: read = cursor.integer(column).map(SQLValue.integer)  // bigint, smallint, integer, oid
        case 700, 701: read = cursor.real(column).map(SQLValue.real)  // real, double precision
        case 1700: read = cursor.integer(column).map(SQLValue.integer) ?? cursor.real(column).map(SQLValue.real)  // numeric (sum() of bigints)
        case 16: read = cursor.text(column).flatMap { $0 == "t" ? .integer(1) : $0 == "f" ? .integer(0) : nil }  // boolean
        case 17: read = cursor.bytes(column).map(SQLValue.blob)  // bytea, in hex output
        default: return .text(cursor.text(column) ?? "")
        }
        guard let read else {
            let text = cursor.text(column) ?? ""
            throw StoreError(.decoding, "Column \(cursor.columns[column]) holds \(text.prefix(40).debugDescription), which is not of its type (PostgreSQL type \(type))")
        }
        return read
    }

    /// A store's value as a statement's parameter.
    public static func parameter(_ value: SQLValue) -> PostgresValue {
        switch value {
        case .null: return .null
        case .integer(let integer): return .integer(integer)
        case .real(let real): return .real(real)
        case .text(let text): return .text(text)
        case .blob(let bytes): return .bytes(bytes)
        }
    }
}

extension PostgresSchema {
    /// The SQL of this store's tables, for fetch requests (`QueryBuilder`).
    public var dialect: SQLDialect {
        var columns: [String: [String: String]] = [:]
        for (entity, attributes) in sortKeyAttributes {
            columns[entity] = Dictionary(uniqueKeysWithValues: attributes.map { ($0, Self.sortKeyColumn($0)) })
        }
        return .postgresql(sortKeyColumns: columns, indexedKeyBytes: Self.indexedKeyBytes)
    }
}
