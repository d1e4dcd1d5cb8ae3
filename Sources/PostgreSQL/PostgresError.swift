/// An error from PostgreSQL or from libpq.
///
/// Server failures carry the SQLSTATE code and the server's primary message; the values
/// bound to the statement are never included, and a connection URL is named only with its
/// password redacted, so an error can be logged safely (after escaping: the message is the
/// server's text).
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in a form code can branch on.
    public enum Kind: Sendable, Hashable {
        /// The connection could not be made: `message` is libpq's reason.
        case cannotConnect
        /// A connection that was open is gone (server restart, network cut, terminated
        /// backend). `reconnect()` makes a new one.
        case connectionLost
        /// The server refused a statement: see `sqlState`.
        case server
        /// A result did not have the shape the caller asked for (a column missing, a
        /// value that is not a number).
        case unexpectedResult
        /// A value cannot be sent as given: text holding NUL, which PostgreSQL's text
        /// cannot store (libpq would silently cut it at the NUL).
        case invalidParameter
        /// The connection was closed by this program.
        case closed
        /// Every connection of a pool stayed busy for longer than the pool waits.
        case poolExhausted
    }

    /// What went wrong.
    public var kind: Kind
    /// What went wrong, in words: libpq's or the server's.
    public var message: String
    /// The server's five-character SQLSTATE, for `.server` errors.
    public var sqlState: String?
    /// The statement that failed, without bound values.
    public var sql: String?

    /// An error with these values.
    public init(_ kind: Kind, _ message: String, sqlState: String? = nil, sql: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.sql = sql
    }

    /// A transaction that failed with this error may succeed if run again from the start:
    /// a serialization failure (40001) or a deadlock (40P01).
    public var isRetryableTransactionFailure: Bool {
        sqlState == "40001" || sqlState == "40P01"
    }

    /// The server could not be reached, or was not taking sessions, for a reason that may
    /// pass: refused, timed out, unreachable, starting up, shutting down, in recovery; or
    /// a connection that was open is gone. A wrong password or a missing database is not.
    /// (libpq's connection messages are read: this program runs in the C locale, so they
    /// are libpq's English ones.)
    public var isTransientConnectionFailure: Bool {
        if isConnectionGone { return true }
        guard kind == .cannotConnect else { return false }
        let passing = ["Connection refused", "timeout expired", "timed out", "No route to host", "Network is unreachable",
                       "the database system is starting up", "the database system is shutting down", "in recovery mode",
                       "not yet accepting connections", "not accepting connections", "because of crash of another server process",
                       "server closed the connection unexpectedly", "too many clients", "too many connections", "Temporary failure in name resolution"]
        // A socket file that is not there: no server runs on it now (as "refused" on TCP).
        if message.contains("on socket") && message.contains("No such file or directory") { return true }
        return passing.contains { message.localizedCaseInsensitiveContains($0) }
    }

    /// The session ended under a statement: the connection was lost, or the server ended
    /// the session (57P01 administrator command, 57P02 crash of another process, 57P03
    /// not taking connections now, class 08 connection exceptions).
    public var isConnectionGone: Bool {
        kind == .connectionLost || ["57P01", "57P02", "57P03"].contains(sqlState ?? "") || sqlState?.hasPrefix("08") == true
    }

    /// A unique constraint was violated (23505).
    public var isUniqueViolation: Bool { sqlState == "23505" }

    public var description: String {
        var text = message
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let sql { text += " in: \(sql)" }
        return text
    }
}
