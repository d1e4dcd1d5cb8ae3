import Foundation
import PostgreSQL
import PostgresStore
import Store
import TestSupport
import Testing
@testable import TopRegionsKit

/// Writes from sessions that do not record their rows (`psql`, another program) reach
/// every watcher as a commit whose changes are unknown: the watchers refetch.
@Suite("Writes to a PostgreSQL store from outside this program", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresOutsideWritesTests {
    /// The entries after `token`, as the table holds them: token, origin, changes in hex.
    static func entries(after token: Int64, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.query("SELECT token::text, origin, encode(changes, 'hex') FROM store_history WHERE token > $1 ORDER BY token",
                             [.integer(token)]).rows
    }

    /// The first column of the first row, as text.
    static func scalar(_ sql: String, on connection: PostgresConnection) throws -> String? {
        try connection.query(sql).rows.first?.first ?? nil
    }

    @Test("A transaction from psql's kind of session is one entry of unknown changes: a controller refetches and equals the query; a rollback and a session with recording off add none")
    func outsideTransactionReachesControllers() async throws {
        let fixture = try await CopyFixture.copied()
        let watcher = try PostgresGallery(location: fixture.database)
        defer { watcher.close() }
        let regions = try watcher.topRegionsController(limit: 10)
        try regions.performFetch()
        let table = ReplayedTable(regions)
        regions.delegate = table
        let outside = try fixture.connect()
        defer { outside.close() }
        let before = try watcher.currentToken()
        let last = try #require(regions.fetchedIDs.last)

        try outside.execute("""
            BEGIN;
            UPDATE region SET photographercount = photographercount + 100000 WHERE id = \(last);
            UPDATE region SET name = 'Renamed from psql' WHERE id = \(last);
            COMMIT
            """)
        let added = try Self.entries(after: before, on: outside)
        #expect(added.count == 1 && added.first?[1] == "outside" && added.first?[2] == "00", "one entry for two statements: \(added)")
        let token = try watcher.currentToken()
        #expect(token > before)
        #expect(regions.waitUntilProcessed(through: token, timeout: 20), "the controller hears the outside commit")
        let expected = try watcher.read { try $0.fetchIDs(Gallery.topRegionsRequest(limit: 10, byCountry: false)) }
        #expect(expected.first == last, "the region written from outside is first")
        #expect(table.state.ids.flatMap { $0 } == expected && table.state.failures == [], "the replayed table is the query")
        #expect { try watcher.history(since: before) } throws: { "\($0)".contains("made outside this program") }

        try outside.execute("BEGIN; UPDATE region SET photocount = 0 WHERE id = \(last); ROLLBACK")
        try outside.execute("SET topregions.record_changes = 'off'; UPDATE region SET country = country WHERE id = \(last); RESET topregions.record_changes")
        #expect(try Self.entries(after: token, on: outside) == [], "nothing for a rollback, nor for a session that turned recording off")
        #expect(try Self.scalar("SELECT count(*)::text FROM store_outside_writes", on: outside) == "0", "no transaction stays noted")

        // TRUNCATE reports no rows: announced as well.
        try outside.execute("TRUNCATE recent")
        #expect(try Self.entries(after: token, on: outside).map { $0[1] } == ["outside"], "a truncation is announced")
    }

    @Test("A role that may only update one table, its search path pointing at a look-alike history, still has its write announced in the store's history")
    func restrictedRoleOtherSearchPath() async throws {
        let fixture = try await CopyFixture.copied()
        let admin = try fixture.connect()
        defer { admin.close() }
        let role = "outside_\(UInt32.random(in: 0...UInt32.max))"
        try admin.execute("""
            CREATE ROLE \(role) LOGIN;
            GRANT USAGE ON SCHEMA public TO \(role);
            GRANT SELECT, UPDATE ON region TO \(role);
            CREATE SCHEMA lookalike;
            CREATE TABLE lookalike.store_history (LIKE public.store_history);
            CREATE TABLE lookalike.store_outside_writes (LIKE public.store_outside_writes);
            GRANT USAGE ON SCHEMA lookalike TO \(role);
            GRANT ALL ON ALL TABLES IN SCHEMA lookalike TO \(role);
            ALTER ROLE \(role) SET search_path = lookalike, public
            """)
        let before = try #require(Int64(try Self.scalar("SELECT coalesce(max(token), 0)::text FROM store_history", on: admin) ?? ""))
        let location = fixture.database.replacingOccurrences(of: "postgres@", with: "\(role)@")
        let restricted = try PostgresConnection(location)
        defer { restricted.close() }
        try restricted.execute("UPDATE public.region SET photocount = photocount + 1 WHERE id = (SELECT min(id) FROM public.region)")
        #expect(try Self.entries(after: before, on: admin).map { $0[1] } == ["outside"], "the entry is in the store's history")
        #expect(try Self.scalar("SELECT count(*)::text FROM lookalike.store_history", on: admin) == "0", "not in the look-alike")
        #expect { try restricted.execute("SELECT * FROM public.store_history") } throws: { "\($0)".contains("permission denied") }
    }

    @Test("A store without the announcement of outside writes (its trigger dropped, or a store of the version before) is named by check and made whole by migrate")
    func missingOutsideTriggerRepairedByMigrate() async throws {
        let fixture = try await CopyFixture.copied()
        let connection = try fixture.connect()
        defer { connection.close() }
        try connection.execute("DROP TRIGGER store_record_outside_write ON store_outside_writes")
        let problems = try Gallery.checkPostgres(fixture.database)
        #expect(problems.count == 1 && problems.first?.contains("store_outside_writes has no trigger store_record_outside_write") == true, "\(problems)")
        let database = try PostgresStore(location: fixture.database, schema: TopRegionsSchema.postgres)
        defer { database.close() }
        #expect(try database.migrate() == .upgraded)
        #expect(try Gallery.checkPostgres(fixture.database) == [])

        // The version before: no table, no functions, every table's trigger function of
        // that version, and no record of the migration.
        let tracked = TopRegionsSchema.entities.filter(\.isTracked).map { $0.name.lowercased() }
        try connection.execute("""
            DROP TABLE store_outside_writes; DROP FUNCTION store_note_outside_write(); DROP FUNCTION store_record_outside_write();
            DROP FUNCTION store_record_truncate() CASCADE;
            \(tracked.map { "CREATE OR REPLACE FUNCTION store_record_change_\($0)() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;" }.joined())
            DELETE FROM store_migrations WHERE name = 'postgres-store.v4.outside-writes'
            """)
        #expect { try PostgresGallery(location: fixture.database) } throws: { "\($0)".contains("topregions migrate") }
        #expect(try database.migrate() == .upgraded)
        #expect(try database.state() == .current)
        let gallery = try PostgresGallery(location: fixture.database)
        defer { gallery.close() }
        let before = try gallery.currentToken()
        try connection.execute("UPDATE photo SET title = title || '!' WHERE id = (SELECT min(id) FROM photo)")
        #expect(try Self.entries(after: before, on: connection).map { $0[1] } == ["outside"], "heard after the upgrade")
        let local = try gallery.user(named: "local")
        let photo = try #require(try gallery.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.first?.flickrID)
        let afterOutside = try gallery.currentToken()
        _ = try gallery.view(flickrID: photo, for: local)
        #expect(try gallery.history(since: afterOutside).last?.changes["Recent"].inserted.count == 1, "this program's writes are recorded row by row again")
    }
}
