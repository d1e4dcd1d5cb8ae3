import Foundation
import Store

/// A table of the store as PostgreSQL holds it, in lower-case names: the one description
/// from which `PostgresSchema.createStatements` makes the table and against which
/// `PostgresStore.schemaDifferences` compares what the database has.
struct PostgresTable {
    struct Column {
        var name: String
        var type: String
        var notNull: Bool
        var unique = false
        /// Numbers new rows (the primary key of an entity's table).
        var identity = false
        var defaultValue: SQLValue?
    }
    struct IndexColumn {
        var name: String
        /// A sort key, indexed by its first bytes (`PostgresSchema.indexedKey(column:)`).
        var isSortKey = false
        var descending = false
    }
    struct Index { var name: String; var unique: Bool; var columns: [IndexColumn] }
    struct ForeignKey { var column: String; var destination: String; var destinationKey: String }

    var name: String
    var primaryKey: String
    var columns: [Column]
    var indexes: [Index] = []
    var foreignKeys: [ForeignKey] = []

    /// Columns each value of which is held once: the primary key, unique columns.
    var uniqueColumns: [String] { [primaryKey] + columns.filter(\.unique).map(\.name) }
}

extension PostgresSchema {
    /// Every table of the store: the bookkeeping table, then one per entity.
    func tables() -> [PostgresTable] {
        let bookkeeping = PostgresTable(name: Self.bookkeepingTable, primaryKey: "name", columns: [
            .init(name: "name", type: "text", notNull: true),
            .init(name: "applied_at", type: "double precision", notNull: true),
        ])
        return [bookkeeping] + schema.entities.map(table)
    }

    private func table(_ entity: Entity) -> PostgresTable {
        var columns = [PostgresTable.Column(name: entity.primaryKey.lowercased(), type: "bigint", notNull: true, identity: true)]
        for column in entity.storedColumns {
            let attribute = entity.attribute(named: column)
            columns.append(.init(name: column.lowercased(), type: Self.type(attribute?.type ?? .integer), notNull: attribute.map { !$0.isOptional } ?? false,
                                 unique: attribute?.isUnique ?? false, defaultValue: attribute?.defaultValue))
        }
        for attribute in sortKeys(of: entity) {
            columns.append(.init(name: Self.sortKeyColumn(attribute).lowercased(), type: "bytea", notNull: false))
        }
        var indexes = entity.foreignKeyIndexes.map { index in
            PostgresTable.Index(name: index.name.lowercased(), unique: false, columns: [.init(name: index.column.lowercased())])
        }
        for index in entity.indexes {
            indexes.append(.init(name: index.name.lowercased(), unique: index.isUnique, columns: index.columns.map { part in
                let isSortKey = part.collation == .localizedStandard
                return .init(name: (isSortKey ? Self.sortKeyColumn(part.column) : part.column).lowercased(), isSortKey: isSortKey,
                             descending: index.descending.contains(part.column))
            }))
        }
        let foreignKeys = entity.relationships.compactMap { relationship -> PostgresTable.ForeignKey? in
            guard let column = relationship.foreignKeyColumn,
                  let destination = schema.entities.first(where: { $0.name == relationship.destination }) else { return nil }
            return .init(column: column.lowercased(), destination: destination.name.lowercased(), destinationKey: destination.primaryKey.lowercased())
        }
        return PostgresTable(name: entity.name.lowercased(), primaryKey: entity.primaryKey.lowercased(), columns: columns,
                             indexes: indexes, foreignKeys: foreignKeys)
    }
}
