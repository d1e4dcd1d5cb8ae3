import Foundation
import Store

/// How a write from a session that does not record its rows (`psql`, another program)
/// still reaches every watcher: the tracked tables' triggers note the transaction in
/// `table` (one row per transaction); a trigger on that table, deferred to the commit,
/// appends one history entry whose changes are unknown (`ChangeSet.unrecordedEncoding`)
/// and announces its token. Watchers take such an entry as a gap: they refetch.
///
/// A session that sets `PostgresHistorySchema.recordingSetting` to `off` writes without
/// either (a benchmark's baseline, a bulk repair that is announced otherwise).
enum PostgresOutsideWrites {
    static let table = "store_outside_writes"
    /// The trigger on `table`, and its function: the history entry at commit.
    static let triggerName = "store_record_outside_write"
    /// The function the tracked tables' triggers call in a session that does not record.
    static let noteFunction = "store_note_outside_write"
    /// The trigger on each tracked table, and its function, for `TRUNCATE`: it reports no
    /// rows, so even a session that records has its truncation announced as from outside.
    static let truncateTriggerName = "store_record_truncate"
    /// The origin of the history entries of outside writes.
    static let origin = "outside"

    /// What a tracked table's trigger function runs in a session that does not record:
    /// through the store's schema (the trigger's own), whatever the session's search path.
    static let noteStatement = "EXECUTE format('SELECT %I.\(noteFunction)()', TG_TABLE_SCHEMA);"

    /// The table, both functions and the trigger; each statement can run again (`migrate`
    /// repairs with them). The functions run as their owner, who may write the history, with
    /// the search path pinned to the store's schema: a role that may only write a gallery's
    /// tables still has its writes announced, and cannot redirect them.
    static let statements: [String] = [
        "CREATE TABLE IF NOT EXISTS \(table) (transaction_id bigint PRIMARY KEY)",
        """
        CREATE OR REPLACE FUNCTION \(noteFunction)() RETURNS void LANGUAGE sql SECURITY DEFINER AS $body$
            INSERT INTO \(table) (transaction_id) VALUES (txid_current()) ON CONFLICT DO NOTHING
        $body$
        """,
        """
        CREATE OR REPLACE FUNCTION \(triggerName)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $body$
        DECLARE
            appended bigint;
        BEGIN
            DELETE FROM \(table) WHERE transaction_id = NEW.transaction_id;
            PERFORM pg_advisory_xact_lock(\(PostgresHistorySchema.tokenLockKey));
            INSERT INTO \(PostgresHistorySchema.history) (token, committed_at, origin, author, changes)
                VALUES (nextval('\(PostgresHistorySchema.tokens)'), extract(epoch FROM clock_timestamp())::double precision,
                        '\(origin)', NULL, '\(unrecordedLiteral)'::bytea)
                RETURNING token INTO appended;
            PERFORM pg_notify('\(PostgresHistorySchema.channel)', appended::text);
            RETURN NULL;
        END
        $body$
        """,
        """
        CREATE OR REPLACE FUNCTION \(truncateTriggerName)() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            IF coalesce(current_setting('\(PostgresHistorySchema.recordingSetting)', true), '') <> 'off' THEN
                \(noteStatement)
            END IF;
            RETURN NULL;
        END
        $body$
        """,
        """
        DO $body$ BEGIN
            EXECUTE format('ALTER FUNCTION %I.\(noteFunction)() SET search_path = %I, pg_temp', current_schema(), current_schema());
            EXECUTE format('ALTER FUNCTION %I.\(triggerName)() SET search_path = %I, pg_temp', current_schema(), current_schema());
        END $body$
        """,
        "DROP TRIGGER IF EXISTS \(triggerName) ON \(table)",
        """
        CREATE CONSTRAINT TRIGGER \(triggerName) AFTER INSERT ON \(table) DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION \(triggerName)()
        """,
    ]

    /// The truncation trigger of the tracked table `name` (quoted).
    static func truncateTriggerStatements(on name: String) -> [String] {
        ["DROP TRIGGER IF EXISTS \(truncateTriggerName) ON \(name)",
         "CREATE TRIGGER \(truncateTriggerName) AFTER TRUNCATE ON \(name) FOR EACH STATEMENT EXECUTE FUNCTION \(truncateTriggerName)()"]
    }

    /// `ChangeSet.unrecordedEncoding` as a `bytea` literal.
    private static var unrecordedLiteral: String {
        "\\x" + ChangeSet.unrecordedEncoding.map { String(format: "%02x", $0) }.joined()
    }
}
