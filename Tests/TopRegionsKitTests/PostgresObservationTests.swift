import Foundation
import PostgreSQL
import PostgresStore
import ResultsController
import Store
import Synchronization
import TestSupport
import Testing
@testable import TopRegionsKit

/// A controller's batches applied to a table model, as a table view would apply them.
final class ReplayedTable: ResultsControllerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var table: TableModel
    private var failures: [String] = []
    private var batches: [ChangeBatch] = []

    init(_ controller: ResultsController<some Record>) {
        table = TableModel(controller.snapshot)
    }

    func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) {
        lock.withLock {
            batches.append(change.batch)
            do { try table.apply(change.batch) } catch { failures.append("\(error)") }
        }
    }

    /// The ids of the rows the batches so far deleted, inserted, moved or updated.
    var touchedIDs: Set<Int64> {
        lock.withLock {
            Set(batches.flatMap { batch in
                batch.rowDeletes.map(\.id) + batch.rowInserts.map(\.id) + batch.moves.map(\.id) + batch.updates.map(\.id)
            })
        }
    }

    var state: (ids: [[Int64]], failures: [String]) {
        lock.withLock { (table.sections.map(\.ids), failures) }
    }
}

/// Change observation on PostgreSQL: every commit, by any connection, reaches every
/// observer once, in token order, through the history table and LISTEN/NOTIFY.
@Suite("Change observation on a PostgreSQL store", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresObservationTests {
    @Test("Controllers on one connection follow another connection's commits; their batches replayed equal the query (seed printed)")
    func controllersFollowOtherConnections() async throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresObservationTests.controllersFollowOtherConnections")
        var random = SeededGenerator(seed: seed)
        let fixture = try await CopyFixture.copied()
        let watcher = try PostgresGallery(location: fixture.database)
        let writer = try PostgresGallery(location: fixture.database)
        defer { watcher.close(); writer.close() }
        let local = try writer.user(named: "local")
        let controllers = (recents: try watcher.recentsController(for: local), favorites: try watcher.favoritesController(for: local),
                           regions: try watcher.topRegionsController(limit: 10))
        try controllers.recents.performFetch()
        try controllers.favorites.performFetch()
        try controllers.regions.performFetch()
        let tables = (ReplayedTable(controllers.recents), ReplayedTable(controllers.favorites), ReplayedTable(controllers.regions))
        controllers.recents.delegate = tables.0
        controllers.favorites.delegate = tables.1
        controllers.regions.delegate = tables.2
        let photos = try writer.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.map(\.flickrID)
        for round in 0..<80 {
            if round % 10 == 9 {
                // A region's count changes by raw SQL, as a sync's does: the top regions reorder.
                try writer.write { transaction in
                    try transaction.execute("UPDATE Region SET photoCount = photoCount + $1 WHERE id = (SELECT min(id) FROM Region WHERE photoCount > 0)",
                                            [.integer(Int64.random(in: 1...40, using: &random))])
                }
            } else {
                _ = ListChange.random(photos: Array(photos.prefix(30)), using: &random).apply(to: writer, for: local, at: Date())
            }
            let token = try writer.currentToken()
            for processed in [controllers.recents.waitUntilProcessed(through: token, timeout: 10),
                              controllers.favorites.waitUntilProcessed(through: token, timeout: 10),
                              controllers.regions.waitUntilProcessed(through: token, timeout: 10)] {
                #expect(processed, "round \(round), seed \(seed): token \(token) not processed")
            }
        }
        let expected = try writer.read { context in
            (recents: try context.fetchIDs(Gallery.recentsRequest(userID: local.id)),
             favorites: try context.fetchIDs(Gallery.favoritesRequest(userID: local.id)),
             regions: try context.fetchIDs(Gallery.topRegionsRequest(limit: 10, byCountry: false)))
        }
        for (name, table, ids) in [("recents", tables.0, expected.recents), ("favorites", tables.1, expected.favorites), ("regions", tables.2, expected.regions)] {
            let state = table.state
            #expect(state.failures == [], "\(name), seed \(seed)")
            #expect(state.ids.flatMap { $0 } == ids, "\(name), seed \(seed): the replayed table is not the query")
        }
        #expect(controllers.recents.fetchedIDs == expected.recents && controllers.favorites.fetchedIDs == expected.favorites)
    }

    @Test("Each commit's change set on PostgreSQL is the one SQLite records for the same change (seed printed)")
    func changeSetsAgree() async throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresObservationTests.changeSetsAgree")
        var random = SeededGenerator(seed: seed)
        let fixture = try await CopyFixture.copied()
        let sqlite = fixture.test.gallery
        let postgres = try PostgresGallery(location: fixture.database)
        defer { postgres.close() }
        let photos = try sqlite.readableStore.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.map(\.flickrID)
        let start = Date(timeIntervalSince1970: 1_900_000_000)
        var sqliteToken = try sqlite.store.currentToken(), postgresToken = try postgres.currentToken()
        for round in 0..<120 {
            let change = ListChange.random(photos: Array(photos.prefix(25)), using: &random)
            let name = ["local", "ada"][Int.random(in: 0...1, using: &random)]
            let date = start.addingTimeInterval(Double(round))
            _ = change.apply(to: sqlite, for: try sqlite.user(named: name), at: date)
            _ = change.apply(to: postgres, for: try postgres.user(named: name), at: date)
            let expected = try sqlite.store.history(since: sqliteToken), actual = try postgres.history(since: postgresToken)
            #expect(actual.map { Self.shape($0.changes) } == expected.map { Self.shape($0.changes) },
                    "round \(round), seed \(seed): \(change) for \(name)")
            #expect(actual.map(\.token) == actual.map(\.token).sorted() && Set(actual.map(\.token)).count == actual.count)
            sqliteToken = expected.last?.token ?? sqliteToken
            postgresToken = actual.last?.token ?? postgresToken
        }
        #expect(postgresToken > 0, "seed \(seed): something was committed")
    }

    @Test("Photos inserted many at once (PostgreSQL's bulk load) and a few at a time get ids in order, as SQLite's; rows, title order and change sets agree (seed printed)")
    func manyInsertedAtOnce() async throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresObservationTests.manyInsertedAtOnce")
        var random = SeededGenerator(seed: seed)
        let fixture = try await CopyFixture.copied()
        let sqlite = fixture.test.gallery
        let postgres = try PostgresGallery(location: fixture.database)
        defer { postgres.close() }
        let region = try #require(try sqlite.readableStore.read { try $0.fetch(RegionRecord.self, where: Key("photoCount") > 0) }.first?.id)
        // Titles that tell a byte order from localizedStandard's; tabs, newlines and
        // backslashes, which COPY's text format escapes. The first batch's first photo is
        // given its id (past every other): the rest are numbered after it on both stores.
        let titles = ["Zebra", "zebra", "Äpfel", "apple 10", "apple 9", "tab\there", "line\nbreak", "back\\slash", "É", "e\u{301}", "東京", "🦓"]
        for (round, count) in [250, 3, Transaction.bulkInsertRows, Transaction.bulkInsertRows - 1].enumerated() {
            let maxID = try sqlite.readableStore.read { try $0.rows("SELECT max(id) FROM Photo") }.first?[0].int64 ?? 0
            var photos = (0..<count).map { index in
                var photo = PhotoRecord()
                photo.flickrID = "bulk-\(round)-\(index)"
                photo.flickrNumber = Int64.random(in: 1...1_000_000, using: &random)
                photo.title = titles[Int.random(in: 0..<titles.count, using: &random)] + (Bool.random(using: &random) ? " \(index)" : "")
                photo.latitude = Double.random(in: -90...90, using: &random)
                photo.regionID = region
                if round == 0 && index == 0 { photo.id = maxID + 10_000 }
                return photo
            }
            let sqliteToken = try sqlite.store.currentToken(), postgresToken = try postgres.currentToken()
            let onPostgres = try postgres.write { transaction in
                var inserted = photos
                try transaction.insert(&inserted)
                return inserted
            }
            photos = try await sqlite.store.write { [photos] transaction in
                var inserted = photos
                try transaction.insert(&inserted)
                return inserted
            }
            #expect(onPostgres.map(\.id) == photos.map(\.id), "seed \(seed), \(count) photos: the same ids, in order")
            #expect(Set(onPostgres.compactMap(\.id)).count == count)
            let expected = try sqlite.store.history(since: sqliteToken), actual = try postgres.history(since: postgresToken)
            #expect(actual.map { Self.shape($0.changes) } == expected.map { Self.shape($0.changes) }, "seed \(seed), \(count) photos")
        }
        let request = Gallery.regionPhotosRequest(regionID: region)
        let stored = try postgres.read { try $0.fetch(request, as: PhotoRecord.self) }
        #expect(stored == (try sqlite.readableStore.read { try $0.fetch(request, as: PhotoRecord.self) }), "seed \(seed): rows and title order agree")
        // A photo inserted afterwards is numbered past every id given or drawn.
        var later = PhotoRecord()
        later.flickrID = "later"
        later = try postgres.write { try $0.inserted(later) }
        #expect((later.id ?? 0) > (stored.compactMap(\.id).max() ?? .max))
    }

    /// A change set with the ids of list rows (Recents, Favorites) left out: SQLite gives a
    /// new row the id of one just deleted, PostgreSQL's identity never does, so those ids
    /// differ between the stores while photos' and users' ids (copied) do not.
    private static func shape(_ changes: ChangeSet) -> String {
        changes.entityNames.map { name in
            let entity = changes[name]
            guard ["Recent", "Favorite"].contains(name) else {
                return "\(name): +\(entity.inserted.sorted()) ~\(entity.updated.sorted { $0.key < $1.key }.map { "\($0.key)\($0.value.sorted())" }) -\(entity.deleted.sorted())"
            }
            return "\(name): +\(entity.inserted.count) ~\(entity.updated.values.map { $0.sorted().description }.sorted()) -\(entity.deleted.count)"
        }.joined(separator: "; ")
    }

    @Test("A watcher whose server restarts reconnects and reads what it missed: every commit once, in token order, and its table equals the query")
    func serverRestart() async throws {
        let server = try PostgresTestServer()
        let fixture = try await CopyFixture()
        let database = try server.makeDatabase("restart")
        try Gallery.copyStore(from: fixture.path, to: database)
        let watcher = try PostgresGallery(location: database)
        let writer = try PostgresGallery(location: database)
        defer { watcher.close(); writer.close() }
        let local = try writer.user(named: "local")
        let controller = try watcher.recentsController(for: local)
        try controller.performFetch()
        let table = ReplayedTable(controller)
        controller.delegate = table
        let heard = Mutex<[Int64]>([])
        let observation = watcher.observe { event in
            if case .committed(let entry, _) = event { heard.withLock { $0.append(entry.token) } }
        }
        defer { observation.cancel() }
        let photos = try writer.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.map(\.flickrID)
        let later = { (index: Int) in Date(timeIntervalSince1970: 2_000_000_000 + Double(index)) }
        for (index, photo) in photos.prefix(3).enumerated() { _ = try writer.view(flickrID: photo, at: later(index), for: local) }
        try server.restart()
        // Committed by a connection made again, before or while the watcher's listener
        // connects again: read from the history when it does.
        for (index, photo) in photos.dropFirst(3).prefix(4).enumerated() { _ = try writer.view(flickrID: photo, at: later(index + 3), for: local) }
        let last = try writer.currentToken()
        #expect(controller.waitUntilProcessed(through: last, timeout: 20), "the watcher caught up after the restart")
        let deadline = Date().addingTimeInterval(10)
        while heard.withLock({ $0.last ?? 0 }) < last && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        let tokens = heard.withLock { $0 }
        #expect(tokens == (try writer.history(since: 0)).map(\.token), "each commit heard once, in order")
        let expected = try writer.read { try $0.fetchIDs(Gallery.recentsRequest(userID: local.id)) }
        #expect(table.state.ids.flatMap { $0 } == expected && table.state.failures == [])
        let viewed = Array(photos.prefix(7).reversed())
        #expect(try watcher.recentRows(for: local).prefix(7).map(\.id) == viewed, "the 7 views are the newest Recents")
    }

    @Test("Trimmed history: the token stays, reading before it is refused as trimmed, and a new commit is heard")
    func trimmedHistory() async throws {
        let fixture = try await CopyFixture.copied()
        let store = try PostgresGallery(location: fixture.database)
        defer { store.close() }
        let local = try store.user(named: "local")
        let photos = try store.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.map(\.flickrID)
        for photo in photos.prefix(3) { _ = try store.view(flickrID: photo, for: local) }
        let before = try store.currentToken()
        #expect(before >= 3)
        let records = try PostgresRecordStore(PostgresStore(location: fixture.database, schema: TopRegionsSchema.postgres))
        defer { records.close() }
        #expect(try records.trimHistory(before: Date().addingTimeInterval(60)) == Int(before))
        #expect(try records.currentToken() == before, "the newest token outlives its entry")
        #expect(throws: StoreError.self) { try records.history(since: 0) }
        #expect(try records.history(since: before) == [])
        let token = try store.commit(author: nil) { transaction in
            try transaction.execute("UPDATE Photo SET title = title || '!' WHERE flickrID = $1", [.text(photos[0])])
        }.token
        #expect(token == before + 1, "tokens go on after the trimmed ones")
        #expect(try records.history(since: before).map(\.token) == [before + 1])
    }

    @Test("A history entry no program can read (written by hand) is a gap: watchers refetch and go on hearing later commits")
    func unreadableEntryIsAGap() async throws {
        let fixture = try await CopyFixture.copied()
        let watcher = try PostgresGallery(location: fixture.database)
        let writer = try PostgresGallery(location: fixture.database)
        defer { watcher.close(); writer.close() }
        let local = try writer.user(named: "local")
        let favorites = try watcher.favoritesController(for: local)
        try favorites.performFetch()
        let table = ReplayedTable(favorites)
        favorites.delegate = table
        let photos = try writer.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.compactMap(\.id)
        try #require(photos.count >= 4)
        try writer.addFavorite(photoID: photos[0], for: local)
        let connection = try fixture.connect()
        defer { connection.close() }
        try connection.execute("""
            INSERT INTO store_history (token, committed_at, origin, author, changes)
            VALUES (nextval('store_history_token'), extract(epoch FROM now()), 'by hand', NULL, '\\xdeadbeef01ff'::bytea);
            NOTIFY topregions_store_history
            """)
        for photo in photos[1...3] { try writer.addFavorite(photoID: photo, for: local) }
        try writer.moveFavorite(from: 3, to: 0, for: local)
        let token = try writer.currentToken()
        #expect(favorites.waitUntilProcessed(through: token, timeout: 20), "the watcher goes past the entry it cannot read")
        let expected = try writer.read { try $0.fetchIDs(Gallery.favoritesRequest(userID: local.id)) }
        #expect(table.state.ids == [expected] && table.state.failures == [])
        #expect(Set(photos[0...3]).isSubset(of: Set(try writer.read { try $0.fetch(Gallery.favoritesRequest(userID: local.id), as: FavoriteRecord.self) }.compactMap(\.photoID))))
    }

    @Test("A history trigger dropped or disabled by hand is found by check, refused on opening, and made again by migrate")
    func missingTriggers() async throws {
        let fixture = try await CopyFixture.copied()
        let connection = try fixture.connect()
        defer { connection.close() }
        try connection.execute("""
            DROP TRIGGER store_record_inserts ON photo; ALTER TABLE favorite DISABLE TRIGGER store_record_change;
            ALTER TABLE recent ENABLE REPLICA TRIGGER store_record_change
            """)
        let problems = try Gallery.checkPostgres(fixture.database)
        #expect(problems.count == 3 && problems.contains { $0.contains("photo has no trigger store_record_inserts") }
                && problems.contains { $0.contains("store_record_change on favorite is disabled") }
                && problems.contains { $0.contains("store_record_change on recent is disabled (or fires in replica sessions only)") }, "\(problems)")
        #expect { try PostgresGallery(location: fixture.database) } throws: { "\($0)".contains("topregions migrate") }
        let database = try PostgresStore(location: fixture.database, schema: TopRegionsSchema.postgres)
        defer { database.close() }
        #expect(try database.migrate() == .upgraded)
        #expect(try Gallery.checkPostgres(fixture.database) == [])
        let gallery = try PostgresGallery(location: fixture.database)
        defer { gallery.close() }
        let before = try gallery.currentToken()
        try gallery.write { transaction in
            try transaction.execute("INSERT INTO Photo (flickrID, flickrNumber, title, subtitle, photoDescription, downloaded) VALUES ('by hand', 1, 't', '', '', 0)")
        }
        #expect(try gallery.history(since: before).first?.changes["Photo"].inserted.count == 1, "the trigger made again records")
    }

    @Test("A history entry written by hand past the token sequence is named by check; migrate moves the sequence on and watchers hear the next commit")
    func historyEntryAheadOfTheSequence() async throws {
        let fixture = try await CopyFixture.copied()
        let connection = try fixture.connect()
        defer { connection.close() }
        let gallery = try PostgresGallery(location: fixture.database)
        defer { gallery.close() }
        let local = try gallery.user(named: "local")
        let favorites = try gallery.favoritesController(for: local)
        try favorites.performFetch()
        let table = ReplayedTable(favorites)
        favorites.delegate = table
        let ahead = try gallery.currentToken() + 1_000_000
        try connection.execute("""
            INSERT INTO store_history VALUES (\(ahead), extract(epoch FROM now()), 'by hand', NULL, '\\xdeadbeef01ff'::bytea);
            NOTIFY topregions_store_history
            """)
        #expect(try Gallery.checkPostgres(fixture.database).contains { $0.contains("holds token \(ahead)") })
        let database = try PostgresStore(location: fixture.database, schema: TopRegionsSchema.postgres)
        defer { database.close() }
        #expect(try database.migrate() == .upgraded)
        #expect(try Gallery.checkPostgres(fixture.database) == [])
        let photo = try #require(try gallery.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.first?.id)
        try gallery.addFavorite(photoID: photo, for: local)
        let token = try gallery.currentToken()
        #expect(token > ahead, "the next commit's token is past the entry written by hand")
        #expect(favorites.waitUntilProcessed(through: token, timeout: 20))
        #expect(table.state.ids == [try gallery.read { try $0.fetchIDs(Gallery.favoritesRequest(userID: local.id)) }])
    }

    @Test("A database whose sessions are replicas (no trigger fires) is refused, with how to reset it, and named by check")
    func replicaSessionsRefused() async throws {
        let fixture = try await CopyFixture.copied()
        let connection = try fixture.connect()
        defer { connection.close() }
        let name = try #require(fixture.database.split(separator: "/").last.map(String.init))
        try connection.execute("ALTER DATABASE \(name) SET session_replication_role = replica")
        #expect(try Gallery.checkPostgres(fixture.database).contains { $0.contains("session_replication_role = replica") })
        #expect { try PostgresGallery(location: fixture.database) } throws: { "\($0)".contains("RESET session_replication_role") }
        try connection.execute("ALTER DATABASE \(name) RESET session_replication_role")
        #expect(try Gallery.checkPostgres(fixture.database) == [])
    }

    @Test("A store of the first version is upgraded by migrate: history, triggers and all; observation works after")
    func upgradeFromFirstVersion() async throws {
        let fixture = try await CopyFixture.copied()
        let connection = try fixture.connect()
        defer { connection.close() }
        let functions = try connection.query("SELECT proname FROM pg_proc WHERE proname LIKE 'store\\_record\\_change\\_%'").rows.compactMap { $0[0] }
        #expect(Set(functions) == Set(TopRegionsSchema.entities.filter(\.isTracked).map { "store_record_change_" + $0.name.lowercased() }),
                "one trigger function per tracked table")
        try connection.execute("""
            DROP TABLE store_history, store_metadata, store_cache; DROP SEQUENCE store_history_token;
            \(functions.map { "DROP FUNCTION \($0)() CASCADE;" }.joined(separator: " "))
            DELETE FROM store_migrations WHERE name IN ('postgres-store.v2.history', 'postgres-store.v3.row-triggers')
            """)
        #expect { try PostgresGallery(location: fixture.database) } throws: { "\($0)".contains("topregions migrate") }
        let database = try PostgresStore(location: fixture.database, schema: TopRegionsSchema.postgres)
        defer { database.close() }
        #expect(try database.migrate() == .upgraded)
        #expect(try database.state() == .current)
        #expect(try database.migrate() == .current, "a second migrate finds it current")
        let gallery = try PostgresGallery(location: fixture.database)
        defer { gallery.close() }
        let photo = try gallery.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.first?.flickrID ?? ""
        _ = try gallery.view(flickrID: photo, for: try gallery.user(named: "local"))
        #expect(try gallery.history(since: 0).last?.changes["Recent"].inserted.count == 1)
    }
}

