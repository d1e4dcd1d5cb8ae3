import Foundation
import PostgreSQL
import Store

/// How a write from a session that does not record its rows in a temporary table, as this
/// program's do (`psql`, another program), still reaches every watcher row by row: the
/// tracked tables' triggers note the rows in `rowsTable` and the transaction in `table`
/// (one row per transaction); a trigger on that table, deferred to the commit, appends one
/// history entry that refers to the noted rows (`RowsReference`) and announces its token.
/// A reader turns those rows into the entry's change set, as a writer of this program does
/// with its own.
///
/// A transaction whose rows cannot all be told (a `TRUNCATE`, more than `rowLimit` rows)
/// gets an entry whose changes are unknown (`ChangeSet.unrecordedEncoding`): watchers take
/// it as a gap and refetch. A session that sets `PostgresHistorySchema.recordingSetting`
/// to `off` writes without either (a benchmark's baseline, a bulk repair announced
/// otherwise).
enum PostgresOutsideWrites {
    static let table = "store_outside_writes"
    /// The rows each outside transaction changed, until history is trimmed past them.
    static let rowsTable = "store_outside_rows"
    /// Both tables, as the schema's drift check reads them.
    static let tables = [table, rowsTable]
    /// The trigger on `table`, and its function: the history entry at commit.
    static let triggerName = "store_record_outside_write"
    /// The function a tracked table's trigger calls for rows it cannot report (`TRUNCATE`).
    static let noteFunction = "store_note_outside_write"
    /// The function the tracked tables' triggers call with the rows an outside statement
    /// changed: table, operation, ids before and after, changed columns, references before
    /// and after (`PostgresHistorySchema`'s form). A statement of more than `rowLimit` rows
    /// keeps none: its transaction's changes are unknown.
    static let rowsFunction = "store_note_outside_rows"
    /// The trigger on each tracked table, and its function, for `TRUNCATE`: it reports no
    /// rows, so even a session that records has its truncation announced as from outside.
    static let truncateTriggerName = "store_record_truncate"
    /// The origin of the history entries of outside writes.
    static let origin = "outside"
    static let rowLimit = PostgresStore.outsideWriteRowLimit

    /// Both note functions may be run by anyone (a role that may write one table has its
    /// writes announced through them) but do nothing unless a trigger runs them: calling
    /// one directly announces nothing. (A trigger of the session's own can still call them;
    /// watchers re-read what an entry names, so a forged one costs work, not a wrong row.
    /// The privileges of the session's role are not asked: a write through a view or a
    /// function of its owner's rights is the owner's, and must be announced all the same.)
    static let calledByTrigger = "pg_trigger_depth() > 0"

    /// What a tracked table's trigger function runs for a truncation: through the store's
    /// schema (the trigger's own), whatever the session's search path.
    static let noteStatement = "EXECUTE format('SELECT %I.\(noteFunction)()', TG_TABLE_SCHEMA);"

    /// What a tracked table's trigger function runs with the rows a statement changed, in
    /// `USING` order: table, operation, old ids, new ids, changed columns, old references,
    /// new references (arrays but the changed columns; NULL for an absent side).
    static let noteRowsStatement = "EXECUTE format('SELECT %I.\(rowsFunction)($1, $2, $3, $4, $5, $6, $7)', TG_TABLE_SCHEMA) USING"

