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
        let result = try connection.query(sql, arguments.map(PostgresRows.parameter))
        queriesRun += 1
        let reader = ColumnReader(columnNames: result.columns)
        for row in result.rows.indices {
            reader.load(try PostgresRows.values(of: result, row: row))
            try body(reader)
        }
    }

    /// The PostgreSQL store keeps no change history yet: nothing can be observed from a
    /// token, so none is given.
    func currentToken() throws -> Int64 {
        throw StoreError(.invalidRequest, "a PostgreSQL store keeps no change history yet: its changes cannot be observed")
    }
}

/// PostgreSQL's values as the store's, and back.
public enum PostgresRows {
    /// A row of a result (text format) as the store's values, by each column's type:
    /// integers, reals (`numeric` too: an integer when whole and in range), booleans as
    /// 0 and 1 (as SQLite holds them), `bytea` as bytes, anything else as text.
    public static func values(of result: PostgresResult, row: Int) throws -> [SQLValue] {
        try zip(result.rows[row], result.columnTypes).enumerated().map { column, cell in
            try value(cell.0, type: cell.1, column: result.columns[column])
        }
    }

    /// Every row of `result` as the store's values.
    public static func values(of result: PostgresResult) throws -> [[SQLValue]] {
        try result.rows.indices.map { try values(of: result, row: $0) }
    }

    private static func value(_ text: String?, type: UInt32, column: String) throws -> SQLValue {
        guard let text else { return .null }
        switch type {
        case 20, 21, 23, 26:  // bigint, smallint, integer, oid
            if let integer = Int64(text) { return .integer(integer) }
        case 700, 701:  // real, double precision
            if let real = Double(text) { return .real(real) }
        case 1700:  // numeric (what sum() of bigints gives)
            if let integer = Int64(text) { return .integer(integer) }
            if let real = Double(text) { return .real(real) }
        case 16:  // boolean
            if text == "t" || text == "f" { return .integer(text == "t" ? 1 : 0) }
        case 17:  // bytea, in hex output
            if let bytes = PostgresResult.decodeHex(text) { return .blob(bytes) }
        default:
            return .text(text)
        }
        throw StoreError(.decoding, "Column \(column) holds \(text.prefix(40).debugDescription), which is not of its type (PostgreSQL type \(type))")
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