@Suite("The PostgreSQL store's connection pool", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresPoolUseTests {
    @Test("Reads and writes from many threads share at most the pool's connections; sessions the server ended are replaced")
    func poolShared() async throws {
        let fixture = try await CopyFixture.copied()
        let gallery = try PostgresGallery(location: fixture.database, poolSize: 3)
        defer { gallery.close() }
        let sessions = Mutex<Set<Int64>>([])
        let failures = Mutex<[String]>([])
        let local = try gallery.user(named: "local")
        let photos = try gallery.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.map(\.flickrID)
        DispatchQueue.concurrentPerform(iterations: 12) { worker in
            do {
                let pid = try gallery.read { context in
                    try context.rows("SELECT pg_backend_pid() AS pid, pg_sleep(0.1)").first?[0].int64 ?? -1
                }
                sessions.withLock { _ = $0.insert(pid) }
                _ = try gallery.view(flickrID: photos[worker % photos.count], for: local)
            } catch {
                failures.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let used = sessions.withLock { $0 }
        #expect(used.count >= 2 && used.count <= 3, "12 threads used \(used.count) sessions of a pool of 3")
        // The server ends every session of the pool: the next calls get new ones.
        let admin = try fixture.connect()
        defer { admin.close() }
        for pid in used { _ = try admin.query("SELECT pg_terminate_backend($1)", [.integer(pid)]) }
        try await Task.sleep(nanoseconds: 200_000_000)
        let after = try gallery.read { try $0.rows("SELECT pg_backend_pid()").first?[0].int64 ?? -1 }
        #expect(!used.contains(after))
        let recent = Set(try gallery.recentRows(for: local).map(\.id))
        #expect(Set(photos.prefix(12)).isSubset(of: recent), "every view was made: \(photos.prefix(12)) in \(recent)")
        _ = try gallery.view(flickrID: photos[0], for: local)  // a write on a new session records its history too
        #expect(try gallery.history(since: 0).last?.changes["Recent"].isEmpty == false)
    }
}

@Suite("The sync lock on a PostgreSQL store", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresSyncLockTests {
    /// The server process of the session holding the sync lock, if any.
    private func lockHolder(_ admin: PostgresConnection) throws -> Int64? {
        // The key's low 32 bits (docs/operations.md gives the key).
        // This database's: other tests' passes hold their own databases' locks on the server.
        let rows = try admin.query("""
            SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid::bigint = $1
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """, [.integer(0x6567_6e73)]).rows
        guard let text = rows.first?.first ?? nil else { return nil }
        return Int64(text)
    }

    @Test("A pass whose lock session the server ends stops at its next commit (temporary failure), and the next pass completes")
    func lostLockStopsThePass() async throws {
        let database = try PostgresTestServer.shared().makeDatabase("lock")
        let flickr = try FlickrTestServer()
        // Slow pages: the pass is still reading when its lock goes.
        try await flickr.addFault(["method": "flickr.photos.search", "delay": 0.4, "times": -1])
        let gallery = try PostgresGallery.openForSyncing(location: database)
        defer { gallery.close() }
        let admin = try PostgresConnection(database)
        defer { admin.close() }
        var options = SyncOptions(pages: 12, perPage: 100)
        options.concurrentPlaceLookups = 2
        // The passes compared below must each resolve every place: with the whole suite
        // running, lookups starved of a thread could pass the default 120 s deadline.
        options.placeLookupDeadline = 3_600
        let pass = Task { try await gallery.sync(client: serverClient(flickr), options: options) }
        var holder: Int64?
        // Generous: with the whole suite running, the pass's task may wait long for a thread.
        let deadline = Date().addingTimeInterval(90)
        while holder == nil && Date() < deadline {
            holder = try lockHolder(admin)
            if holder == nil { try await Task.sleep(nanoseconds: 20_000_000) }
        }
        let pid = try #require(holder, "the pass took the lock")
        try await Task.sleep(nanoseconds: 600_000_000)  // a page group or so stored
        _ = try admin.query("SELECT pg_terminate_backend($1)", [.integer(pid)])
        let result = try await pass.value
        #expect(result.outcome == .failed && result.failure?.isTemporary == true, "\(result)")
        #expect(result.error?.contains("sync lock was lost") == true, "\(result.error ?? "")")
        #expect(result.photosNew < 1_200, "the pass stopped before it read every page")
        #expect(try Gallery.checkPostgres(database) == [], "what it stored is whole")

        try await flickr.clearFaults()
        let next = try await gallery.sync(client: serverClient(flickr), options: options)
        #expect(next.outcome == .newData)
        // The same as one pass that was never interrupted stores.
        let reference = try PostgresGallery.openForSyncing(location: try PostgresTestServer.shared().makeDatabase("lock"))
        defer { reference.close() }
        _ = try await reference.sync(client: serverClient(flickr), options: options)
        let count = { (gallery: PostgresGallery) in try gallery.read { try $0.count(FetchRequest(PhotoRecord.self)) } }
        #expect(try count(gallery) == count(reference) && count(reference) > 1_000)
        #expect(try gallery.topRegionRows() == reference.topRegionRows())
        #expect(try Gallery.checkPostgres(database) == [])
        #expect(try lockHolder(admin) == nil, "the lock is released after the pass")
    }

    @Test("A pass whose lock goes while it looks up places asks the server nothing more (a second of lookups at most)")
    func lostLockStopsPlaceLookups() async throws {
        let database = try PostgresTestServer.shared().makeDatabase("lock")
        let flickr = try FlickrTestServer()
        try await flickr.addFault(["method": "flickr.places.getInfo", "delay": 0.1, "times": -1])
        let gallery = try PostgresGallery.openForSyncing(location: database)
        defer { gallery.close() }
        let admin = try PostgresConnection(database)
        defer { admin.close() }
        var options = SyncOptions(pages: 4, perPage: 100)
        options.concurrentPlaceLookups = 2
        let pass = Task { try await gallery.sync(client: serverClient(flickr), options: options) }
        // Waits until the lookups have begun.
        let deadline = Date().addingTimeInterval(90)
        while try await flickr.requests().filter({ $0.method == "flickr.places.getInfo" }).count < 3 && Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        let pid = try #require(try lockHolder(admin), "the pass holds the lock while it looks up places")
        _ = try admin.query("SELECT pg_terminate_backend($1)", [.integer(pid)])
        let terminated = Date().timeIntervalSince1970
        let result = try await pass.value
        #expect(result.outcome == .failed && result.failure?.isTemporary == true, "\(result)")
        let later = try await flickr.requests().filter { $0.method == "flickr.places.getInfo" && $0.time > terminated }
        // Lookups at 0.1 s, two at a time: a second's worth, and those in flight.
        #expect(later.count <= 24, "\(later.count) lookups after the lock was lost")
        let all = try await flickr.requests().filter { $0.method == "flickr.places.getInfo" }.count
        #expect(all < 100, "the pass did not look up every place (\(all))")
    }
}