    /// The tables, functions and the trigger; each statement can run again (`migrate`
    /// repairs with them). The functions run as their owner, who may write the history, with
    /// the search path pinned to the store's schema: a role that may only write a gallery's
    /// tables still has its writes announced, and cannot redirect them.
    static let statements: [String] = [
        "CREATE TABLE IF NOT EXISTS \(table) (transaction_id bigint PRIMARY KEY)",
        "ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS rows_unknown boolean NOT NULL DEFAULT false",
        """
        CREATE TABLE IF NOT EXISTS \(rowsTable) (
            transaction_id bigint NOT NULL, seq bigserial, token bigint,
            table_name text NOT NULL, operation text NOT NULL, old_id bigint, new_id bigint,
            changed text[], old_refs text, new_refs text, PRIMARY KEY (transaction_id, seq))
        """,
        "CREATE INDEX IF NOT EXISTS \(rowsTable)_token ON \(rowsTable) (token)",
        """
        CREATE OR REPLACE FUNCTION \(noteFunction)() RETURNS void LANGUAGE sql SECURITY DEFINER AS $body$
            INSERT INTO \(table) (transaction_id, rows_unknown) SELECT txid_current(), true WHERE \(calledByTrigger)
                ON CONFLICT (transaction_id) DO UPDATE SET rows_unknown = true
        $body$
        """,
        // The rows first: in a transaction that made the constraint trigger immediate
        // (`SET CONSTRAINTS ALL IMMEDIATE`), it fires as the transaction's row is inserted,
        // and then finds this statement's rows (each statement its own entry, its rows
        // those not yet given a token).
        """
        CREATE OR REPLACE FUNCTION \(rowsFunction)(text, text, bigint[], bigint[], text[], text[], text[])
            RETURNS void LANGUAGE sql SECURITY DEFINER AS $body$
            INSERT INTO \(rowsTable) (transaction_id, table_name, operation, old_id, new_id, changed, old_refs, new_refs)
                SELECT txid_current(), $1, $2, noted.old_id, noted.new_id, $5, noted.old_refs, noted.new_refs
                FROM unnest($3, $4, $6, $7) AS noted(old_id, new_id, old_refs, new_refs)
                WHERE greatest(cardinality($3), cardinality($4)) <= \(rowLimit) AND \(calledByTrigger);
            INSERT INTO \(table) (transaction_id, rows_unknown)
                SELECT txid_current(), greatest(cardinality($3), cardinality($4)) > \(rowLimit)
                WHERE greatest(cardinality($3), cardinality($4)) > 0 AND \(calledByTrigger)
                ON CONFLICT (transaction_id) DO UPDATE SET rows_unknown = true WHERE excluded.rows_unknown;
        $body$
        """,
        """
        CREATE OR REPLACE FUNCTION \(triggerName)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $body$
        DECLARE
            appended bigint;
            unknown boolean;
            noted bigint;
            changes bytea := '\(hex(ChangeSet.unrecordedEncoding))'::bytea;
        BEGIN
            DELETE FROM \(table) WHERE transaction_id = NEW.transaction_id RETURNING rows_unknown INTO unknown;
            SELECT count(*) INTO noted FROM \(rowsTable) WHERE transaction_id = NEW.transaction_id AND token IS NULL;
            IF coalesce(unknown, true) OR noted = 0 OR noted > \(rowLimit) THEN
                DELETE FROM \(rowsTable) WHERE transaction_id = NEW.transaction_id AND token IS NULL;
            ELSE
                changes := '\(hex([RowsReference.marker]))'::bytea || int8send(noted);
            END IF;
            PERFORM pg_advisory_xact_lock(\(PostgresHistorySchema.tokenLockKey));
            INSERT INTO \(PostgresHistorySchema.history) (token, committed_at, origin, author, changes)
                VALUES (nextval('\(PostgresHistorySchema.tokens)'), extract(epoch FROM clock_timestamp())::double precision,
                        '\(origin)', NULL, changes)
                RETURNING token INTO appended;
            UPDATE \(rowsTable) SET token = appended WHERE transaction_id = NEW.transaction_id AND token IS NULL;
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
            EXECUTE format('ALTER FUNCTION %I.\(rowsFunction)(text, text, bigint[], bigint[], text[], text[], text[]) '
                           'SET search_path = %I, pg_temp', current_schema(), current_schema());
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

    /// Bytes as a `bytea` literal's text.
    private static func hex(_ bytes: [UInt8]) -> String {
        "\\x" + bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The changes of a history entry of an outside write whose rows are in `rowsTable`
    /// under the entry's token: `marker`, then the number of rows (8 bytes, most
    /// significant first, as `int8send` writes it).
    struct RowsReference: Hashable {
        static let marker = ChangeSet.externalRowsMarker
        var rowCount: Int64

        /// Nil when `bytes` are not such a reference.
        init?(_ bytes: [UInt8]) {
            guard bytes.count == 9, bytes[0] == Self.marker else { return nil }
            rowCount = bytes[1...].reduce(Int64(0)) { ($0 << 8) | Int64($1) }
        }
    }

    /// The change set of each entry given (by token, with its reference). Throws `decoding`
    /// when an entry's rows are not all there (deleted by hand) or this role may not read
    /// them: the reader then refetches, as for an entry of unknown changes.
    static func changes(of references: [Int64: RowsReference], schema: Schema,
                        on connection: PostgresConnection) throws -> [Int64: ChangeSet] {
        var assemblers: [Int64: ChangeSetAssembler] = [:]
        var counts: [Int64: Int64] = [:]
        let tokens = PostgresValue.text("{" + references.keys.map(String.init).joined(separator: ",") + "}")
        do {
            try connection.query("""
                SELECT table_name, operation, old_id, new_id, array_to_json(changed)::text, old_refs, new_refs, token
                  FROM \(rowsTable) WHERE token = ANY($1::bigint[]) ORDER BY token, seq
                """, [tokens]) { cursor in
                guard let token = cursor.integer(7) else { return }
                counts[token, default: 0] += 1
                guard let change = PostgresHistory.rowChange(cursor) else { return }
                assemblers[token, default: ChangeSetAssembler(schema: schema)].record(change)
            }
        } catch let error as PostgresError where error.sqlState == insufficientPrivilege {
            throw StoreError(.decoding, "History entry of a commit made outside this program keeps its rows in \(rowsTable), "
                             + "which this role may not read")
        }
        var changes: [Int64: ChangeSet] = [:]
        for (token, reference) in references {
            guard counts[token] == reference.rowCount else {
                throw StoreError(.decoding, "History entry \(token) of a commit made outside this program lost its rows "
                                 + "(\(counts[token] ?? 0) of \(reference.rowCount) kept)")
            }
            changes[token] = assemblers[token]?.changes ?? ChangeSet()
        }
        return changes
    }

    /// The database's, a role's or the server's default for `recordingSetting`, as
    /// sentences: any default is wrong (`off` hides every `psql` write from watchers; `on`
    /// makes them fail), the setting is a session's own.
    static func recordingDefaults(on connection: PostgresConnection) throws -> [String] {
        let setting = PostgresHistorySchema.recordingSetting
        let consequence = "writes from psql or other programs would go unannounced or fail (reset it: it is a session's own setting)"
        var problems = try connection.query("""
            SELECT coalesce('role ' || quote_ident(r.rolname), 'every role') || ' in '
                       || coalesce('database ' || quote_ident(d.datname), 'every database'), split_part(c, '=', 2)
              FROM pg_db_role_setting s LEFT JOIN pg_roles r ON r.oid = s.setrole LEFT JOIN pg_database d ON d.oid = s.setdatabase,
                   unnest(s.setconfig) AS c
             WHERE (s.setdatabase = 0 OR d.datname = current_database()) AND lower(split_part(c, '=', 1)) = $1
             ORDER BY 1
            """, [.text(setting)]).rows.map { row in
            "\(row.first.flatMap { $0 } ?? "a role") sets \(setting) = \(PostgresSchema.literal(.text(row.count > 1 ? row[1] ?? "" : ""))) by default: \(consequence)"
        }
        // What this session got without setting it: the server's configuration, when no
        // database or role default applies (`ALTER SYSTEM`, postgresql.conf).
        let effective = try connection.query("SELECT current_setting($1, true)", [.text(setting)]).rows.first?.first ?? nil
        if problems.isEmpty, let effective, !effective.isEmpty {
            problems.append("the server's configuration sets \(setting) = \(PostgresSchema.literal(.text(effective))): \(consequence)")
        }
        return problems
    }

    /// PostgreSQL's SQLSTATE for "permission denied".
    private static let insufficientPrivilege = "42501"

    /// Deletes the rows of the entries trimmed, those through token `newest`.
    static func trim(through newest: Int64, on connection: PostgresConnection) throws {
        try connection.query("DELETE FROM \(rowsTable) WHERE token <= $1", [.integer(newest)])
    }
}
