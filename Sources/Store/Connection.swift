import CSQLite
import Foundation

/// One SQLite connection with its cache of prepared statements.
///
/// Deliberately not `Sendable`: a connection is used by one thread at a time, under the
/// lock of the store that owns it (see `ConnectionPool`).
final class Connection {
    let handle: OpaquePointer
    let path: String
    private var statements: [String: Statement] = [:]
    /// The writer's recorder of row changes (`ChangeRecorder`); nil on readers.
    var changeRecorder: ChangeRecorder?
    static let statementCacheLimit = 256

    /// Opens a connection. `flags` are SQLite's open flags; the URI flag is always added.
    init(path: String, flags: Int32) throws {
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let handle { sqlite3_close_v2(handle) }
            throw StoreError(.sqlite, "Cannot open the store at \(path): \(message)",
                             resultCode: ResultCode(rawValue: result))
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        SQLFunctions.register(on: handle)
        Self.keepSorterOnOneThread(handle)
    }

    /// The `caseInsensitive` collation's memo belongs to this connection and is not thread-safe. With helper
    /// threads (`PRAGMA threads` above 0), SQLite's sorter would call them from several
    /// threads at once, building an index or sorting without one: so none, whatever SQLite
    /// was built to start with, and a statement that asks for some is refused when prepared
    /// ("not authorized"). They would buy nothing anyway: Foundation's comparisons, most of
    /// such a sort, do not run in parallel.
    private static func keepSorterOnOneThread(_ handle: OpaquePointer) {
        sqlite3_limit(handle, SQLITE_LIMIT_WORKER_THREADS, 0)
        sqlite3_set_authorizer(handle, { _, action, name, argument, _, _ in
            guard action == SQLITE_PRAGMA, let name, String(cString: name).lowercased() == "threads",
                  let argument, Int(String(cString: argument)) != 0 else { return SQLITE_OK }
            return SQLITE_DENY
        }, nil)
    }

    deinit { close() }

    private var isOpen = true

    /// Closes the connection (once): the last connection to close a WAL file checkpoints it
    /// and removes its `-wal` and `-shm` files.
    func close() {
        guard isOpen else { return }
        isOpen = false
        statements.removeAll()
        if changeRecorder != nil { sqlite3_preupdate_hook(handle, nil, nil) }
        changeRecorder = nil
        sqlite3_close_v2(handle)
    }

    /// The error SQLite reported last on this connection, with `sql` for context.
    func lastError(_ result: Int32, sql: String?) -> StoreError {
        let message = String(cString: sqlite3_errmsg(handle))
        let code = ResultCode(rawValue: sqlite3_extended_errcode(handle))
        let kind: StoreError.Kind
        switch result & 0xff {
        case SQLITE_NOTADB: kind = .notADatabase
        case SQLITE_CORRUPT: kind = .corrupt
        default: kind = .sqlite
        }
        return StoreError(kind, message, resultCode: code.rawValue == 0 ? ResultCode(rawValue: result) : code, sql: sql)
    }

    /// Queries (read-only statements) prepared for running on this connection so far.
    private(set) var queriesRun = 0

    /// A prepared statement for `sql`, kept for reuse. Its bindings are cleared.
    func statement(_ sql: String) throws -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            if cached.isReadOnly { queriesRun += 1 }
            return cached
        }
        let statement = try Statement(connection: self, sql: sql)
        // Requests with IN lists of many lengths make many distinct statements; keep the
        // cache bounded. A statement still in use stays alive through its caller.
        if statements.count >= Self.statementCacheLimit { statements.removeAll(keepingCapacity: true) }
        statements[sql] = statement
        if statement.isReadOnly { queriesRun += 1 }
        return statement
    }

    /// Runs `body` between `BEGIN IMMEDIATE` and `COMMIT`, rolling back when it or the
    /// commit throws.
    func inImmediateTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs one or more statements that take no arguments and return no rows.
    func execute(_ sql: String) throws {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw lastError(result, sql: sql) }
    }

    /// Runs one statement with arguments, discarding any rows.
    func run(_ sql: String, _ arguments: [SQLValue] = []) throws {
        let statement = try self.statement(sql)
        try statement.bind(arguments)
        while try statement.step() {}
    }

    /// The rows of one statement.
    func rows(_ sql: String, _ arguments: [SQLValue] = []) throws -> [Row] {
        let statement = try self.statement(sql)
        try statement.bind(arguments)
        var rows: [Row] = []
        while try statement.step() { rows.append(statement.row()) }
        return rows
    }

    /// The first column of the first row, or nil when there is no row.
    func scalar(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLValue? {
        let statement = try self.statement(sql)
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        let value = statement.value(at: 0)
        statement.reset()
        return value
    }

    var cachedStatementCount: Int { statements.count }
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    var changedRowCount: Int { Int(sqlite3_changes(handle)) }
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }
    /// SQLite opened the file read-only (asked for read-write, it falls back silently when
    /// the file cannot be written).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// How this connection waits for another's lock (kept here: SQLite holds a pointer),
    /// to interrupt from another thread.
    private(set) var busyWait: BusyWait?

    func setBusyTimeout(milliseconds: Int32) {
        let wait = BusyWait(milliseconds: milliseconds)
        wait.install(on: handle)
        busyWait = wait
    }

    /// Drops cached statements (after a schema change they would be re-prepared anyway).
    func clearStatementCache() {
        statements.removeAll()
    }
}
