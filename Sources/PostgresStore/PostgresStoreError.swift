import PostgreSQL

/// Why a PostgreSQL store could not be opened, created, copied or read.
public struct PostgresStoreError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The database holds tables of this product's names but is not a store of it.
        case foreignDatabase
        /// Written by a newer program: it has applied migrations this one does not know.
        case newerSchema
        /// Written by an older program, which this one cannot bring up to date.
        case olderSchema
        /// The database has no store yet (and the caller asked not to create one).
        case noStore
        /// A copy's destination already holds a gallery: a copy overwrites nothing.
        case notEmpty
        /// A value that cannot be stored as its column's type (named in the message).
        case invalidValue
        /// Another session held a lock longer than the store waits (`lockTimeout`): try again.
        case busy
        /// PostgreSQL refused, or the connection failed (the message says which).
        case database
    }

    public let kind: Kind
    public let message: String
    /// The client's error beneath, for `.database`.
    public let underlying: PostgresError?

    init(_ kind: Kind, _ message: String, underlying: PostgresError? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    public var description: String { message }

    /// SQLSTATE 55P03: `lock_timeout` ran out.
    static let lockNotAvailable = "55P03"

    /// Runs `body`, turning the client's errors into the store's (`init(_:doing:)`).
    static func wrapping<T>(_ doing: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            throw PostgresStoreError(error, doing: doing)
        }
    }

    /// The client's error as the store's: `busy` when a lock was waited for too long, else
    /// `database`, its message saying what was being done (`doing` names the database,
    /// redacted) and PostgreSQL's words, never the SQL.
    public init(_ error: PostgresError, doing: String) {
        if error.sqlState == Self.lockNotAvailable {
            self.init(.busy, "\(doing): another session held a lock on the store's tables for longer than the wait allowed; "
                      + "nothing was changed, try again", underlying: error)
        } else {
            // A failed connection's message names the database already.
            self.init(.database, error.kind == .cannotConnect ? error.message : "\(doing): \(error.message)", underlying: error)
        }
    }
}
