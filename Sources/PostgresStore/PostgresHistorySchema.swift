import Foundation
import Store

/// The tables, sequence and triggers that keep the PostgreSQL store's change history, as
/// the SQLite store's `store_history` does: one entry per committed write, numbered by a
/// token, read by observers on any host to learn what changed.
///
/// The rows a write changes are reported by a trigger on each tracked table, whatever
/// wrote them (a record, a delete rule, raw SQL), into a temporary table of the writing
/// session (`pendingChanges`), and only while the session has asked for it
/// (`recordingSetting`): a session of `psql` or a bulk copy writes without recording.
enum PostgresHistorySchema {
    static let migration = "postgres-store.v2.history"
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
    static let pendingChanges = "store_pending_changes"
    static let triggerFunction = "store_record_change"
    /// Held from the moment a write takes its token until it commits, so that tokens
    /// commit in order: a reader that sees a token sees every smaller one.
    static let tokenLockKey = "hashtext('topregions.store.history')"

    /// Statements that add the history to a store of the first version (or a new one).
    static func createStatements(_ schema: PostgresSchema) -> [String] {
        [
            """
            CREATE TABLE \(history) (token bigint PRIMARY KEY, committed_at double precision NOT NULL, \
            origin text NOT NULL, author text, changes bytea NOT NULL)
            """,
            "CREATE INDEX \(history)_committed_at ON \(history) (committed_at)",
            "CREATE SEQUENCE \(tokens) AS bigint",
            "CREATE TABLE \(metadata) (key text PRIMARY KEY, value bigint NOT NULL)",
            "CREATE TABLE \(cache) (name text PRIMARY KEY, fingerprint text NOT NULL, token bigint NOT NULL, data bytea NOT NULL)",
            triggerFunctionStatement,
        ] + schema.schema.entities.filter(\.isTracked).map { triggerStatement($0, schema: schema) }
    }

    /// Reports each changed row of the table it is on: its id before and after, the columns
    /// whose value changed, and its references before and after. Arguments: the primary
    /// key's column, then the foreign key columns.
    private static let triggerFunctionStatement = """
        CREATE FUNCTION \(triggerFunction)() RETURNS trigger LANGUAGE plpgsql AS $body$
        DECLARE
            old_row jsonb;
            new_row jsonb;
            changed text[];
        BEGIN
            IF coalesce(current_setting('\(recordingSetting)', true), '') <> 'on' THEN
                RETURN NULL;
            END IF;
            IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;
            IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
            IF TG_OP = 'UPDATE' THEN
                SELECT coalesce(array_agg(n.key), '{}') INTO changed
                  FROM jsonb_each(new_row) AS n JOIN jsonb_each(old_row) AS o ON o.key = n.key
                 WHERE n.value IS DISTINCT FROM o.value;
                IF cardinality(changed) = 0 THEN RETURN NULL; END IF;
            END IF;
            INSERT INTO pg_temp.\(pendingChanges) (table_name, operation, old_id, new_id, changed, old_refs, new_refs)
            VALUES (TG_TABLE_NAME, TG_OP, (old_row ->> TG_ARGV[0])::bigint, (new_row ->> TG_ARGV[0])::bigint, changed,
                    (SELECT jsonb_object_agg(key, value) FROM jsonb_each(old_row)
                      WHERE key = ANY (TG_ARGV[1:]) AND jsonb_typeof(value) = 'number'),
                    (SELECT jsonb_object_agg(key, value) FROM jsonb_each(new_row)
                      WHERE key = ANY (TG_ARGV[1:]) AND jsonb_typeof(value) = 'number'));
            RETURN NULL;
        END
        $body$
        """

    private static func triggerStatement(_ entity: Entity, schema: PostgresSchema) -> String {
        let foreignKeys = entity.relationships.compactMap(\.foreignKeyColumn).map { $0.lowercased() }
        let arguments = ([entity.primaryKey.lowercased()] + foreignKeys).map { PostgresSchema.literal(.text($0)) }
        return "CREATE TRIGGER \(triggerFunction) AFTER INSERT OR UPDATE OR DELETE ON \(PostgresSchema.identifier(entity.name)) "
            + "FOR EACH ROW EXECUTE FUNCTION \(triggerFunction)(\(arguments.joined(separator: ", ")))"
    }

    /// Creates the writing session's table of changed rows and turns recording on: once
    /// per connection (a new one after a reconnect).
    static let sessionStatements = """
        CREATE TEMPORARY TABLE IF NOT EXISTS \(pendingChanges) (
            seq bigserial, table_name text NOT NULL, operation text NOT NULL, old_id bigint, new_id bigint,
            changed text[], old_refs jsonb, new_refs jsonb) ON COMMIT DELETE ROWS;
        SET \(recordingSetting) = 'on'
        """

    /// The rows the transaction changed so far, in order.
    static let pendingChangesQuery = """
        SELECT table_name, operation, old_id, new_id, array_to_json(changed)::text, old_refs::text, new_refs::text
          FROM pg_temp.\(pendingChanges) ORDER BY seq
        """
}
