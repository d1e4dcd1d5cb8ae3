import Foundation
import Store

/// A store's schema as PostgreSQL tables (`PostgresTable`): the same tables, columns and
/// indexes as the SQLite store, named in lower case (`identifier(_:)`), with PostgreSQL's
/// types, and a `bytea` sort key beside each text column ordered by `localizedStandard`
/// (PostgreSQL has no such collation: its own depend on the server's ICU or libc; a key
/// computed in Swift orders the same on every server and exactly as SQLite does).
public struct PostgresSchema: Sendable {
    /// The entities, as the SQLite store has them.
    public let schema: Schema
    /// Per entity name, the text attributes that are ordered by `localizedStandard`.
    public let sortKeyAttributes: [String: [String]]
    /// The migrations a store of this schema has applied: the program's and the SQLite
    /// store's, then this module's own.
    public let migrationNames: [String]
    /// The statements that bring an existing store up to each of the program's later
    /// migrations (those added after the store was created), by migration name.
    let programUpgrades: [String: [String]]

    /// The PostgreSQL store's own migrations, applied after the program's.
    static let ownMigrations = ["postgres-store.v1.tables", PostgresHistorySchema.migration, PostgresHistorySchema.rowTriggersMigration,
                                PostgresHistorySchema.outsideWritesMigration, PostgresHistorySchema.outsideRowsMigration]

    /// The statements of each of the store's own migrations after the first, which a
    /// store of an older version of this program gets from `migrate`.
    func upgradeStatements(_ migration: String) -> [String]? {
        // A program migration changes tables: the change triggers, which name every
        // column, are made again after it.
        if let statements = programUpgrades[migration] { return statements + PostgresHistorySchema.triggerStatements(self) }
        switch migration {
        case PostgresHistorySchema.migration: return PostgresHistorySchema.tableStatements
        case PostgresHistorySchema.rowTriggersMigration, PostgresHistorySchema.outsideWritesMigration,
             PostgresHistorySchema.outsideRowsMigration:
            return PostgresHistorySchema.triggerStatements(self)
        default: return nil
        }
    }

    /// `sortKeyAttributes` must name text attributes of the schema's entities; every text
    /// attribute in an index ordered by `localizedStandard` gets a key whether named or not.
    /// `programUpgrades` gives, for a migration of `migrator` that a store created by an
    /// older program lacks, the PostgreSQL statements that apply it (`topregions migrate`
    /// runs them; a new store runs them after its tables, so they must be idempotent); a
    /// store lacking a migration without them is refused as too old.
    public init(_ schema: Schema, migrator: Migrator, sortKeyAttributes: [String: [String]] = [:],
                programUpgrades: [String: [String]] = [:]) {
        self.schema = schema
        self.programUpgrades = programUpgrades
        var keys = sortKeyAttributes
        for entity in schema.entities {
            for index in entity.indexes {
                for part in index.columns where part.collation == .localizedStandard {
                    keys[entity.name, default: []].append(part.column)
                }
            }
        }
        self.sortKeyAttributes = keys.mapValues { names in
            var seen = Set<String>()
            return names.filter { seen.insert($0).inserted }
        }
        self.migrationNames = migrator.migrationNames + Self.ownMigrations
    }

    /// The column beside `attribute` that holds its `localizedStandard` sort key.
    public static func sortKeyColumn(_ attribute: String) -> String { attribute + "_sortkey" }

    /// The text attributes of `entity` that have a sort key column.
    public func sortKeys(of entity: Entity) -> [String] { sortKeyAttributes[entity.name] ?? [] }

    /// The store's bookkeeping tables: the migrations applied.
    static let bookkeepingTable = "store_migrations"

    /// Throws when two tables, or two columns of a table, have names that differ only in
    /// case: PostgreSQL's lower-case names would be one.
    func validateNames() throws {
        try Self.refuseClashes(schema.entities.map(\.name), in: "the schema")
        for entity in schema.entities {
            let columns = [entity.primaryKey] + entity.storedColumns + sortKeys(of: entity).map(Self.sortKeyColumn)
            try Self.refuseClashes(columns, in: entity.name)
        }
    }

    private static func refuseClashes(_ names: [String], in place: String) throws {
        var seen: [String: String] = [:]
        for name in names {
            if let other = seen[name.lowercased()] {
                throw PostgresStoreError(.invalidValue, "\(place) has \(other) and \(name), one name in PostgreSQL's lower case")
            }
            seen[name.lowercased()] = name
        }
    }

