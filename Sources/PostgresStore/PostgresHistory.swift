import Foundation
import PostgreSQL
import Store

/// Reads and writes the PostgreSQL store's change history on a connection
/// (`PostgresHistorySchema`), as `History` does on a SQLite store's.
enum PostgresHistory {
    private static let history = PostgresHistorySchema.history

    /// The newest token, 0 when nothing was ever committed: the newest entry, or the
    /// horizon when every entry was trimmed.
    static func currentToken(on connection: PostgresConnection) throws -> Int64 {
        var token: Int64 = 0
        try connection.query("""
            SELECT greatest((SELECT coalesce(max(token), 0) FROM \(history)),
                            (SELECT coalesce(max(value), 0) FROM \(PostgresHistorySchema.metadata) WHERE key = $1))
            """, [.text(PostgresHistorySchema.horizonKey)]) { cursor in token = cursor.integer(0) ?? 0 }
        return token
    }

    /// Tokens at or below the horizon have been trimmed.
    static func horizon(on connection: PostgresConnection) throws -> Int64 {
        var horizon: Int64 = 0
        try connection.query("SELECT value FROM \(PostgresHistorySchema.metadata) WHERE key = $1",
                             [.text(PostgresHistorySchema.horizonKey)]) { cursor in horizon = cursor.integer(0) ?? 0 }
        return horizon
    }

    /// The transactions committed after `token`, oldest first; throws `historyTrimmed` when
    /// some of them are no longer kept. The rows of writes from outside this program
    /// (`PostgresOutsideWrites`) are read too, and told in `schema`'s terms. Call inside one
    /// transaction (a snapshot).
    static func entries(since token: Int64, schema: Schema, on connection: PostgresConnection) throws -> [HistoryEntry] {
        let horizon = try horizon(on: connection)
        guard token >= horizon else {
            throw StoreError(.historyTrimmed,
                             "History since token \(token) is gone: it was trimmed up to token \(horizon); refetch instead")
        }
        var entries: [HistoryEntry] = []
        var outside: [Int64: PostgresOutsideWrites.RowsReference] = [:]
        try connection.query("SELECT token, committed_at, origin, author, changes FROM \(history) WHERE token > $1 ORDER BY token",
                             [.integer(token)]) { cursor in
            guard let token = cursor.integer(0), let committedAt = cursor.real(1), let origin = cursor.text(2) else {
                throw StoreError(.corrupt, "An entry of \(history) after token \(token) has no token, time or origin")
            }
            let bytes = cursor.bytes(4) ?? []
            let reference = PostgresOutsideWrites.RowsReference(bytes)
            if let reference { outside[token] = reference }
            entries.append(HistoryEntry(token: token, committedAt: Date(timeIntervalSince1970: committedAt), origin: origin,
                                        author: cursor.text(3), changes: reference == nil ? try ChangeSet(encoded: bytes) : ChangeSet()))
        }
        guard !outside.isEmpty else { return entries }
        let changes = try PostgresOutsideWrites.changes(of: outside, schema: schema, on: connection)
        for index in entries.indices {
            if let told = changes[entries[index].token] { entries[index].changes = told }
        }
        return entries
    }

    /// Appends the transaction's changes and announces them; returns the entry. Call last,
    /// just before the commit: the token's lock is held until then, so tokens commit in
    /// order and a reader that sees one sees every smaller one.
    static func append(_ changes: ChangeSet, origin: String, author: String?, on connection: PostgresConnection) throws -> HistoryEntry {
        let committedAt = Date()
        var token: Int64?
        // One round trip: the lock is taken before the token is drawn (the insert reads the
        // lock's row first), and the notification sent with the token.
        try connection.query("""
            WITH locked AS (SELECT pg_advisory_xact_lock(\(PostgresHistorySchema.tokenLockKey))),
                 appended AS (
                     INSERT INTO \(history) (token, committed_at, origin, author, changes)
                     SELECT nextval('\(PostgresHistorySchema.tokens)'), $1, $2, $3, $4 FROM locked RETURNING token)
            SELECT token, pg_notify('\(PostgresHistorySchema.channel)', token::text) FROM appended
            """, [.real(committedAt.timeIntervalSince1970), .text(origin), author.map { .text($0) } ?? .null,
                  .bytes(changes.encoded())]) { cursor in token = cursor.integer(0) }
        guard let token else { throw StoreError(.corrupt, "Appending to \(history) returned no token") }
        return HistoryEntry(token: token, committedAt: committedAt, origin: origin, author: author, changes: changes)
    }

