import Foundation
import PostgreSQL
import PostgresStore
import Store
import TestSupport
import Testing
@testable import TopRegionsKit

/// Writes from sessions that do not record their rows as this program's do (`psql`, another
/// program) reach every watcher as a commit with its rows; too many rows, or a truncation,
/// as a commit whose changes are unknown: the watchers refetch.
@Suite("Writes to a PostgreSQL store from outside this program", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresOutsideWritesTests {
    /// The entries after `token`, as the table holds them: token, origin, changes in hex.
    static func entries(after token: Int64, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.query("SELECT token::text, origin, encode(changes, 'hex') FROM store_history WHERE token > $1 ORDER BY token",
                             [.integer(token)]).rows
    }

    /// A new login role named from `prefix`, created on `admin`; `grants` are the
    /// statements that follow, given the role's name.
    static func newRole(_ prefix: String, on admin: PostgresConnection, _ grants: (String) -> String = { _ in "" }) throws -> String {
        let role = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        try admin.execute("CREATE ROLE \(role) LOGIN;\n" + grants(role))
        return role
    }

    /// The fixture's database, connected to as `role`.
    static func location(_ fixture: CopyFixture, as role: String) -> String {
        fixture.database.replacingOccurrences(of: "postgres@", with: "\(role)@")
    }

    /// The first column of the first row, as text.
    static func scalar(_ sql: String, on connection: PostgresConnection) throws -> String? {
        try connection.query(sql).rows.first?.first ?? nil
    }

    @Test("A transaction from psql's kind of session is one entry that carries its rows: a controller's batch touches only the row written and its replay equals the query; a rollback and a session with recording off add none")
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
        #expect(added.count == 1 && added.first?[1] == "outside", "one entry for two statements: \(added)")
        #expect(added.first?[2]?.hasPrefix("fe") == true, "the entry refers to the rows kept apart: \(added)")
        let token = try watcher.currentToken()
        #expect(token > before)
        #expect(regions.waitUntilProcessed(through: token, timeout: 20), "the controller hears the outside commit")
        let expected = try watcher.read { try $0.fetchIDs(Gallery.topRegionsRequest(limit: 10, byCountry: false)) }
        #expect(expected.first == last, "the region written from outside is first")
        #expect(table.state.ids.flatMap { $0 } == expected && table.state.failures == [], "the replayed table is the query")
        #expect(table.touchedIDs == [last], "the batch names only the region written, not every row shown: \(table.touchedIDs)")
        let history = try watcher.history(since: before)
        #expect(history.map(\.origin) == ["outside"])
        #expect(history.first?.changes["Region"].updated == [last: ["photographerCount", "name"]], "\(String(describing: history.first?.changes))")

        try outside.execute("BEGIN; UPDATE region SET photocount = 0 WHERE id = \(last); ROLLBACK")
        try outside.execute("SET topregions.record_changes = 'off'; UPDATE region SET country = country || '!' WHERE id = \(last); RESET topregions.record_changes")
        try outside.execute("UPDATE region SET country = country WHERE id = \(last)")
        #expect(try Self.entries(after: token, on: outside) == [],
                "nothing for a rollback, for a session that turned recording off, nor for an update that changed no value")
        #expect(try Self.scalar("SELECT count(*)::text FROM store_outside_writes", on: outside) == "0", "no transaction stays noted")

        // TRUNCATE reports no rows: its transaction's changes are unknown, whatever else it wrote.
        let kept = try Self.scalar("SELECT count(*)::text FROM store_outside_rows", on: outside)
        try outside.execute("BEGIN; UPDATE region SET photocount = photocount + 1 WHERE id = \(last); TRUNCATE recent; COMMIT")
        #expect(try Self.entries(after: token, on: outside).map { $0[1] } == ["outside"], "a truncation is announced")
        #expect(try Self.entries(after: token, on: outside).map { $0[2] } == ["00"], "as changes unknown")
        #expect(try Self.scalar("SELECT count(*)::text FROM store_outside_rows", on: outside) == kept, "the truncating transaction's rows are not kept")
        let newest = try watcher.currentToken()
        #expect(regions.waitUntilProcessed(through: newest, timeout: 20), "the controller hears the truncation")
        let afterTruncate = try watcher.read { try $0.fetchIDs(Gallery.topRegionsRequest(limit: 10, byCountry: false)) }
        #expect(table.state.ids.flatMap { $0 } == afterTruncate && table.state.failures == [], "and refetches: its table is the query")
    }

    @Test("Rows deleted and inserted from psql are reported with both ends of their references; more rows than the limit, or rows lost before they are read, are changes unknown, which controllers take as a gap; trimming the history deletes the rows")
    func outsideRowsInsertsDeletesAndLimits() async throws {
        let fixture = try await CopyFixture.copied()
        let watcher = try PostgresGallery(location: fixture.database)
        defer { watcher.close() }
        let outside = try fixture.connect()
        defer { outside.close() }
        let link = try #require(try outside.query("SELECT id, region_id, photographer_id FROM regionphotographer ORDER BY id LIMIT 1").rows.first)
        let (id, region, photographer) = (try #require(Int64(link[0] ?? "")), try #require(Int64(link[1] ?? "")),
                                          try #require(Int64(link[2] ?? "")))
        var token = try watcher.currentToken()
        try outside.execute("CREATE TEMPORARY TABLE saved AS SELECT * FROM regionphotographer WHERE id = \(id); DELETE FROM regionphotographer WHERE id = \(id)")
        let deleted = try #require(try watcher.history(since: token).first?.changes)
        #expect(deleted["RegionPhotographer"].deleted == [id])
        #expect(deleted["Region"].updated[region]?.contains("photographerLinks") == true, "the region at the other end: \(deleted)")
        #expect(deleted["Photographer"].updated[photographer]?.contains("regionLinks") == true, "the photographer too: \(deleted)")
        token = try watcher.currentToken()
        try outside.execute("INSERT INTO regionphotographer SELECT * FROM saved")
        let inserted = try #require(try watcher.history(since: token).first?.changes)
        #expect(inserted["RegionPhotographer"].inserted == [id] && inserted["Region"].updated[region]?.contains("photographerLinks") == true,
                "\(inserted)")

        let regions = try watcher.topRegionsController(limit: 10)
        try regions.performFetch()
        let table = ReplayedTable(regions)
        regions.delegate = table
        let last = try #require(regions.fetchedIDs.last)
        token = try watcher.currentToken()
        let kept = try Self.scalar("SELECT count(*)::text FROM store_outside_rows", on: outside)
        try outside.execute("""
            DO $$ BEGIN
                FOR i IN 1..\(PostgresStore.outsideWriteRowLimit + 1) LOOP
                    UPDATE region SET photographercount = photographercount + 1000 WHERE id = \(last);
                END LOOP;
            END $$
            """)
        #expect(try Self.entries(after: token, on: outside).map { $0[2] } == ["00"], "past the limit, the changes are unknown")
        #expect(try Self.scalar("SELECT count(*)::text FROM store_outside_rows", on: outside) == kept, "and its rows are not kept")
        #expect { try watcher.history(since: token) } throws: { "\($0)".contains("made outside this program") }
        let afterLoop = try watcher.currentToken()
        try outside.execute("""
            INSERT INTO region (placeid, name) SELECT 'bulk-' || g, 'Bulk ' || g FROM generate_series(1, \(PostgresStore.outsideWriteRowLimit + 1)) AS g
            """)
        #expect(try Self.entries(after: afterLoop, on: outside).map { $0[2] } == ["00"], "one statement past the limit: changes unknown")
        #expect(try Self.scalar("SELECT count(*)::text FROM store_outside_rows", on: outside) == kept, "and none of its rows kept")
        let newest = try watcher.currentToken()
        #expect(regions.waitUntilProcessed(through: newest, timeout: 20), "the controller hears it")
        let expected = try watcher.read { try $0.fetchIDs(Gallery.topRegionsRequest(limit: 10, byCountry: false)) }
        #expect(expected.first == last && table.state.ids.flatMap { $0 } == expected && table.state.failures == [],
                "the controller refetched: its replayed table is the query")
        try outside.execute("DELETE FROM region WHERE placeid LIKE 'bulk-%'")

        token = try watcher.currentToken()
        try outside.execute("UPDATE region SET name = name || '!' WHERE id = \(last)")
        try outside.execute("DELETE FROM store_outside_rows WHERE old_id = \(last) AND table_name = 'region'")
        #expect { try watcher.history(since: token) } throws: { "\($0)".contains("lost its rows") }

        let records = try PostgresRecordStore(PostgresStore(location: fixture.database, schema: TopRegionsSchema.postgres))
        _ = try records.trimHistory(before: Date().addingTimeInterval(1))
        #expect(try Self.scalar("SELECT count(*)::text FROM store_outside_rows", on: outside) == "0", "trimmed with the history")
    }

    @Test("A session cannot forge an outside write by calling the note functions itself; a transaction that makes constraints immediate is told statement by statement")
    func forgedNotesAndImmediateConstraints() async throws {
        let fixture = try await CopyFixture.copied()
        let watcher = try PostgresGallery(location: fixture.database)
        defer { watcher.close() }
        let admin = try fixture.connect()
        defer { admin.close() }
        let nobody = try PostgresConnection(Self.location(fixture, as: try Self.newRole("nobody", on: admin)))
        defer { nobody.close() }
        let regions = try admin.query("SELECT id FROM region ORDER BY id LIMIT 2").rows.compactMap { $0.first.flatMap { $0 }.flatMap { Int64($0) } }
        try #require(regions.count == 2)
        let token = try watcher.currentToken()
        for session in [nobody, admin] {
            try session.execute("SELECT store_note_outside_rows('region', 'DELETE', ARRAY[\(regions[0])]::bigint[], NULL, NULL, ARRAY[NULL]::text[], NULL)")
            try session.execute("SELECT store_note_outside_write()")
        }
        #expect(try Self.entries(after: token, on: admin) == [], "no entry announced by a direct call")
        #expect(try Self.scalar("SELECT count(*)::text FROM store_outside_rows WHERE token IS NULL", on: admin) == "0", "no row kept")

        try admin.execute("""
            BEGIN; SET CONSTRAINTS ALL IMMEDIATE;
            UPDATE region SET name = name || '!' WHERE id = \(regions[0]);
            UPDATE region SET photocount = photocount + 1 WHERE id = \(regions[1]);
            COMMIT
            """)
        #expect(try Self.entries(after: token, on: admin).map { $0[2]?.hasPrefix("fe") } == [true, true], "an entry per statement, rows told")
        let told = try watcher.history(since: token).map { $0.changes["Region"].updated }
        #expect(told == [[regions[0]: ["name"]], [regions[1]: ["photoCount"]]], "\(told)")
        #expect(try Self.scalar("SELECT count(*)::text FROM store_outside_rows WHERE token IS NULL", on: admin) == "0", "every row given its entry")
    }

    @Test("check names a database's or a role's default for the recording setting: with it off, psql's writes would go unheard")
    func recordingDefaultsAreNamed() async throws {
        let fixture = try await CopyFixture.copied()
        let admin = try fixture.connect()
        defer { admin.close() }
        let role = try Self.newRole("bulk", on: admin) { role in
            """
            DO $$ BEGIN
                EXECUTE format('ALTER DATABASE %I SET topregions.record_changes = ''off''', current_database());
                EXECUTE format('ALTER ROLE \(role) IN DATABASE %I SET topregions.record_changes = ''on''', current_database());
            END $$
            """
        }
        let problems = try Gallery.checkPostgres(fixture.database)
        #expect(problems.count == 2, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("every role in database ") && $0.contains("topregions.record_changes = 'off'") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("role \(role) in database ") && $0.contains("= 'on'") }, "\(problems)")
        try admin.execute("""
            DO $$ BEGIN
                EXECUTE format('ALTER DATABASE %I RESET topregions.record_changes', current_database());
                EXECUTE format('ALTER ROLE \(role) IN DATABASE %I RESET topregions.record_changes', current_database());
            END $$
            """)
        #expect(try Gallery.checkPostgres(fixture.database) == [])
    }

    @Test("check names a server-wide default for the recording setting (ALTER SYSTEM), on a server of its own")
    func serverRecordingDefaultIsNamed() async throws {
        let server = try PostgresTestServer()  // its own: its configuration changes
        let database = try server.makeDatabase("serverwide")
        let store = try PostgresStore(location: database, schema: TopRegionsSchema.postgres)
        defer { store.close() }
        #expect(try store.migrate() == .created)
        let admin = try PostgresConnection(database)
        defer { admin.close() }
        // The session knows the setting once it has set it; ALTER SYSTEM refuses one it does not know.
        try admin.execute("SET topregions.record_changes = ''")
        try admin.execute("ALTER SYSTEM SET topregions.record_changes = 'off'")
        try admin.execute("SELECT pg_reload_conf()")
        #expect(eventually(timeout: 10) {
            let problems = (try? Gallery.checkPostgres(database)) ?? []
            return problems.count == 1 && problems[0].hasPrefix("the server's configuration sets topregions.record_changes = 'off'")
        }, "\((try? Gallery.checkPostgres(database)) ?? [])")
        try admin.execute("ALTER SYSTEM RESET topregions.record_changes")
        try admin.execute("SELECT pg_reload_conf()")
        #expect(eventually(timeout: 10) { (try? Gallery.checkPostgres(database)) == [] })
    }

    @Test("A role that may only update one table, its search path pointing at a look-alike history, still has its write announced in the store's history")
    func restrictedRoleOtherSearchPath() async throws {
        let fixture = try await CopyFixture.copied()
        let admin = try fixture.connect()
        defer { admin.close() }
        let role = try Self.newRole("outside", on: admin) { role in
            """
            GRANT USAGE ON SCHEMA public TO \(role);
            GRANT SELECT, UPDATE ON region TO \(role);
            CREATE SCHEMA lookalike;
            CREATE TABLE lookalike.store_history (LIKE public.store_history);
            CREATE TABLE lookalike.store_outside_writes (LIKE public.store_outside_writes);
            CREATE TABLE lookalike.store_outside_rows (LIKE public.store_outside_rows);
            GRANT USAGE ON SCHEMA lookalike TO \(role);
            GRANT ALL ON ALL TABLES IN SCHEMA lookalike TO \(role);
            ALTER ROLE \(role) SET search_path = lookalike, public
            """
        }
        let before = try #require(Int64(try Self.scalar("SELECT coalesce(max(token), 0)::text FROM store_history", on: admin) ?? ""))
        let restricted = try PostgresConnection(Self.location(fixture, as: role))
        defer { restricted.close() }
        try restricted.execute("UPDATE public.region SET photocount = photocount + 1 WHERE id = (SELECT min(id) FROM public.region)")
        #expect(try Self.entries(after: before, on: admin).map { $0[1] } == ["outside"], "the entry is in the store's history")
        #expect(try Self.scalar("SELECT count(*)::text FROM lookalike.store_history", on: admin) == "0", "not in the look-alike")
        #expect(try Self.scalar("SELECT count(*)::text FROM lookalike.store_outside_rows", on: admin) == "0", "nor its rows")
        #expect(try Self.entries(after: before, on: admin).first?[2]?.hasPrefix("fe") == true, "the rows are told")
        #expect { try restricted.execute("SELECT * FROM public.store_history") } throws: { "\($0)".contains("permission denied") }
    }

    @Test("A watcher whose role may read the gallery but not the rows kept of outside writes refetches on such a write rather than stall")
    func readerWithoutRowsRefetches() async throws {
        let fixture = try await CopyFixture.copied()
        let admin = try fixture.connect()
        defer { admin.close() }
        let role = try Self.newRole("reader", on: admin) { role in
            """
            GRANT USAGE ON SCHEMA public TO \(role);
            GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role);
            REVOKE SELECT ON store_outside_rows FROM \(role)
            """
        }
        let watcher = try PostgresGallery(location: Self.location(fixture, as: role))
        defer { watcher.close() }
        let regions = try watcher.topRegionsController(limit: 10)
        try regions.performFetch()
        let table = ReplayedTable(regions)
        regions.delegate = table
        let last = try #require(regions.fetchedIDs.last)
        try admin.execute("UPDATE region SET photographercount = photographercount + 100000 WHERE id = \(last)")
        #expect { try watcher.history(since: 0) } throws: { "\($0)".contains("which this role may not read") }
        let token = try watcher.currentToken()
        #expect(regions.waitUntilProcessed(through: token, timeout: 20), "the controller goes on")
        let expected = try watcher.read { try $0.fetchIDs(Gallery.topRegionsRequest(limit: 10, byCountry: false)) }
        #expect(expected.first == last && table.state.ids.flatMap { $0 } == expected && table.state.failures == [], "refetched: the query")
        try admin.execute("UPDATE region SET photographercount = photographercount + 100000 WHERE id = \(expected[1])")
        #expect(regions.waitUntilProcessed(through: try watcher.currentToken(), timeout: 20), "and hears the next one")
        let after = try watcher.read { try $0.fetchIDs(Gallery.topRegionsRequest(limit: 10, byCountry: false)) }
        #expect(after.first == expected[1] && table.state.ids.flatMap { $0 } == after, "the query again")
    }

    @Test("A store without the announcement of outside writes (its trigger or its table of rows dropped, or a store of one of the two versions before) is named by check and made whole by migrate")
    func missingOutsideTriggerRepairedByMigrate() async throws {
        let fixture = try await CopyFixture.copied()
        let connection = try fixture.connect()
        defer { connection.close() }
        let database = try PostgresStore(location: fixture.database, schema: TopRegionsSchema.postgres)
        defer { database.close() }
        for (drop, named) in [("DROP TRIGGER store_record_outside_write ON store_outside_writes",
                               "store_outside_writes has no trigger store_record_outside_write"),
                              ("DROP TABLE store_outside_rows", "table store_outside_rows is missing")] {
            try connection.execute(drop)
            let problems = try Gallery.checkPostgres(fixture.database)
            #expect(problems.count == 1 && problems.first?.contains(named) == true, "\(problems)")
            #expect(try database.migrate() == .upgraded)
            #expect(try Gallery.checkPostgres(fixture.database) == [])
        }
        let tracked = TopRegionsSchema.entities.filter(\.isTracked).map { $0.name.lowercased() }
        func triggerFunctions(_ body: String) -> String {
            tracked.map { "CREATE OR REPLACE FUNCTION store_record_change_\($0)() RETURNS trigger LANGUAGE plpgsql AS $$ \(body) $$;" }.joined()
        }

        // The version before: transactions noted without their rows, no table of rows,
        // and no record of the migration.
        try connection.execute("""
            DROP TABLE store_outside_rows; DROP FUNCTION store_note_outside_rows(text, text, bigint[], bigint[], text[], text[], text[]);
            ALTER TABLE store_outside_writes DROP COLUMN rows_unknown;
            CREATE OR REPLACE FUNCTION store_note_outside_write() RETURNS void LANGUAGE sql SECURITY DEFINER AS $$
                INSERT INTO store_outside_writes (transaction_id) VALUES (txid_current()) ON CONFLICT DO NOTHING $$;
            \(triggerFunctions("BEGIN IF coalesce(current_setting('topregions.record_changes', true), '') NOT IN ('on', 'off') THEN PERFORM store_note_outside_write(); END IF; RETURN NULL; END"))
            DELETE FROM store_migrations WHERE name = 'postgres-store.v5.outside-rows'
            """)
        #expect { try PostgresGallery(location: fixture.database) } throws: { "\($0)".contains("topregions migrate") }
        #expect(try database.migrate() == .upgraded)
        #expect(try database.state() == .current)
        var token = try #require(Int64(try Self.scalar("SELECT coalesce(max(token), 0)::text FROM store_history", on: connection) ?? ""))
        try connection.execute("UPDATE photo SET title = title || '!' WHERE id = (SELECT min(id) FROM photo)")
        #expect(try Self.entries(after: token, on: connection).first?[2]?.hasPrefix("fe") == true, "rows told after the upgrade")

        // The version before that: no table, no functions, every table's trigger function
        // of that version, and no record of either migration.
        try connection.execute("""
            DROP TABLE store_outside_writes; DROP TABLE store_outside_rows; DROP FUNCTION store_note_outside_write();
            DROP FUNCTION store_record_outside_write(); DROP FUNCTION store_note_outside_rows(text, text, bigint[], bigint[], text[], text[], text[]);
            DROP FUNCTION store_record_truncate() CASCADE;
            \(triggerFunctions("BEGIN RETURN NULL; END"))
            DELETE FROM store_migrations WHERE name IN ('postgres-store.v4.outside-writes', 'postgres-store.v5.outside-rows')
            """)
        #expect { try PostgresGallery(location: fixture.database) } throws: { "\($0)".contains("topregions migrate") }
        #expect(try database.migrate() == .upgraded)
        #expect(try database.state() == .current)
        let gallery = try PostgresGallery(location: fixture.database)
        defer { gallery.close() }
        token = try gallery.currentToken()
        try connection.execute("UPDATE photo SET title = title || '!' WHERE id = (SELECT min(id) FROM photo)")
        #expect(try Self.entries(after: token, on: connection).map { $0[1] } == ["outside"], "heard after the upgrade")
        #expect(try gallery.history(since: token).first?.changes["Photo"].updated.values.first == ["title"], "row by row")
        let local = try gallery.user(named: "local")
        let photo = try #require(try gallery.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.first?.flickrID)
        let afterOutside = try gallery.currentToken()
        _ = try gallery.view(flickrID: photo, for: local)
        #expect(try gallery.history(since: afterOutside).last?.changes["Recent"].inserted.count == 1, "this program's writes are recorded row by row again")
    }
}
