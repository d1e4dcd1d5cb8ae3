/// The SQL a database speaks, as far as fetch requests need (`QueryBuilder`): SQLite's,
/// or PostgreSQL's as the PostgreSQL store lays out the tables (`PostgresSchema`): names in
/// lower case, and text ordered by `localizedStandard` ordered by a stored sort key, since
/// PostgreSQL has no such collation.
public enum SQLDialect: Sendable {
    /// SQLite: `?` parameters, the store's own collations.
    case sqlite
    /// PostgreSQL: `$n` parameters, lower-case names; `sortKeyColumns[entity][attribute]`
    /// names the `bytea` column holding the attribute's `localizedStandard` key, of which
    /// indexes hold the first `indexedKeyBytes` bytes.
    case postgresql(sortKeyColumns: [String: [String: String]], indexedKeyBytes: Int)

    /// A table's or column's name as this database knows it, quoted.
    public func identifier(_ name: String) -> String {
        switch self {
        case .sqlite: return SQL.quote(name)
        case .postgresql: return SQL.quote(name.lowercased())
        }
    }

    /// The text of the `number`th bound parameter (from 1): raw SQL written for both
    /// databases spells its parameters with this.
    public func parameter(_ number: Int) -> String {
        switch self {
        case .sqlite: return "?"
        case .postgresql: return "$\(number)"
        }
    }

    /// A condition that is always `value` (SQLite has no boolean type; PostgreSQL's WHERE
    /// takes nothing else).
    func condition(_ value: Bool) -> String {
        switch self {
        case .sqlite: return value ? "1" : "0"
        case .postgresql: return value ? "TRUE" : "FALSE"
        }
    }

    public var isPostgreSQL: Bool {
        if case .postgresql = self { return true }
        return false
    }
}

/// Where a `ReadContext`'s queries run: a SQLite connection, or another database's
/// connection (the PostgreSQL store's), which hands rows over as values.
public protocol QueryRunner: AnyObject {
    /// The SQL the database speaks.
    var dialect: SQLDialect { get }
    /// How many queries this runner has run so far.
    var queriesRun: Int { get }
    /// Runs a query with `arguments` bound to its parameters, handing each row in turn to
    /// `body` through one reader (valid only during that call).
    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (ColumnReader) throws -> Void) throws
    /// The token of the newest commit the runner's snapshot includes.
    func currentToken() throws -> Int64
    /// Loads `rows` (values for `columns`, in order) into `table` with the database's bulk
    /// load, numbering them with its `primaryKey`'s sequence; their ids in the rows' order,
    /// or nil when the database has no bulk load (then nothing was written). Names are
    /// the schema's: the runner quotes them.
    func bulkInsert(into table: String, primaryKey: String, columns: [String], rows: [[SQLValue]]) throws -> [Int64]?
}

extension QueryRunner {
    public func bulkInsert(into table: String, primaryKey: String, columns: [String], rows: [[SQLValue]]) throws -> [Int64]? { nil }
}

extension Connection: QueryRunner {
    var dialect: SQLDialect { .sqlite }

    func forEachRow(_ sql: String, _ arguments: [SQLValue], _ body: (ColumnReader) throws -> Void) throws {
        let statement = try statement(sql)
        try statement.bind(arguments)
        let reader = ColumnReader(statement)
        while try statement.step() { try body(reader) }
    }

    func currentToken() throws -> Int64 {
        try History.currentToken(on: self)
    }
}

/// A store that can be read: the SQLite `Store`, or another database's store of the same
/// schema (the PostgreSQL store's reader). Code that only reads takes one of these.
public protocol StoreReading: AnyObject, Sendable {
    /// Runs `body` in a read transaction: every read inside sees one snapshot.
    func read<T>(_ body: (ReadContext) throws -> T) throws -> T
}

extension Store: StoreReading {}

/// A store that can be written: the SQLite `Store`, or another database's store of the
/// same schema. Code that writes through transactions takes one of these.
public protocol StoreWriting: StoreReading {
    /// Runs `body` in a write transaction and commits it, or rolls it back when `body` or
    /// the commit throws.
    @discardableResult
    func write<T>(author: String?, _ body: (Transaction) throws -> T) throws -> T
}

extension StoreWriting {
    /// `write(author: nil, body)`.
    @discardableResult
    public func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        try write(author: nil, body)
    }
}

extension Store: StoreWriting {}