    /// Deletes entries committed before `date` and moves the horizon past them. Returns
    /// how many were deleted. Call inside a transaction.
    static func trim(before date: Date, on connection: PostgresConnection) throws -> Int {
        var newest: Int64?
        var deleted = 0
        try connection.query("DELETE FROM \(history) WHERE committed_at < $1 RETURNING token",
                             [.real(date.timeIntervalSince1970)]) { cursor in
            deleted += 1
            newest = max(newest ?? .min, cursor.integer(0) ?? .min)
        }
        guard let newest else { return 0 }
        try PostgresOutsideWrites.trim(through: newest, on: connection)
        try connection.query("""
            INSERT INTO \(PostgresHistorySchema.metadata) (key, value) VALUES ($1, $2)
            ON CONFLICT (key) DO UPDATE SET value = greatest(\(PostgresHistorySchema.metadata).value, excluded.value)
            """, [.text(PostgresHistorySchema.horizonKey), .integer(newest)])
        return deleted
    }

    /// The newest token in the history when the token sequence has not reached it (an
    /// entry written by hand, or the sequence reset): new commits would take smaller
    /// tokens, which every watcher would take for ones it has seen. Nil when all is well,
    /// or when this role may not read the sequence (a role that only reads the tables).
    static func tokenAheadOfSequence(on connection: PostgresConnection) throws -> Int64? {
        var ahead: Int64?
        // pg_sequences, not the sequence itself: its last_value is NULL (never used) rather
        // than an error for a role without the right to read it, which is asked apart.
        try connection.query("""
            SELECT h.newest FROM (SELECT max(token) AS newest FROM \(history)) AS h, pg_sequences AS s
            WHERE s.schemaname = current_schema() AND s.sequencename = '\(PostgresHistorySchema.tokens)'
              AND has_sequence_privilege(format('%I.%I', s.schemaname, s.sequencename), 'SELECT, USAGE')
              AND h.newest > coalesce(s.last_value, 0)
            """) { cursor in ahead = cursor.integer(0) }
        return ahead
    }

    /// Moves the token sequence to `token`: the next commit takes the token after it.
    static func moveSequence(to token: Int64, on connection: PostgresConnection) throws {
        try connection.query("SELECT setval('\(PostgresHistorySchema.tokens)', $1)", [.integer(token)])
    }

    /// The changes the triggers reported in the open transaction so far.
    static func pendingChanges(schema: Schema, on connection: PostgresConnection) throws -> ChangeSet {
        var assembler = ChangeSetAssembler(schema: schema)
        try connection.query(PostgresHistorySchema.pendingChangesQuery) { cursor in
            if let change = rowChange(cursor) { assembler.record(change) }
        }
        return assembler.changes
    }

    /// A row change as the triggers report it, in its first seven columns: table,
    /// operation, old id, new id, changed columns (a JSON array), old and new references.
    static func rowChange(_ cursor: PostgresCursor) -> RowChange? {
        guard let table = cursor.text(0), let kind = rowChangeKind(cursor.text(1)) else { return nil }
        return RowChange(table: table, kind: kind, oldID: cursor.integer(2), newID: cursor.integer(3),
                         changedColumns: decodeJSON([String].self, cursor.text(4)) ?? [],
                         oldReferences: references(cursor.text(5)), newReferences: references(cursor.text(6)))
    }

    private static func rowChangeKind(_ operation: String?) -> RowChange.Kind? {
        switch operation {
        case "INSERT": return .insert
        case "UPDATE": return .update
        case "DELETE": return .delete
        default: return nil
        }
    }

    /// A row's references as the triggers write them: `column=id` pairs, commas between
    /// (column names are the schema's, which hold neither).
    static func references(_ text: String?) -> [String: Int64] {
        guard let text, !text.isEmpty else { return [:] }
        var references: [String: Int64] = [:]
        for pair in text.split(separator: ",") {
            guard let equals = pair.firstIndex(of: "="), let id = Int64(pair[pair.index(after: equals)...]) else { continue }
            references[String(pair[..<equals])] = id
        }
        return references
    }

    private static func decodeJSON<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
        guard let text else { return nil }
        return try? JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
