/// One row written in another database, as that database reports it (the PostgreSQL
/// store's triggers): which table, what happened, and the columns named as that database
/// names them (PostgreSQL folds them to lower case).
package struct RowChange: Sendable {
    package enum Kind: Sendable { case insert, update, delete }

    package var table: String
    package var kind: Kind
    /// The row's id before the change (updates and deletes).
    package var oldID: Int64?
    /// The row's id after the change (inserts and updates).
    package var newID: Int64?
    /// The columns whose value changed (updates).
    package var changedColumns: [String]
    /// Foreign key columns' values before and after the change (NULL ones left out).
    package var oldReferences: [String: Int64]
    package var newReferences: [String: Int64]

    package init(table: String, kind: Kind, oldID: Int64?, newID: Int64?, changedColumns: [String] = [],
                 oldReferences: [String: Int64] = [:], newReferences: [String: Int64] = [:]) {
        self.table = table
        self.kind = kind
        self.oldID = oldID
        self.newID = newID
        self.changedColumns = changedColumns
        self.oldReferences = oldReferences
        self.newReferences = newReferences
    }
}

/// Folds row changes into a transaction's `ChangeSet` with the rules `ChangeRecorder`
/// follows for SQLite's rows: an update records the keys (attribute names, relationship
/// names for foreign keys) whose values changed, and a changed reference marks the objects
/// at both ends. Tables and columns are matched without regard to case; columns the
/// schema does not name (a sort key beside a title) are left out.
package struct ChangeSetAssembler {
    private struct TableMap {
        var entity: String
        var primaryKey: String
        /// Per column (lower case): the key a change records.
        var keys: [String: String]
        /// Per foreign key column (lower case): the destination entity and the inverse's name.
        var inverses: [String: (destination: String, inverse: String)]
    }

    private var tables: [String: TableMap] = [:]
    package private(set) var changes = ChangeSet()

    package init(schema: Schema) {
        for entity in schema.entities where entity.isTracked {
            var map = TableMap(entity: entity.name, primaryKey: entity.primaryKey.lowercased(), keys: [:], inverses: [:])
            for column in entity.storedColumns {
                guard let relationship = entity.relationship(forColumn: column) else {
                    map.keys[column.lowercased()] = column
                    continue
                }
                map.keys[column.lowercased()] = relationship.name
                if let inverse = relationship.inverse {
                    map.inverses[column.lowercased()] = (relationship.destination, inverse)
                }
            }
            tables[entity.name.lowercased()] = map
        }
    }

    /// Whether `table` is one whose changes are recorded.
    package func tracks(_ table: String) -> Bool { tables[table.lowercased()] != nil }

    package mutating func record(_ change: RowChange) {
        guard let map = tables[change.table.lowercased()] else { return }
        switch change.kind {
        case .insert:
            guard let id = change.newID else { return }
            changes.recordInsert(map.entity, id)
            markInverses(map, change.newReferences)
        case .delete:
            guard let id = change.oldID else { return }
            markInverses(map, change.oldReferences)
            changes.recordDelete(map.entity, id)
        case .update:
            guard let old = change.oldID, let new = change.newID else { return }
            if old != new {
                // The primary key itself changed: to a reader, one object went and another came.
                changes.recordDelete(map.entity, old)
                changes.recordInsert(map.entity, new)
                return
            }
            let keys = change.changedColumns.compactMap { map.keys[$0.lowercased()] }
            guard !keys.isEmpty else { return }
            changes.recordUpdate(map.entity, new, keys)
            for column in change.changedColumns {
                let references = [change.oldReferences[column.lowercased()], change.newReferences[column.lowercased()]]
                markInverses(map, column: column.lowercased(), references.compactMap { $0 })
            }
        }
    }

    private mutating func markInverses(_ map: TableMap, _ references: [String: Int64]) {
        for (column, target) in references { markInverses(map, column: column.lowercased(), [target]) }
    }

    private mutating func markInverses(_ map: TableMap, column: String, _ targets: [Int64]) {
        guard let (destination, inverse) = map.inverses[column] else { return }
        for target in targets { changes.recordUpdate(destination, target, [inverse]) }
    }
}
