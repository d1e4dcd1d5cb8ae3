import Foundation
import PostgreSQL
import Store

extension PostgresStore {
    /// How the database's tables differ from the ones this program makes, as sentences
    /// (empty when they are as made): a table, column, index or foreign key missing; a
    /// column of another type, or that allows NULL; an index on other columns, or that lost
    /// or gained uniqueness; a foreign key that leads elsewhere or is checked before commit.
    /// Read from `pg_catalog`, which every role may read. Tables, columns and indexes added
    /// beside the store's are not differences.
    public func schemaDifferences() throws -> [String] {
        try PostgresStoreError.wrapping("cannot read the schema of", location: redactedLocation) {
            let catalog = try CatalogSnapshot(connection, tables: schema.tables().map(\.name) + PostgresOutsideWrites.tables)
            return schema.tables().flatMap { catalog.differences(from: $0) } + catalog.triggerDifferences(tracked: trackedTables)
                + (try sessionDifferences())
        }
    }

    /// A database or role that makes its sessions replicas (`session_replication_role`)
    /// turns off every ordinary trigger, the history's among them, and the foreign keys.
    func sessionDifferences() throws -> [String] {
        let role = try connection.query("SELECT current_setting('session_replication_role') AS role").rows.first?.first ?? nil
        guard let role, role != "origin" else { return [] }
        return ["sessions run with session_replication_role = \(role): no watcher would hear of a write and foreign keys go unchecked"]
    }

    /// The history's triggers missing or disabled (then no watcher hears of the writes to
    /// those tables); `migrate` makes them again.
    func triggerDifferences() throws -> [String] {
        try CatalogSnapshot(connection, tables: trackedTables + PostgresOutsideWrites.tables).triggerDifferences(tracked: trackedTables)
    }

    private var trackedTables: [String] { schema.schema.entities.filter(\.isTracked).map { $0.name.lowercased() } }

    /// Throws unless the database holds this program's schema, as this program made it.
    public func requireIntact() throws {
        try requireCurrent()
        let differences = try schemaDifferences()
        guard differences.isEmpty else {
            let hint: String
            if try differences.count == triggerDifferences().count {
                hint = "run `topregions migrate` to make them again"
            } else if try differences.count == sessionDifferences().count {
                hint = "reset it for the database and role: ALTER DATABASE … RESET session_replication_role"
            } else {
                hint = "restore it from a backup, or copy a gallery into a new database"
            }
            throw PostgresStoreError(.foreignDatabase, "the store in \(redactedLocation) is not as this program made it: "
                                     + differences.prefix(5).joined(separator: "; ") + (differences.count > 5 ? "; …" : "") + " (\(hint))")
        }
    }
}

/// What `pg_catalog` says of the store's tables: columns, indexes, foreign keys.
private struct CatalogSnapshot {
    struct Column { var type: String; var notNull: Bool; var identity: Bool }
    struct Index { var table: String; var unique: Bool; var columns: [String] }
    struct ForeignKey { var destination: String; var deferred: Bool }

    var columns: [String: [String: Column]] = [:]
    var indexes: [String: Index] = [:]
    /// By "table.column".
    var foreignKeys: [String: [ForeignKey]] = [:]
    /// By table, its triggers' names and whether each fires in an ordinary session (not
    /// disabled, nor enabled for replica sessions only).
    var triggers: [String: [String: Bool]] = [:]

