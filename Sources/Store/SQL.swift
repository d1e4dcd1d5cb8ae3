/// Small helpers for writing SQL text. Values never go through here: they are bound.
enum SQL {
    /// A quoted identifier: `"name"`, with embedded quotes doubled.
    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `?, ?, ?` for `count` parameters.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// A literal for a column default in DDL (DDL cannot bind parameters).
    static func literal(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let integer): return String(integer)
        case .real(let real): return "\(real)"
        case .text(let text): return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let bytes): return "X'" + bytes.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }

    /// SQLite's default limit on bound parameters is 32,766 since 3.32; stay well under it.
    static let maximumParametersPerStatement = 500
}

import Foundation

extension Entity {
    /// `CREATE TABLE` and `CREATE INDEX` statements for this entity, including an index on
    /// every foreign key (the delete rules query by them) that no declared index already
    /// leads with: an index on `(region_id, title)` finds rows by `region_id` as well, and a
    /// second one would only cost every insert another B-tree to update.
    public func createStatements() -> [String] {
        var columns = ["\(SQL.quote(primaryKey)) INTEGER PRIMARY KEY"]
        for attribute in attributes {
            var definition = "\(SQL.quote(attribute.name)) \(attribute.type.rawValue)"
            if !attribute.isOptional { definition += " NOT NULL" }
            if attribute.isUnique { definition += " UNIQUE" }
            if let value = attribute.defaultValue { definition += " DEFAULT \(SQL.literal(value))" }
            columns.append(definition)
        }
        for relationship in relationships {
            guard let column = relationship.foreignKeyColumn else { continue }
            columns.append("\(SQL.quote(column)) INTEGER REFERENCES \(SQL.quote(relationship.destination)) DEFERRABLE INITIALLY DEFERRED")
        }
        var statements = ["CREATE TABLE \(SQL.quote(name)) (\(columns.joined(separator: ", ")))"]
        for index in foreignKeyIndexes {
            statements.append("CREATE INDEX \(SQL.quote(index.name)) ON \(SQL.quote(name)) (\(SQL.quote(index.column)))")
        }
        for index in indexes {
            let parts = index.columns.map { part in
                SQL.quote(part.column) + (part.collation.map { " COLLATE \($0.rawValue)" } ?? "")
                    + (index.descending.contains(part.column) ? " DESC" : "")
            }
            statements.append("CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(SQL.quote(index.name)) ON \(SQL.quote(name)) (\(parts.joined(separator: ", ")))")
        }
        return statements
    }

    /// The foreign-key indexes stores created before a declared index led with the same
    /// column (until `createStatements` stopped making them): a migration drops these.
    public var coveredForeignKeyIndexNames: [String] {
        relationships.compactMap(\.foreignKeyColumn).filter(isLeadingIndexColumn).map(foreignKeyIndexName)
    }

    /// The index the store adds on each foreign key that no declared index leads with
    /// (the delete rules query by it), by name.
    public var foreignKeyIndexes: [(name: String, column: String)] {
        relationships.compactMap(\.foreignKeyColumn).filter { !isLeadingIndexColumn($0) }.map { (foreignKeyIndexName($0), $0) }
    }

    private func foreignKeyIndexName(_ column: String) -> String { "\(name)_\(column)" }

    /// Whether a declared index starts with `column`, compared as stored (no collation).
    private func isLeadingIndexColumn(_ column: String) -> Bool {
        indexes.contains { $0.columns.first?.column == column && $0.columns.first?.collation == nil }
    }
}
