import Foundation

/// One committed transaction as the history table keeps it.
public struct HistoryEntry: Sendable, Equatable {
    /// Increases with every commit that changed something; never reused, even after trimming.
    public var token: Int64
    /// When the transaction committed, by the committing process's clock.
    public var committedAt: Date
    /// Which store instance committed it (one per `Store` object, in any process).
    public var origin: String
    /// The author the writer named, if any (for example, a view making a user-driven change).
    public var author: String?
    /// What the transaction changed.
    public var changes: ChangeSet

    package init(token: Int64, committedAt: Date, origin: String, author: String?, changes: ChangeSet) {
        self.token = token
        self.committedAt = committedAt
        self.origin = origin
        self.author = author
        self.changes = changes
    }
}

/// Reads and writes the history table on a connection.
enum History {
    static let horizonKey = "history_horizon"

    /// Appends a committed transaction's changes; returns its token.
    static func append(_ changes: ChangeSet, origin: String, author: String?, on connection: Connection) throws -> Int64 {
        try connection.run("INSERT INTO store_history (committed_at, origin, author, changes) VALUES (?, ?, ?, ?)",
                           [.real(Date().timeIntervalSince1970), .text(origin), author.map { .text($0) } ?? .null,
                            .blob(changes.encoded())])
        return connection.lastInsertedRowID
    }

    /// The newest token, 0 when nothing was ever committed.
    static func currentToken(on connection: Connection) throws -> Int64 {
        // sqlite_sequence remembers the highest token even when every row was trimmed.
        let sequence = try connection.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'store_history'")?.int64 ?? 0
        return sequence
    }

    /// Tokens at or below the horizon have been trimmed.
    static func horizon(on connection: Connection) throws -> Int64 {
        try connection.scalar("SELECT value FROM store_metadata WHERE key = ?", [.text(horizonKey)])?.int64 ?? 0
    }

    /// The transactions committed after `token`, oldest first; throws `historyTrimmed` when
    /// some of them are no longer kept.
    static func entries(since token: Int64, on connection: Connection) throws -> [HistoryEntry] {
        let horizon = try horizon(on: connection)
        guard token >= horizon else {
            throw StoreError(.historyTrimmed,
                             "History since token \(token) is gone: it was trimmed up to token \(horizon); refetch instead")
        }
        return try connection.rows("SELECT token, committed_at, origin, author, changes FROM store_history WHERE token > ? ORDER BY token",
                                   [.integer(token)]).map { row in
            HistoryEntry(token: try row.int64("token"), committedAt: Date(timeIntervalSince1970: try row.double("committed_at")),
                         origin: try row.string("origin"), author: row.optionalString("author"),
                         changes: try ChangeSet(encoded: row.optionalBytes("changes") ?? []))
        }
    }

    /// Deletes entries committed before `date` and moves the horizon past them.
    /// Returns how many were deleted.
    static func trim(before date: Date, on connection: Connection) throws -> Int {
        guard let newest = try connection.scalar("SELECT max(token) FROM store_history WHERE committed_at < ?",
                                                 [.real(date.timeIntervalSince1970)])?.int64 else { return 0 }
        try connection.run("DELETE FROM store_history WHERE token <= ?", [.integer(newest)])
        let deleted = connection.changedRowCount
        try connection.run("INSERT INTO store_metadata (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)",
                           [.text(horizonKey), .integer(newest)])
        return deleted
    }
}

/// What a write transaction returned, and the history token of its commit.
public struct Commit<Value> {
    /// What the transaction's body returned.
    public var value: Value
    /// The commit's token; nil when the transaction changed nothing (no history entry).
    public var token: Int64?

    package init(value: Value, token: Int64?) {
        self.value = value
        self.token = token
    }
}

extension Commit: Sendable where Value: Sendable {}
