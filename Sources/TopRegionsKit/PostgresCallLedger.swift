import Flickr
import Foundation
import PostgreSQL

/// The rate ledger's database failed: a call was not counted, so it is not made.
public struct RateLedgerError: Error, Sendable, CustomStringConvertible {
    /// The database's location with any password hidden.
    public var location: String
    /// What PostgreSQL (or libpq) said.
    public var underlying: PostgresError

    /// Trying again later may help: the database could not be reached or went away (as
    /// for a store: a wrong password or a missing database will not pass).
    public var isTemporary: Bool {
        underlying.isTransientConnectionFailure || [.connectionLost, .poolExhausted].contains(underlying.kind)
            || underlying.isRetryableTransactionFailure
    }

    /// The failure in words, with the server's SQLSTATE (not the SQL: it is ours, not news).
    public var description: String {
        // A connection's message names the location already.
        if underlying.kind == .cannotConnect { return "the rate ledger: \(underlying.message)" }
        return "the rate ledger at \(location) failed: \(underlying.message)" + (underlying.sqlState.map { " (SQLSTATE \($0))" } ?? "")
    }
}

/// The Flickr API budget kept in a PostgreSQL database, so that processes on many hosts
/// sharing one API key stay within its calls an hour together (`--rate-ledger`).
///
/// Each key has its own budget, named by a digest of the key (the key itself is never
/// stored). A reservation counts the key's calls in the window and adds one in a single
/// statement (a function of the ledger's) holding a transaction-level advisory lock on that
/// budget, so two hosts never both take the last call; times are the database server's,
/// so hosts whose clocks disagree still share one window.
///
/// `@unchecked Sendable`: its state is immutable; connections are lent by its pool (a lock).
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

    /// How many times a reservation that lost its connection is tried again.
    static let reconnectAttempts = 2

    /// A ledger in the database at `location` for `key`'s budget; connects now, so that a
    /// database that cannot be reached is told at once. The table is created on first use.
    public init(location: String, budgetOf key: String) throws {
        redactedLocation = PostgresLocation.redacted(location)
        do {
            pool = try PostgresPool(location, size: 1)
        } catch let error as PostgresError {
            throw RateLedgerError(location: redactedLocation, underlying: error)
        }
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
        _ = try? await reserve(limit: nil, window: 0)
    }

    public func reserve(limit: Int, window: TimeInterval) async throws -> TimeInterval? {
        try await reserve(limit: Optional(limit), window: window)
    }

    /// One statement, so one round trip: the function takes the budget's lock, counts and
    /// inserts, and the statement's transaction ends (releasing the lock) as it returns.
    private func reserve(limit: Int?, window: TimeInterval) async throws -> TimeInterval? {
        try await run { connection in
            let result = try connection.query("SELECT topregions_reserve_call_v1($1, $2, $3)::text AS wait",
                                              [.text(self.budget), limit.map { .integer(Int64($0)) } ?? .null, .real(window)])
            guard let text = try result.text(0, "wait") else { return nil }
            return max(0.001, min(Double(text) ?? window, window))
        }
    }

    /// Closes the ledger's connection.
    public func close() { pool.close() }

    /// The ledger's table, and the function that counts a call: the calls of `budget` in
    /// the `window` seconds before now (the server's clock, read once the budget's lock is
    /// held; a row dated later, which no ledger writes, counts for nothing), and one more
    /// unless there are `calls_allowed` already (NULL: no limit). It returns NULL when it
    /// counted the call, else the seconds until the oldest call in the window leaves it.
    /// Calls older than a day, of any key, are deleted as new ones come. The function's
    /// name carries its version: a later program adds its own beside it.
    static let schema = """
        SELECT pg_advisory_xact_lock(hashtext('topregions.api_call'));
        CREATE TABLE IF NOT EXISTS topregions_api_call (budget text NOT NULL, at timestamptz NOT NULL);
        CREATE INDEX IF NOT EXISTS topregions_api_call_budget_at ON topregions_api_call (budget, at);
        CREATE INDEX IF NOT EXISTS topregions_api_call_at ON topregions_api_call (at);
        CREATE OR REPLACE FUNCTION topregions_reserve_call_v1(budget_name text, calls_allowed bigint, window_seconds double precision)
        RETURNS double precision LANGUAGE plpgsql AS $function$
        DECLARE
            calls bigint;
            oldest timestamptz;
            moment timestamptz;
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtext('topregions.api_call:' || budget_name));
            moment := clock_timestamp();
            IF calls_allowed IS NOT NULL THEN
                SELECT count(*), min(at) INTO calls, oldest FROM topregions_api_call
                WHERE budget = budget_name AND at > moment - make_interval(secs => window_seconds) AND at <= moment;
                IF calls >= calls_allowed THEN
                    RETURN extract(epoch FROM oldest + make_interval(secs => window_seconds) - moment);
                END IF;
            END IF;
            INSERT INTO topregions_api_call (budget, at) VALUES (budget_name, moment);
            DELETE FROM topregions_api_call WHERE at < moment - interval '1 day';
            RETURN NULL;
        END
        $function$
        """

    /// Creates the table once per ledger; concurrent creators are serialised by a lock, as
    /// `CREATE TABLE IF NOT EXISTS` alone may fail when two run at once.
    ///
    /// Where the table and function exist already, nothing is created: a role that may
    /// only select, insert and delete in the table (another host's) uses them as they are.
    private func prepareTable(_ connection: PostgresConnection) throws {
        guard !tableIsReady else { return }
        let ready = try connection.query("""
            SELECT to_regclass('topregions_api_call') IS NOT NULL
               AND to_regprocedure('topregions_reserve_call_v1(text,bigint,double precision)') IS NOT NULL AS ready
            """).boolean(0, "ready") ?? false
        if !ready {
            _ = try connection.transaction(.readCommitted) { connection in
                try connection.execute(Self.schema)
            }
        }
        tableIsReady = true
    }

    /// `body` on the ledger's queue with its connection; tried again on a new connection
    /// when the old one was lost (a reservation whose commit was lost may count twice,
    /// which errs on the side of the budget).
    private func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result {
                    do {
                        return try self.withRetries(body)
                    } catch let error as PostgresError {
                        throw RateLedgerError(location: self.redactedLocation, underlying: error)
                    }
                })
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
