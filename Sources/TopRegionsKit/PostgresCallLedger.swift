import Flickr
import Foundation
import PostgreSQL

/// The Flickr API budget kept in a PostgreSQL database, so that processes on many hosts
/// sharing one API key stay within its calls an hour together (`--rate-ledger`).
///
/// Each key has its own budget, named by a digest of the key (the key itself is never
/// stored). A reservation counts the key's calls in the window and adds one in a single
/// transaction holding a transaction-level advisory lock on that budget, so two hosts never
/// both take the last call; times are the database server's, so hosts whose clocks
/// disagree still share one window.
public final class PostgresCallLedger: CallLedger, @unchecked Sendable {
    /// The database's location with any password hidden, for messages.
    public let redactedLocation: String
    /// Which budget this ledger counts: hex SHA-256 of the key (or of the endpoint when
    /// there is no key).
    let budget: String
    private let pool: PostgresPool
    /// libpq blocks: calls run here, never on the cooperative pool's threads.
    private let queue = DispatchQueue(label: "topregions.rate-ledger")
    private var tableIsReady = false

    /// Calls older than this are deleted (no window is longer).
    static let kept: TimeInterval = 86_400
    /// How many times a reservation that lost its connection is tried again.
    static let reconnectAttempts = 2

    /// A ledger in the database at `location` for `key`'s budget; connects now, so that a
    /// database that cannot be reached is told at once. The table is created on first use.
    public init(location: String, budgetOf key: String) throws {
        pool = try PostgresPool(location, size: 1)
        redactedLocation = pool.redactedLocation
        budget = try APIToken.hash("flickr-key:" + key)
    }

    public func calls(since date: Date) async -> [Date] {
        let seconds: [Double] = (try? await run { connection -> [Double] in
            let result = try connection.query("""
                SELECT extract(epoch FROM at)::text AS at FROM topregions_api_call
                WHERE budget = $1 AND at >= to_timestamp($2) ORDER BY at
                """, [.text(self.budget), .real(date.timeIntervalSince1970)])
            return try result.rows.indices.compactMap { try result.text($0, "at").flatMap(Double.init) }
        }) ?? []
        return seconds.map(Date.init(timeIntervalSince1970:))
    }

    public func record(_ date: Date) async {
        _ = try? await run { connection in
            try connection.transaction(.readCommitted) { connection in
                    try self.insert(connection)
            }
        }
    }

    public func reserve(limit: Int, window: TimeInterval) async throws -> TimeInterval? {
        try await run { connection in
            try connection.transaction(.readCommitted) { connection in
                    try connection.query("SELECT pg_advisory_xact_lock(hashtext('topregions.api_call:' || $1))", [.text(self.budget)])
                // clock_timestamp, not now(): the time after the lock was granted.
                let counted = try connection.query("""
                    SELECT count(*) AS calls,
                           extract(epoch FROM min(at) + make_interval(secs => $2) - clock_timestamp())::text AS wait
                    FROM topregions_api_call WHERE budget = $1 AND at > clock_timestamp() - make_interval(secs => $2)
                    """, [.text(self.budget), .real(window)])
                if let calls = try counted.integer(0, "calls"), calls >= limit {
                    let wait = try counted.text(0, "wait").flatMap(Double.init) ?? window
                    return max(0.001, min(wait, window))
                }
                try self.insert(connection)
                return nil
            }
        }
    }

    /// Closes the ledger's connection.
    public func close() { pool.close() }

    private func insert(_ connection: PostgresConnection) throws {
        try connection.query("INSERT INTO topregions_api_call (budget, at) VALUES ($1, clock_timestamp())", [.text(budget)])
        try connection.query("DELETE FROM topregions_api_call WHERE budget = $1 AND at < clock_timestamp() - make_interval(secs => $2)",
                             [.text(budget), .real(Self.kept)])
    }

    /// Creates the table once per ledger; concurrent creators are serialised by a lock, as
    /// `CREATE TABLE IF NOT EXISTS` alone may fail when two run at once.
    private func prepareTable(_ connection: PostgresConnection) throws {
        guard !tableIsReady else { return }
        _ = try connection.transaction(.readCommitted) { connection in
            try connection.execute("""
                SELECT pg_advisory_xact_lock(hashtext('topregions.api_call'));
                CREATE TABLE IF NOT EXISTS topregions_api_call (budget text NOT NULL, at timestamptz NOT NULL);
                CREATE INDEX IF NOT EXISTS topregions_api_call_budget_at ON topregions_api_call (budget, at)
                """)
        }
        tableIsReady = true
    }

    /// `body` on the ledger's queue with its connection; tried again on a new connection
    /// when the old one was lost (a reservation whose commit was lost may count twice,
    /// which errs on the side of the budget).
    private func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.withRetries(body) })
            }
        }
    }

    private func withRetries<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try pool.withConnection { connection in
                    try prepareTable(connection)
                    return try body(connection)
                }
            } catch let error as PostgresError where error.kind == .connectionLost && attempt < Self.reconnectAttempts {
                attempt += 1
            }
        }
    }
}
