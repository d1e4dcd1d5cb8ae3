import Foundation
import Store

/// The tables, sequence and triggers that keep the PostgreSQL store's change history, as
/// the SQLite store's `store_history` does: one entry per committed write, numbered by a
/// token, read by observers on any host to learn what changed.
///
/// The rows a write changes are reported by a trigger on each tracked table, whatever
/// wrote them (a record, a delete rule, raw SQL), into a temporary table of the writing
/// session (`pendingChanges`), and only while the session has asked for it
/// (`recordingSetting`). A session that has not (`psql`) has its rows noted in a table
/// instead, and announced at its commit (`PostgresOutsideWrites`).
enum PostgresHistorySchema {
    static let migration = "postgres-store.v2.history"
    /// Replaced the first version's one trigger function for every table (which turned each
    /// row into JSON to find its id, references and changed columns) with one per table
    /// that reads them by name.
    static let rowTriggersMigration = "postgres-store.v3.row-triggers"
    /// Added the announcement of writes from sessions that do not record
    /// (`PostgresOutsideWrites`).
    static let outsideWritesMigration = "postgres-store.v4.outside-writes"
    /// Writes from outside report their rows too, not only that they happened
    /// (`PostgresOutsideWrites.rowsTable`).
    static let outsideRowsMigration = "postgres-store.v5.outside-rows"
    static let history = "store_history"
    static let tokens = "store_history_token"
    static let metadata = "store_metadata"
    static let cache = "store_cache"
    static let horizonKey = "history_horizon"
    /// The channel each commit is announced on (`pg_notify`), with its token.
    static let channel = "topregions_store_history"
    /// The session setting that turns the triggers' recording on.
    static let recordingSetting = "topregions.record_changes"
    /// The writing session's temporary table of changed rows (emptied at every commit).
    static let pendingChanges = "store_pending_rows"
    /// The name of the trigger for updated rows on every tracked table (those for inserted
    /// and deleted rows are `insertTriggerName`, `deleteTriggerName`); each table's
    /// function is this name and the table's (`triggerFunction(for:)`).
    static let triggerName = "store_record_change"
    /// Held from the moment a write takes its token until it commits, so that tokens
    /// commit in order: a reader that sees a token sees every smaller one.
    static let tokenLockKey = "hashtext('topregions.store.history')"

    /// The history's tables and sequence (the second version's migration).
    static let tableStatements = [
        """
        CREATE TABLE \(history) (token bigint PRIMARY KEY, committed_at double precision NOT NULL, \
        origin text NOT NULL, author text, changes bytea NOT NULL)
        """,
        "CREATE INDEX \(history)_committed_at ON \(history) (committed_at)",
        "CREATE SEQUENCE \(tokens) AS bigint",
        "CREATE TABLE \(metadata) (key text PRIMARY KEY, value bigint NOT NULL)",
        "CREATE TABLE \(cache) (name text PRIMARY KEY, fingerprint text NOT NULL, token bigint NOT NULL, data bytea NOT NULL)",
    ]

