import Foundation
import PostgreSQL
import Store

extension PostgresStore {
    /// How the database's tables differ from the ones this program made: a table, column,
    /// index or foreign key missing, or a column of another type (changed by hand, or a
    /// restore gone wrong), as sentences; empty when they are as made. Tables and columns
    /// added beside the store's are not differences.
    public func schemaDifferences() throws -> [String] {
        try PostgresStoreError.wrapping("cannot read the schema of \(redactedLocation)") {
            let columns = try connection.query("""
                SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()
                """).rows
            var types: [String: [String: String]] = [:]
            for row in columns where row.count == 3 {
                guard let table = row[0], let column = row[1], let type = row[2] else { continue }
                types[table, default: [:]][column] = type
            }
            let indexes = Set(try connection.query("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()").rows
                .compactMap { $0.first ?? nil })
            var foreignKeys: [String: Int] = [:]
            for row in try connection.query("""
                SELECT table_name, count(*) FROM information_schema.table_constraints
                WHERE table_schema = current_schema() AND constraint_type = 'FOREIGN KEY' GROUP BY table_name
                """).rows where row.count == 2 {
                if let table = row[0], let count = row[1].flatMap({ Int($0) }) { foreignKeys[table] = count }
            }
            return schema.expectedTables().flatMap { table in
                Self.differences(of: table, types: types[table.name], indexes: indexes, foreignKeys: foreignKeys[table.name] ?? 0)
            }
        }
    }

    private static func differences(of table: PostgresSchema.ExpectedTable, types: [String: String]?, indexes: Set<String>,
                                    foreignKeys: Int) -> [String] {
        guard let types else { return ["table \(table.name) is missing"] }
        var found: [String] = []
        for (column, type) in table.columns {
            guard let actual = types[column] else { found.append("column \(table.name).\(column) is missing"); continue }
            if actual != type { found.append("column \(table.name).\(column) is \(actual), not \(type)") }
        }
        for index in table.indexes where !indexes.contains(index) { found.append("index \(index) is missing") }
        if foreignKeys < table.foreignKeys {
            found.append("table \(table.name) has \(foreignKeys) foreign \(foreignKeys == 1 ? "key" : "keys"), not \(table.foreignKeys)")
        }
        return found
    }

    /// Throws unless the database holds this program's schema, as this program made it.
    public func requireIntact() throws {
        try requireCurrent()
        let differences = try schemaDifferences()
        guard differences.isEmpty else {
            throw PostgresStoreError(.foreignDatabase, "the store in \(redactedLocation) is not as this program made it: "
                                     + differences.prefix(5).joined(separator: "; ") + (differences.count > 5 ? "; …" : "")
                                     + " (restore it from a backup, or copy a gallery into a new database)")
        }
    }
}

extension PostgresSchema {
    /// A table as this program creates it: its columns' types as `information_schema`
    /// names them, its indexes by name, and how many foreign keys it has.
    struct ExpectedTable {
        var name: String
        var columns: [(name: String, type: String)]
        var indexes: [String]
        var foreignKeys: Int
    }

    func expectedTables() -> [ExpectedTable] {
        let bookkeeping = ExpectedTable(name: Self.bookkeepingTable, columns: [("name", "text"), ("applied_at", "double precision")],
                                        indexes: [], foreignKeys: 0)
        return [bookkeeping] + schema.entities.map { entity in
            var columns = [(entity.primaryKey.lowercased(), "bigint")]
            for column in entity.storedColumns {
                columns.append((column.lowercased(), Self.type(entity.attribute(named: column)?.type ?? .integer)))
            }
            for attribute in sortKeys(of: entity) { columns.append((Self.sortKeyColumn(attribute).lowercased(), "bytea")) }
            return ExpectedTable(name: entity.name.lowercased(), columns: columns, indexes: indexNames(entity),
                                 foreignKeys: entity.relationships.filter { $0.foreignKeyColumn != nil }.count)
        }
    }
}
