import Foundation

/// The isolation level a transaction runs at.
public enum PostgresIsolation: String, Sendable {
    case readCommitted = "READ COMMITTED"
    case repeatableRead = "REPEATABLE READ"
    case serializable = "SERIALIZABLE"
}

extension PostgresConnection {
    /// How many times a transaction is tried before its serialization failure or deadlock
    /// is thrown to the caller.
    public static let defaultTransactionAttempts = 8

    /// Runs `body` in a transaction and commits it. A serialization failure or deadlock,
    /// whether `body` or the commit meets it, rolls back and runs `body` again from the
    /// start, after a short random pause, up to `attempts` times in all; any other error
    /// rolls back and is thrown. `body` must have no effect outside the database that
    /// cannot be repeated.
    ///
    /// With `retryTurns`, a transaction that has failed once takes that session advisory
    /// lock before it tries again, and keeps it until it is done: writers that collided
    /// retry one at a time, each meeting only the first attempts of others, rather than
    /// colliding again among themselves until their attempts run out.
    public func transaction<Result>(_ isolation: PostgresIsolation = .serializable,
                                    attempts: Int = defaultTransactionAttempts,
                                    retryTurns: Int64? = nil,
                                    _ body: (PostgresConnection) throws -> Result) throws -> Result {
        var attempt = 1
        var heldTurn: Int64?
        defer { if let heldTurn { _ = try? advisoryUnlock(heldTurn) } }
        while true {
            try execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)")
            do {
                let result = try body(self)
                try execute("COMMIT")
                return result
            } catch let error as PostgresError where error.isRetryableTransactionFailure && attempt < attempts {
                try rollBackIfConnected()
                if heldTurn == nil, let retryTurns {
                    try advisoryLock(retryTurns)
                    heldTurn = retryTurns
                }
                // Sleeping is the point: a pause with jitter before the retry lets the
                // conflicting transaction finish (there is no event to wait for).
                Thread.sleep(forTimeInterval: Self.retryPause(attempt: attempt))
                attempt += 1
            } catch {
                try? rollBackIfConnected()
                throw error
            }
        }
    }

    private func rollBackIfConnected() throws {
        if isConnected { try execute("ROLLBACK") }
    }

    /// A random pause that grows with the attempt (at most about 0.1 s), so that two
    /// transactions that collided do not collide again in step.
    static func retryPause(attempt: Int) -> TimeInterval {
        let ceiling = min(0.1, 0.002 * Double(1 << min(attempt, 6)))
        return Double.random(in: 0...ceiling)
    }
}