    init(_ connection: PostgresConnection, tables: [String]) throws {
        let names = PostgresValue.text("{" + tables.joined(separator: ",") + "}")
        let inSchema = "relnamespace = current_schema()::regnamespace"
        let columnRows = try connection.query("""
            SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull::text, (a.attidentity <> '')::text
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            WHERE c.\(inSchema) AND c.relkind IN ('r', 'p') AND c.relname = ANY($1::text[]) AND a.attnum > 0 AND NOT a.attisdropped
            """, [names]).rows
        for row in columnRows where row.count == 5 {
            guard let table = row[0], let column = row[1], let type = row[2] else { continue }
            columns[table, default: [:]][column] = Column(type: type, notNull: row[3] == "true", identity: row[4] == "true")
        }
        let indexRows = try connection.query("""
            SELECT t.relname, i.relname, x.indisunique::text, k.ordinality, pg_get_indexdef(x.indexrelid, k.ordinality::int, true)
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
            CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ordinality)
            WHERE t.\(inSchema) AND t.relname = ANY($1::text[]) AND k.ordinality <= x.indnkeyatts
            ORDER BY i.relname, k.ordinality
            """, [names]).rows
        for row in indexRows where row.count == 5 {
            guard let table = row[0], let name = row[1], let column = row[4] else { continue }
            indexes[name, default: Index(table: table, unique: row[2] == "true", columns: [])].columns.append(column)
        }
        let keyRows = try connection.query("""
            SELECT t.relname, a.attname, f.relname,
                   (k.condeferrable AND k.condeferred AND k.convalidated AND k.confdeltype = 'a' AND k.confupdtype = 'a')::text
            FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_class f ON f.oid = k.confrelid
            JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
            WHERE k.contype = 'f' AND cardinality(k.conkey) = 1 AND t.\(inSchema) AND t.relname = ANY($1::text[])
            """, [names]).rows
        for row in keyRows where row.count == 4 {
            guard let table = row[0], let column = row[1], let destination = row[2] else { continue }
            foreignKeys["\(table).\(column)", default: []].append(ForeignKey(destination: destination, deferred: row[3] == "true"))
        }
        let triggerRows = try connection.query("""
            SELECT c.relname, t.tgname, (t.tgenabled IN ('O', 'A'))::text
            FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
            WHERE NOT t.tgisinternal AND c.\(inSchema) AND c.relname = ANY($1::text[])
            """, [names]).rows
        for row in triggerRows where row.count == 3 {
            guard let table = row[0], let name = row[1] else { continue }
            triggers[table, default: [:]][name] = row[2] == "true"
        }
    }

    /// The history's triggers (`PostgresHistorySchema`) each tracked table lacks, or has
    /// disabled; and that of outside writes and their table of rows (`PostgresOutsideWrites`).
    func triggerDifferences(tracked: [String]) -> [String] {
        let expected = [PostgresHistorySchema.triggerName, PostgresHistorySchema.insertTriggerName, PostgresHistorySchema.deleteTriggerName,
                        PostgresOutsideWrites.truncateTriggerName]
        let outside = triggerDifference(PostgresOutsideWrites.triggerName, on: PostgresOutsideWrites.table,
                                        consequence: "watchers would not hear of writes from psql or other programs")
        let rows = columns[PostgresOutsideWrites.rowsTable] == nil
            ? "table \(PostgresOutsideWrites.rowsTable) is missing: writes from psql or other programs would fail" : nil
        return tracked.flatMap { table in
            expected.compactMap { triggerDifference($0, on: table, consequence: "watchers would not hear of its writes") }
        } + [outside, rows].compactMap { $0 }
    }

    private func triggerDifference(_ name: String, on table: String, consequence: String) -> String? {
        switch triggers[table]?[name] {
        case nil: return "table \(table) has no trigger \(name): \(consequence)"
        case false?: return "trigger \(name) on \(table) is disabled (or fires in replica sessions only): \(consequence)"
        case true?: return nil
        }
    }

    func differences(from table: PostgresTable) -> [String] {
        guard let actual = columns[table.name] else { return ["table \(table.name) is missing"] }
        var found: [String] = []
        for column in table.columns {
            let name = "\(table.name).\(column.name)"
            guard let present = actual[column.name] else { found.append("column \(name) is missing"); continue }
            if present.type != column.type { found.append("column \(name) is \(present.type), not \(column.type)") }
            if column.notNull && !present.notNull { found.append("column \(name) allows NULL") }
            if column.identity && !present.identity { found.append("column \(name) no longer numbers new rows (identity)") }
        }
        for index in table.indexes {
            guard let present = indexes[index.name], present.table == table.name else { found.append("index \(index.name) is missing"); continue }
            if present.unique != index.unique { found.append("index \(index.name) is \(present.unique ? "" : "not ")unique") }
            let matches = present.columns.count == index.columns.count
                && zip(present.columns, index.columns).allSatisfy { actual, expected in
                    expected.isSortKey ? actual.contains(expected.name) && actual.contains("(") : actual == expected.name
                }
            if !matches { found.append("index \(index.name) is on (\(present.columns.joined(separator: ", "))), not (\(index.columns.map(\.name).joined(separator: ", ")))") }
        }
        for unique in table.uniqueColumns where !indexes.values.contains(where: { $0.table == table.name && $0.unique && $0.columns == [unique] }) {
            found.append("column \(table.name).\(unique) is no longer unique")
        }
        for key in table.foreignKeys {
            let name = "\(table.name).\(key.column)"
            let present = foreignKeys[name] ?? []
            if !present.contains(where: { $0.destination == key.destination }) {
                found.append("foreign key \(name) → \(key.destination) is missing")
            } else if !present.contains(where: { $0.destination == key.destination && $0.deferred }) {
                found.append("foreign key \(name) is not as made: checked before commit, not validated, or deleting or updating along")
            }
        }
        return found
    }
}