    /// The triggers reporting each tracked table's changed rows (the third to fifth
    /// versions' migration; each statement can run again): those of outside writes; any
    /// earlier ones dropped; on each table, its function called once per
    /// statement for the rows inserted or deleted (read from the statement's transition
    /// table, a set, not row by row) and once per row updated (to compare old and new).
    static func triggerStatements(_ schema: PostgresSchema) -> [String] {
        let tables = Dictionary(schema.tables().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var statements = PostgresOutsideWrites.statements + ["DROP FUNCTION IF EXISTS \(triggerName)() CASCADE"]
        for entity in schema.schema.entities where entity.isTracked {
            guard let table = tables[entity.name.lowercased()] else { continue }
            let foreignKeys = entity.relationships.compactMap(\.foreignKeyColumn).map { $0.lowercased() }
            let name = PostgresSchema.identifier(table.name)
            let function = PostgresSchema.identifier(triggerFunction(for: table.name)) + "()"
            statements += [triggerFunctionStatement(table, foreignKeys: foreignKeys)]
            statements += [triggerName, insertTriggerName, deleteTriggerName].map { "DROP TRIGGER IF EXISTS \($0) ON \(name)" }
            statements += [
                "CREATE TRIGGER \(triggerName) AFTER UPDATE ON \(name) FOR EACH ROW EXECUTE FUNCTION \(function)",
                "CREATE TRIGGER \(insertTriggerName) AFTER INSERT ON \(name) REFERENCING NEW TABLE AS \(insertedRows) "
                    + "FOR EACH STATEMENT EXECUTE FUNCTION \(function)",
                "CREATE TRIGGER \(deleteTriggerName) AFTER DELETE ON \(name) REFERENCING OLD TABLE AS \(deletedRows) "
                    + "FOR EACH STATEMENT EXECUTE FUNCTION \(function)",
            ] + PostgresOutsideWrites.truncateTriggerStatements(on: name)
        }
        return statements
    }

    static let insertTriggerName = "store_record_inserts"
    static let deleteTriggerName = "store_record_deletes"
    private static let insertedRows = "inserted_rows"
    private static let deletedRows = "deleted_rows"

    static func triggerFunction(for table: String) -> String { "\(triggerName)_\(table)" }

    /// Reports the changed rows of `table`: their ids before and after, the columns whose
    /// value changed, and their references before and after (`name=id` pairs, commas
    /// between), read by name: no row is turned into JSON, so a write pays little for it.
    /// A session of this program reports them into its temporary table; any other
    /// (`psql`) through `PostgresOutsideWrites`, as arrays.
    private static func triggerFunctionStatement(_ table: PostgresTable, foreignKeys: [String]) -> String {
        let key = PostgresSchema.identifier(table.primaryKey)
        func references(_ row: String) -> String {
            guard !foreignKeys.isEmpty else { return "NULL::text" }
            let pairs = foreignKeys.map { "\(PostgresSchema.literal(.text($0 + "="))) || \(row).\(PostgresSchema.identifier($0))" }
            return "nullif(concat_ws(',', \(pairs.joined(separator: ", "))), '')"
        }
        let comparisons = table.columns.map { column in
            let name = PostgresSchema.identifier(column.name)
            return "CASE WHEN NEW.\(name) IS DISTINCT FROM OLD.\(name) THEN \(PostgresSchema.literal(.text(column.name))) END"
        }
        let note = PostgresOutsideWrites.noteRowsStatement
        return """
            CREATE OR REPLACE FUNCTION \(PostgresSchema.identifier(triggerFunction(for: table.name)))() RETURNS trigger LANGUAGE plpgsql AS $body$
            DECLARE
                recording text := coalesce(current_setting('\(recordingSetting)', true), '');
                changed text[];
            BEGIN
                IF recording = 'off' THEN
                    RETURN NULL;
                END IF;
                IF TG_OP = 'UPDATE' THEN
                    changed := array_remove(ARRAY[\(comparisons.joined(separator: ",\n                        "))]::text[], NULL);
                    IF cardinality(changed) = 0 THEN
                        RETURN NULL;
                    END IF;
                END IF;
                IF recording <> 'on' THEN
                    IF TG_OP = 'INSERT' THEN
                        \(note) TG_TABLE_NAME, TG_OP, NULL::bigint[], ARRAY(SELECT affected.\(key) FROM \(insertedRows) AS affected),
                            NULL::text[], NULL::text[], ARRAY(SELECT \(references("affected")) FROM \(insertedRows) AS affected);
                    ELSIF TG_OP = 'DELETE' THEN
                        \(note) TG_TABLE_NAME, TG_OP, ARRAY(SELECT affected.\(key) FROM \(deletedRows) AS affected), NULL::bigint[],
                            NULL::text[], ARRAY(SELECT \(references("affected")) FROM \(deletedRows) AS affected), NULL::text[];
                    ELSE
                        \(note) TG_TABLE_NAME, TG_OP, ARRAY[OLD.\(key)], ARRAY[NEW.\(key)], changed,
                            ARRAY[\(references("OLD"))], ARRAY[\(references("NEW"))];
                    END IF;
                ELSIF TG_OP = 'INSERT' THEN
                    INSERT INTO pg_temp.\(pendingChanges) (table_name, operation, new_id, new_refs)
                    SELECT TG_TABLE_NAME, TG_OP, affected.\(key), \(references("affected")) FROM \(insertedRows) AS affected;
                ELSIF TG_OP = 'DELETE' THEN
                    INSERT INTO pg_temp.\(pendingChanges) (table_name, operation, old_id, old_refs)
                    SELECT TG_TABLE_NAME, TG_OP, affected.\(key), \(references("affected")) FROM \(deletedRows) AS affected;
                ELSE
                    INSERT INTO pg_temp.\(pendingChanges) (table_name, operation, old_id, new_id, changed, old_refs, new_refs)
                    VALUES (TG_TABLE_NAME, TG_OP, OLD.\(key), NEW.\(key), changed, \(references("OLD")), \(references("NEW")));
                END IF;
                RETURN NULL;
            END
            $body$
            """
    }

    /// Creates the writing session's table of changed rows and turns recording on: once
    /// per connection (a new one after a reconnect).
    static let sessionStatements = """
        CREATE TEMPORARY TABLE IF NOT EXISTS \(pendingChanges) (
            seq bigserial, table_name text NOT NULL, operation text NOT NULL, old_id bigint, new_id bigint,
            changed text[], old_refs text, new_refs text) ON COMMIT DELETE ROWS;
        SET \(recordingSetting) = 'on'
        """

    /// The rows the transaction changed so far, in order.
    static let pendingChangesQuery = """
        SELECT table_name, operation, old_id, new_id, array_to_json(changed)::text, old_refs, new_refs
          FROM pg_temp.\(pendingChanges) ORDER BY seq
        """
}
