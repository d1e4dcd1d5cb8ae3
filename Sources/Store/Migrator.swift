/// Migrations registered by name and applied in order, each in its own transaction. The
/// names applied are kept in the store, so each runs once; a store that has applied a
/// migration this program does not know was written by a newer version and is refused.
public struct Migrator: Sendable {
    /// One migration: changes the schema or data inside the transaction it is given.
    public typealias Migration = @Sendable (Transaction) throws -> Void

    private var registered: [(name: String, body: Migration)] = []

    /// The program's migrations, then the store's own.
    var migrations: [(name: String, body: Migration)] { registered + Self.storeMigrations }

    /// Migrations of the store itself, applied to every store after the program's.
    static let storeMigrations: [(name: String, body: Migration)] = [
        // The `localizedStandard` collation became ICU's total order (it was Foundation's
        // `localizedStandardCompare`, which is not transitive): indexes built in the old
        // order are rebuilt in the new one.
        ("store.v1.localized-standard-icu-order", { transaction in
            try transaction.execute("REINDEX \"\(SQLFunctions.localizedStandardCollation)\"")
        }),
    ]

    /// A migrator with no migrations.
    public init() {}

    /// Registers a migration. Names must be unique; order of registration is order of
    /// application.
    public mutating func register(_ name: String, _ body: @escaping Migration) {
        precondition(!migrations.contains { $0.name == name }, "Migration \(name) is registered twice")
        registered.append((name, body))
    }

    /// A migrator that creates the tables of these entities in one migration named `name`.
    public static func creating(_ entities: [Entity], name: String = "createTables") -> Migrator {
        var migrator = Migrator()
        migrator.register(name) { transaction in
            for entity in entities { try transaction.create(entity) }
        }
        return migrator
    }

    var names: [String] { migrations.map(\.name) }

    /// The names of every migration a store of this program has applied, in order: the
    /// program's, then the store's own. Another kind of store (PostgreSQL's) keeps them to
    /// say which schema it holds.
    public var migrationNames: [String] { names }
}

/// The store's own tables, created before any registered migration and named so they can
/// never clash with the product's.
enum StoreTables {
    static let migrations = "store_migrations"
    static let history = "store_history"
    static let metadata = "store_metadata"
    static let cache = "store_cache"

    /// Statements that create the bookkeeping tables when they are missing.
    static let create = """
        CREATE TABLE IF NOT EXISTS store_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL);
        CREATE TABLE IF NOT EXISTS store_history (
            token INTEGER PRIMARY KEY AUTOINCREMENT,
            committed_at REAL NOT NULL,
            origin TEXT NOT NULL,
            author TEXT,
            changes BLOB NOT NULL);
        CREATE INDEX IF NOT EXISTS store_history_committed_at ON store_history (committed_at);
        CREATE TABLE IF NOT EXISTS store_metadata (key TEXT PRIMARY KEY, value);
        CREATE TABLE IF NOT EXISTS store_cache (
            name TEXT PRIMARY KEY,
            fingerprint TEXT NOT NULL,
            token INTEGER NOT NULL,
            data BLOB NOT NULL);
        """

    /// The tables and indexes `create` makes, by name.
    static let createdNames: [String] = create.split(separator: "\n").compactMap { line in
        guard let range = line.range(of: "IF NOT EXISTS ") else { return nil }
        return line[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }.description
    }
}