    /// Every statement that creates the store in an empty database, in order: tables, then
    /// foreign keys (tables refer to each other in both directions), then indexes, then
    /// the change history.
    func createStatements() -> [String] {
        let tables = tables()
        return tables.map(Self.createTable) + tables.flatMap(Self.foreignKeys) + tables.flatMap(Self.indexes)
            + programStatements() + PostgresHistorySchema.tableStatements + PostgresHistorySchema.triggerStatements(self)
    }

    /// The program's upgrade statements in migration order: a new store runs them too, so
    /// what they add beyond the tables (an index of the database's own kind) is there from
    /// the start. They must change nothing when what they add is present already.
    private func programStatements() -> [String] {
        migrationNames.flatMap { programUpgrades[$0] ?? [] }
    }

    private static func createTable(_ table: PostgresTable) -> String {
        let columns = table.columns.map { column in
            var definition = "\(identifier(column.name)) \(column.type)"
            if column.identity { definition += " GENERATED BY DEFAULT AS IDENTITY" }
            if column.name == table.primaryKey {
                definition += " PRIMARY KEY"
            } else {
                if column.notNull { definition += " NOT NULL" }
                if column.unique { definition += " UNIQUE" }
            }
            if let value = column.defaultValue { definition += " DEFAULT \(literal(value))" }
            return definition
        }
        return "CREATE TABLE \(identifier(table.name)) (\(columns.joined(separator: ", ")))"
    }

    /// Foreign keys checked at commit, as SQLite's are: rows of a transaction may refer to
    /// each other in any order. The delete rules are the store's, not PostgreSQL's.
    private static func foreignKeys(_ table: PostgresTable) -> [String] {
        table.foreignKeys.map { key in
            "ALTER TABLE \(identifier(table.name)) ADD FOREIGN KEY (\(identifier(key.column))) REFERENCES "
                + "\(identifier(key.destination)) (\(identifier(key.destinationKey))) DEFERRABLE INITIALLY DEFERRED"
        }
    }

    /// The declared indexes and one on each foreign key no declared index leads with, as
    /// the SQLite store has. A sort key is indexed by its first `indexedKeyBytes` bytes: a
    /// B-tree entry holds at most about 2.7 kB, and the key of a long title in some scripts
    /// is longer. Ordering by the prefix, then the whole key, is ordering by the key.
    private static func indexes(_ table: PostgresTable) -> [String] {
        table.indexes.map { index in
            let parts = index.columns.map { column in
                (column.isSortKey ? indexedKey(column: column.name) : identifier(column.name)) + (column.descending ? " DESC" : "")
            }
            return "CREATE \(index.unique ? "UNIQUE " : "")INDEX \(identifier(index.name)) ON \(identifier(table.name)) (\(parts.joined(separator: ", ")))"
        }
    }

    /// How many bytes of a sort key an index holds.
    public static let indexedKeyBytes = 1024

    /// The expression an index orders `attribute` by: the first `indexedKeyBytes` of its
    /// key. A query reads the index in order with `ORDER BY <this>, <the key>`.
    public static func indexedSortKey(_ attribute: String) -> String {
        indexedKey(column: sortKeyColumn(attribute))
    }

    private static func indexedKey(column: String) -> String {
        "substring(\(identifier(column)) FROM 1 FOR \(indexedKeyBytes))"
    }

    static func type(_ type: ColumnType) -> String {
        switch type {
        case .integer: return "bigint"
        case .real: return "double precision"
        case .text: return "text"
        case .blob: return "bytea"
        }
    }

    /// The name PostgreSQL knows a table or column by, quoted: the SQLite store's name in
    /// lower case (`photoCount` is `photocount`), as PostgreSQL folds a name written
    /// without quotes. So SQL written for SQLite without quotes (`SELECT count(*) FROM
    /// Photo WHERE photoCount > 0`) means the same on both, and so does a person's in `psql`.
    public static func identifier(_ name: String) -> String {
        "\"" + name.lowercased().replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A literal for a column default in DDL (which cannot bind parameters).
    static func literal(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let integer): return String(integer)
        case .real(let real): return "'\(real)'::double precision"
        case .text(let text): return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let bytes): return "'\\x" + bytes.map { String(format: "%02x", $0) }.joined() + "'::bytea"
        }
    }
}
