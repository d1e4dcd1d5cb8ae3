/// PostgreSQL's session-level advisory locks: held by a connection until it unlocks or
/// ends, so a process that dies (or whose network goes) releases its locks with its
/// connection, without anything left behind to clean up.
extension PostgresConnection {
    /// Takes the lock `key` if no other session holds it; true when this one now holds it.
    public func tryAdvisoryLock(_ key: Int64) throws -> Bool {
        try query("SELECT pg_try_advisory_lock($1) AS taken", [.integer(key)]).boolean(0, "taken") ?? false
    }

    /// Takes the lock `key`, waiting while another session holds it (at most the
    /// session's `lock_timeout`).
    public func advisoryLock(_ key: Int64) throws {
        _ = try query("SELECT pg_advisory_lock($1)", [.integer(key)])
    }

    /// Takes the lock `key` shared: any number of sessions hold it at once (each is seen
    /// in `advisoryLockHoldersQuery`); waits only while a session holds it alone.
    public func advisoryLockShared(_ key: Int64) throws {
        _ = try query("SELECT pg_advisory_lock_shared($1)", [.integer(key)])
    }

    /// Releases the lock `key`; false when this session did not hold it.
    @discardableResult
    public func advisoryUnlock(_ key: Int64) throws -> Bool {
        try query("SELECT pg_advisory_unlock($1) AS released", [.integer(key)]).boolean(0, "released") ?? false
    }

    /// The server process of the session holding the lock `key` in this database, or nil
    /// when none does (a lock of one key in another database is another lock).
    public func advisoryLockHolder(_ key: Int64) throws -> Int32? {
        let result = try query(Self.advisoryLockHolderQuery, [.integer(key)])
        return try result.rows.isEmpty ? nil : result.integer(0, "pid").map { Int32(truncatingIfNeeded: $0) }
    }

    /// The holder of the advisory lock `$1` (a bigint) in the current database: its `pid`.
    public static let advisoryLockHolderQuery = "SELECT pid FROM pg_locks l WHERE \(heldAdvisoryLock) LIMIT 1"

    /// The sessions holding the lock `$1` (a bigint) in the current database, shared or
    /// not: each one's `pid` and `application_name` (which every role may read of every
    /// session), in the order of their server processes.
    public static let advisoryLockHoldersQuery = """
        SELECT l.pid, a.application_name FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE \(heldAdvisoryLock) ORDER BY l.pid
        """

    /// The rows of `pg_locks l` granting the advisory lock `$1` (a bigint) in the current
    /// database. A bigint key is kept as two 32-bit halves, classid the high and objid the low.
    private static let heldAdvisoryLock = """
        l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = (($1::bigint >> 32) & 4294967295)::oid AND l.objid = ($1::bigint & 4294967295)::oid
        """
}
