import Foundation
import PostgreSQL
import Store

/// An entity's columns as both stores hold them, and each value's way between the two:
/// the primary key, then `Entity.storedColumns` (attributes, then foreign keys), and on
/// PostgreSQL the sort keys after those.
struct PostgresColumns {
    let entity: Entity
    /// The type of each stored column, in `storedColumns` order (foreign keys are integers).
    let types: [ColumnType]
    /// Each sort key's attribute: its position in `storedColumns`.
    let sortKeySources: [Int]
    /// The columns PostgreSQL holds, quoted: id, stored columns, sort keys.
    let quotedColumns: [String]

    init(_ entity: Entity, in schema: PostgresSchema) {
        self.entity = entity
        types = entity.storedColumns.map { column in entity.attribute(named: column)?.type ?? .integer }
        sortKeySources = schema.sortKeys(of: entity).compactMap { entity.storedColumns.firstIndex(of: $0) }
        quotedColumns = ([entity.primaryKey] + entity.storedColumns + schema.sortKeys(of: entity).map(PostgresSchema.sortKeyColumn))
            .map(PostgresSchema.identifier)
    }

    /// Whether rows may hold bytes (thumbnails): pages of them are kept short, so that a
    /// copy holds a few megabytes of them at a time, not a whole table's.
    var holdsBytes: Bool { types.contains(.blob) }

    /// The SQLite store's `SELECT` of a page of rows after an id, in id order.
    func sqlitePageQuery(limit: Int) -> String { pageQuery(after: "?", limit: limit) }

    /// PostgreSQL's `SELECT` of a page of rows after an id, in id order.
    func postgresPageQuery(limit: Int) -> String { pageQuery(after: "$1", limit: limit) }

    /// The id and stored columns (not the keys: they are made again from the text) of the
    /// rows after the id bound to `parameter`, in id order. The same text on both stores:
    /// SQLite reads PostgreSQL's lower-case names as its own.
    private func pageQuery(after parameter: String, limit: Int) -> String {
        let columns = quotedColumns.prefix(1 + entity.storedColumns.count).joined(separator: ", ")
        let key = PostgresSchema.identifier(entity.primaryKey)
        return "SELECT \(columns) FROM \(PostgresSchema.identifier(entity.name)) WHERE \(key) > \(parameter) ORDER BY \(key) LIMIT \(limit)"
    }

    /// The `COPY … FROM STDIN` of every column PostgreSQL holds.
    func postgresCopy() -> String {
        "COPY \(PostgresSchema.identifier(entity.name)) (\(quotedColumns.joined(separator: ", "))) FROM STDIN"
    }

    /// A SQLite row (id, stored columns) as PostgreSQL's parameters, with its sort keys.
    func postgresValues(_ row: Row) throws -> [PostgresValue] {
        guard let id = row[0].int64 else {
            throw PostgresStoreError(.invalidValue, "\(entity.name) has a row whose \(entity.primaryKey) is not an integer")
        }
        var values: [PostgresValue] = [.integer(id)]
        for (offset, type) in types.enumerated() {
            values.append(try Self.postgresValue(row[offset + 1], as: type, at: "\(entity.name) \(id) \(entity.storedColumns[offset])"))
        }
        for source in sortKeySources {
            guard case .text(let text) = row[source + 1] else { values.append(.null); continue }
            values.append(.bytes(Collation.localizedStandardSortKey(text)))
        }
        return values
    }

    /// A PostgreSQL row (text form: id, stored columns) as the SQLite store's id and values.
    func sqliteValues(_ result: PostgresResult, row: Int) throws -> (id: Int64, values: [SQLValue]) {
        let texts = result.rows[row]
        guard let idText = texts.first ?? nil, let id = Int64(idText) else {
            throw PostgresStoreError(.invalidValue, "\(entity.name) has a row whose \(entity.primaryKey) is not an integer")
        }
        var values: [SQLValue] = []
        for (offset, type) in types.enumerated() {
            let place = "\(entity.name) \(id) \(entity.storedColumns[offset])"
            values.append(try Self.sqliteValue(texts[offset + 1], as: type, result: result, row: row, column: offset + 1, at: place))
        }
        return (id, values)
    }

    static func postgresValue(_ value: SQLValue, as type: ColumnType, at place: String) throws -> PostgresValue {
        switch (type, value) {
        case (_, .null): return .null
        case (.integer, _):
            guard let integer = value.int64 else { throw mismatch(value, type, place) }
            return .integer(integer)
        case (.real, _):
            guard let number = value.double else { throw mismatch(value, type, place) }
            return .real(number)
        case (.text, .text(let text)):
            guard !text.utf8.contains(0) else {
                throw PostgresStoreError(.invalidValue, "\(place) holds text with a NUL character, which PostgreSQL cannot store")
            }
            return .text(text)
        case (.blob, .blob(let bytes)): return .bytes(bytes)
        default: throw mismatch(value, type, place)
        }
    }

    private static func mismatch(_ value: SQLValue, _ type: ColumnType, _ place: String) -> PostgresStoreError {
        PostgresStoreError(.invalidValue, "\(place) holds \(kind(of: value)) where the schema has \(type.rawValue.lowercased())")
    }

    private static func kind(of value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer: return "an integer"
        case .real: return "a real number"
        case .text: return "text"
        case .blob: return "bytes"
        }
    }

    static func sqliteValue(_ text: String?, as type: ColumnType, result: PostgresResult, row: Int, column: Int,
                            at place: String) throws -> SQLValue {
        guard let text else { return .null }
        switch type {
        case .integer:
            guard let integer = Int64(text) else { throw unreadable(text, type, place) }
            return .integer(integer)
        case .real:
            guard let number = Double(text) else { throw unreadable(text, type, place) }
            return .real(number)
        case .text:
            return .text(text)
        case .blob:
            guard let bytes = try? result.bytes(row, result.columns[column]) else { throw unreadable(text, type, place) }
            return .blob(bytes)
        }
    }

    private static func unreadable(_ text: String, _ type: ColumnType, _ place: String) -> PostgresStoreError {
        PostgresStoreError(.invalidValue, "\(place) holds \(text.prefix(40).debugDescription), which is not \(type.rawValue.lowercased())")
    }
}
