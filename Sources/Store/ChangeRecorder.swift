import CSQLite
import Foundation

/// Learns of every row a write transaction changes from SQLite itself (the pre-update
/// hook), and keeps the transaction's `ChangeSet`: whatever writes a row (a record's
/// insert or update, a delete rule, raw SQL, a trigger), the history and every observer
/// hear of it. Nothing above the store has to report a change.
///
/// For each table of a tracked entity it knows the key each column stands for (the
/// attribute's name, or the relationship's for a foreign key), so that an update records
/// only the keys whose values changed, and a change of a to-one relationship marks the
/// objects at the other end too (both ends of a relationship change, as Core Data has it).
///
/// Not thread-safe: it belongs to the writer connection, used under the writer's lock.
final class ChangeRecorder {
    /// What a table's columns mean, by column index (from `PRAGMA table_info`).
    struct TableMap {
        /// The entity's place in `entityNames` and `pending`.
        var entity: Int
        /// Per column: the key a change records (nil for the primary key).
        var keys: [String?]
        /// Foreign key columns: index, destination entity (its place), inverse name there.
        var foreignKeys: [(column: Int32, destination: Int, inverse: String)]
    }

    /// The changes so far, per entity by place (no dictionary of names on the hot path).
    private var pending: [EntityChanges] = []
    private var entityNames: [String] = []
    private var tables: [String: TableMap] = [:]
    /// Set while a store is loaded from a copy (`Store.loadWithoutHistory`): rows go unrecorded.
    var isSuspended = false

    /// What the transaction has changed so far.
    var changes: ChangeSet {
        var entities: [String: EntityChanges] = [:]
        for (index, changes) in pending.enumerated() where !changes.isEmpty { entities[entityNames[index]] = changes }
        return ChangeSet(entities: entities)
    }
    /// The last table looked up, by its name's bytes (rows of one statement come in runs).
    private var lastName: [CChar] = []
    private var lastMap: TableMap?

