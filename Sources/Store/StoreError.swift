import CSQLite

/// The one error type of the store.
///
/// SQLite failures carry SQLite's result code and message and the SQL that failed; the
/// values bound to that SQL are never included, so an error can be logged safely.
/// Conditions the store detects itself have a `kind` of their own.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in a form code can branch on.
    public enum Kind: Sendable, Hashable {
        /// SQLite reported an error: see `resultCode`.
        case sqlite
        /// The file exists but is not a SQLite database.
        case notADatabase
        /// The file is a SQLite database whose content is damaged.
        case corrupt
        /// The store was written by a newer version of the program: it has migrations this
        /// program does not know.
        case newerSchema
        /// A migration failed; the store stays at the last migration that succeeded.
        case migrationFailed
        /// The history a reader asked for has been trimmed: the reader must refetch.
        case historyTrimmed
        /// A fetch request, predicate or key path does not fit the schema.
        case invalidRequest
        /// A record that was expected does not exist.
        case recordNotFound
        /// A row could not be turned into a record.
        case decoding
        /// A delete was refused by a relationship whose delete rule is `deny`.
        case deleteDenied
        /// The store was closed.
        case closed
        /// There is no store at the path (and the store was not to be created).
        case notFound
        /// The file cannot be opened or created: `message` names the cause (permission
        /// denied, read-only file system) and the path.
        case cannotOpen
        /// A write on a store opened read-only.
        case readOnly
        /// A store opened read-only has migrations this program would apply first.
        case migrationNeeded
        /// The store was called from inside its own write on the same thread, which would
        /// wait for itself for ever.
        case reentrantWrite
    }

    /// What went wrong.
    public var kind: Kind
    /// SQLite's extended result code, when SQLite reported the error.
    public var resultCode: ResultCode?
    /// Another connection (another process) held the lock longer than this one waited: a
    /// failure that passes, not a broken store.
    public var isBusy: Bool {
        let code = resultCode?.primary
        return code == .busy || code == .locked
    }
    /// What went wrong, in words; it names no bound value.
    public var message: String
    /// The SQL that failed, without bound values.
    public var sql: String?

    /// An error with these values.
    public init(_ kind: Kind, _ message: String, resultCode: ResultCode? = nil, sql: String? = nil) {
        self.kind = kind
        self.message = message
        self.resultCode = resultCode
        self.sql = sql
    }

    /// The message, then SQLite's code and the failing SQL when there are any.
    public var description: String {
        var text = message
        // Conditions the message names in words need no SQLite code after them.
        let namedInWords: Set<Kind> = [.cannotOpen, .notFound, .readOnly, .migrationNeeded]
        if let resultCode, !namedInWords.contains(kind) { text += " (SQLite \(resultCode.primary.rawValue): \(resultCode.name))" }
        if let sql { text += " in SQL: \(sql)" }
        return text
    }
}

/// A SQLite result code (extended codes included), matchable in `catch` clauses:
/// `catch let error as StoreError where error.resultCode?.primary == .full`.
public struct ResultCode: Sendable, Hashable, RawRepresentable {
    /// The code as SQLite returns it, extended or primary.
    public var rawValue: Int32
    /// The code with this value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low 8 bits of an extended code).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xff) }
    /// SQLite's English name for the code ("database is locked").
    public var name: String { String(cString: sqlite3_errstr(rawValue)) }

    /// Success.
    public static let ok = ResultCode(rawValue: SQLITE_OK)
    /// A generic error (often an SQL error or a missing database).
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    /// Another connection holds a lock the call needs.
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    /// A table is locked by this same connection.
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    /// A write to a database that cannot be written.
    public static let readonly = ResultCode(rawValue: SQLITE_READONLY)
    /// The operating system reported an I/O error.
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    /// The database file is damaged.
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    /// The disk is full.
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    /// The database file cannot be opened.
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    /// A constraint was violated (UNIQUE, NOT NULL, foreign key…).
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    /// The file is not a database.
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
}
