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
        /// Another session held a lock longer than the store waits (`lockTimeout`), or other
        /// sessions' writes conflicted with this one each time it was tried: try again.
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

    /// Runs `body`, turning the client's errors into the store's (`init(_:doing:location:)`).
    static func wrapping<T>(_ doing: String, location: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            throw PostgresStoreError(error, doing: doing, location: location)
        }
    }

    /// The client's error as the store's: `busy` when a lock was waited for too long, or a
    /// transaction conflicted with others' as many times as it was tried; else
    /// `database`. The message says what was being done (`doing`, such as "cannot copy
    /// into") to the database at `location` (redacted), then PostgreSQL's or libpq's words,
    /// never the SQL; the location once, whether or not those words name it.
    public init(_ error: PostgresError, doing: String, location: String) {
        let subject = error.message.contains(location) ? "the database" : location
        if error.sqlState == Self.lockNotAvailable {
            self.init(.busy, "\(doing) \(subject): another session held a lock on the store's tables for longer than the wait allowed; "
                      + "nothing was changed, try again", underlying: error)
        } else if error.isRetryableTransactionFailure {
            self.init(.busy, "\(doing) \(subject): other sessions' writes conflicted with this one each time it was tried; "
                      + "nothing was changed, try again", underlying: error)
        } else if error.kind == .cannotConnect {
            self.init(.database, error.message, underlying: error)  // "cannot connect to <location>: …" already
        } else {
            self.init(.database, "\(doing) \(subject): \(error.message)", underlying: error)
        }
    }
}