    /// Installs the hook on `connection` for the tracked entities of `schema`. The
    /// connection keeps the recorder (`Connection.changeRecorder`) for as long as it lives.
    init(connection: Connection, schema: Schema) throws {
        try reloadTables(connection: connection, schema: schema)
        sqlite3_preupdate_hook(connection.handle, { context, db, operation, _, table, oldKey, newKey in
            guard let context, let db, let table else { return }
            Unmanaged<ChangeRecorder>.fromOpaque(context).takeUnretainedValue()
                .record(db, operation: operation, table: table, oldKey: oldKey, newKey: newKey)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Reads each tracked entity's columns as the file has them (a migration may have
    /// added some at the end).
    func reloadTables(connection: Connection, schema: Schema) throws {
        var tables: [String: TableMap] = [:]
        entityNames = schema.entities.map(\.name)
        pending = entityNames.map { _ in EntityChanges() }
        let place = Dictionary(entityNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        for entity in schema.entities where entity.isTracked {
            let columns = try connection.rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(entity.name)])
                .compactMap { $0[0].string }
            guard !columns.isEmpty, let ordinal = place[entity.name] else { continue }
            var map = TableMap(entity: ordinal, keys: [], foreignKeys: [])
            for (index, column) in columns.enumerated() {
                if column == entity.primaryKey {
                    map.keys.append(nil)
                } else if let relationship = entity.relationship(forColumn: column) {
                    map.keys.append(relationship.name)
                    if let inverse = relationship.inverse, let destination = place[relationship.destination] {
                        map.foreignKeys.append((Int32(index), destination, inverse))
                    }
                } else {
                    map.keys.append(column)
                }
            }
            tables[entity.name] = map
        }
        self.tables = tables
        lastName = []
        lastMap = nil
    }

    /// Starts a transaction's change set afresh.
    func reset() {
        for index in pending.indices where !pending[index].isEmpty { pending[index] = EntityChanges() }
    }

    private func map(for table: UnsafePointer<CChar>) -> TableMap? {
        if !lastName.isEmpty && strcmp(lastName, table) == 0 { return lastMap }
        let name = String(cString: table)
        lastName = Array(name.utf8CString)
        lastMap = tables[name]
        return lastMap
    }

    private func record(_ db: OpaquePointer, operation: Int32, table: UnsafePointer<CChar>, oldKey: Int64, newKey: Int64) {
        guard !isSuspended, let map = map(for: table) else { return }
        switch operation {
        case SQLITE_INSERT:
            pending[map.entity].recordInsert(newKey)
            for foreignKey in map.foreignKeys {
                if let target = Self.integer(db, foreignKey.column, new: true) { markInverse(foreignKey.destination, target, foreignKey.inverse) }
            }
        case SQLITE_DELETE:
            for foreignKey in map.foreignKeys {
                if let target = Self.integer(db, foreignKey.column, new: false) { markInverse(foreignKey.destination, target, foreignKey.inverse) }
            }
            pending[map.entity].recordDelete(oldKey)
        case SQLITE_UPDATE where oldKey != newKey:
            // The primary key itself changed: to a reader, one object went and another came.
            pending[map.entity].recordDelete(oldKey)
            pending[map.entity].recordInsert(newKey)
        case SQLITE_UPDATE:
            recordUpdate(db, map: map, id: newKey)
        default:
            break
        }
    }

    private func recordUpdate(_ db: OpaquePointer, map: TableMap, id: Int64) {
        var keys: [String] = []
        let count = min(Int(sqlite3_preupdate_count(db)), map.keys.count)
        for index in 0..<count {
            guard let key = map.keys[index] else { continue }
            var old: OpaquePointer?, new: OpaquePointer?
            guard sqlite3_preupdate_old(db, Int32(index), &old) == SQLITE_OK, sqlite3_preupdate_new(db, Int32(index), &new) == SQLITE_OK,
                  !Self.same(old, new) else { continue }
            keys.append(key)
            if let foreignKey = map.foreignKeys.first(where: { $0.column == Int32(index) }) {
                for value in [old, new] where value.map({ sqlite3_value_type($0) == SQLITE_INTEGER }) ?? false {
                    markInverse(foreignKey.destination, sqlite3_value_int64(value), foreignKey.inverse)
                }
            }
        }
        if !keys.isEmpty { pending[map.entity].recordUpdate(id, keys) }
    }

    /// The object at the other end of a changed relationship is updated under the
    /// inverse's name (a bulk insert marks the same few objects again and again: cheap).
    private func markInverse(_ entity: Int, _ id: Int64, _ inverse: String) {
        pending[entity].recordUpdate(id, inverse)
    }

    /// The integer in a column before (`new` false) or after the change, or nil (NULL).
    private static func integer(_ db: OpaquePointer, _ column: Int32, new: Bool) -> Int64? {
        var value: OpaquePointer?
        let result = new ? sqlite3_preupdate_new(db, column, &value) : sqlite3_preupdate_old(db, column, &value)
        guard result == SQLITE_OK, let value, sqlite3_value_type(value) == SQLITE_INTEGER else { return nil }
        return sqlite3_value_int64(value)
    }

    /// Whether two values are the same as stored: numbers by value, text and blobs by bytes.
    private static func same(_ left: OpaquePointer?, _ right: OpaquePointer?) -> Bool {
        guard let left, let right else { return left == nil && right == nil }
        let leftType = sqlite3_value_type(left), rightType = sqlite3_value_type(right)
        switch (leftType, rightType) {
        case (SQLITE_NULL, SQLITE_NULL):
            return true
        case (SQLITE_INTEGER, SQLITE_INTEGER):
            return sqlite3_value_int64(left) == sqlite3_value_int64(right)
        case (SQLITE_INTEGER, SQLITE_FLOAT), (SQLITE_FLOAT, SQLITE_INTEGER), (SQLITE_FLOAT, SQLITE_FLOAT):
            return sqlite3_value_double(left) == sqlite3_value_double(right)
        case (SQLITE_TEXT, SQLITE_TEXT):
            let count = sqlite3_value_bytes(left)
            guard count == sqlite3_value_bytes(right) else { return false }
            return count == 0 || memcmp(sqlite3_value_text(left), sqlite3_value_text(right), Int(count)) == 0
        case (SQLITE_BLOB, SQLITE_BLOB):
            let count = sqlite3_value_bytes(left)
            guard count == sqlite3_value_bytes(right) else { return false }
            return count == 0 || memcmp(sqlite3_value_blob(left), sqlite3_value_blob(right), Int(count)) == 0
        default:
            return false
        }
    }
}
