import Foundation
import PostgreSQL
import PostgresStore
import Store
import TestSupport
import Testing
@testable import TopRegionsKit

/// A gallery in SQLite with two users' lists, a thumbnail and hard titles, and a fresh
/// database on the throwaway PostgreSQL server.
final class CopyFixture {
    let test: TestGallery
    let database: String
    var path: String { test.gallery.path ?? "" }

    /// A fixture whose gallery is copied into its database already.
    static func copied() async throws -> CopyFixture {
        let fixture = try await CopyFixture()
        try Gallery.copyStore(from: fixture.path, to: fixture.database)
        return fixture
    }

    /// A connection of its own to the fixture's database; the caller closes it.
    func connect() throws -> PostgresConnection { try PostgresConnection(database) }

    init() async throws {
        test = try TestGallery()
        database = try PostgresTestServer.shared().makeDatabase("copy")
        let gallery = test.gallery
        _ = try await gallery.sync(client: try sampleClient(), options: SyncOptions(pages: 2, perPage: 100))
        let photos = try await gallery.store.read {
            try $0.fetch(FetchRequest(PhotoRecord.self, predicate: Key("region").isNotNull, sortDescriptors: [SortKey("id")]), as: PhotoRecord.self)
        }
        // The top region's titles become the collation corpus's hardest (digits, widths, accents).
        let (_, regionID) = try await test.topRegion()
        let inRegion = photos.filter { $0.regionID == regionID }
        // One title as long as a title may be, in a script whose sort key is longer than a
        // PostgreSQL index entry may be; and a region name as long as a name may be.
        var random = SeededGenerator(seed: 23)
        let longTitle = String(String.UnicodeScalarView((0..<PhotoText.Limit.title).compactMap { _ in
            Unicode.Scalar(UInt32.random(in: 0xAC00...0xD7A3, using: &random))  // Hangul syllables: long keys that do not compress
        }))
        // Cyrillic letters, each with three combining marks: 800 scalars.
        let regionName = String(String.UnicodeScalarView((0..<PhotoText.Limit.name * 4).compactMap { index in
            Unicode.Scalar(index % 4 == 0 ? UInt32.random(in: 0x0430...0x044F, using: &random) : UInt32.random(in: 0x0300...0x036F, using: &random))
        }))
        let titles = [longTitle] + generatedTitles(count: inRegion.count, seed: 23)
        try await gallery.store.write { transaction in
            for (photo, title) in zip(inRegion, titles) {
                try transaction.execute("UPDATE Photo SET title = ? WHERE id = ?", [.text(title), .integer(photo.id ?? 0)])
            }
            try transaction.execute("UPDATE Region SET name = ? WHERE id = ?",
                                    [.text(regionName), .integer(regionID)])
        }
        let local = try gallery.user(named: GalleryUser.localName)
        let (other, _) = try gallery.addUser(named: "ada")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for (offset, photo) in photos.prefix(22).enumerated() {
            _ = try gallery.recordView(photoID: photo.id ?? 0, at: start.addingTimeInterval(Double(offset)), for: offset % 3 == 0 ? other : local)
        }
        for photo in photos.suffix(5).reversed() { try gallery.addFavorite(photoID: photo.id ?? 0, for: local) }
        try await gallery.store.write { transaction in
            var thumbnail = ThumbnailRecord(bytes: [0xFF, 0xD8, 0x00, 0x01, 0xFF, 0xD9], fetchedAt: start, photoID: photos[0].id ?? 0)
            try transaction.insert(&thumbnail)
        }
    }
}

/// Every row of every entity, by table, as stored (id first, then the stored columns).
private func allRows(of gallery: Gallery) throws -> [String: [[SQLValue]]] {
    try gallery.store.read { context in
        var tables: [String: [[SQLValue]]] = [:]
        for entity in TopRegionsSchema.entities {
            let columns = ([entity.primaryKey] + entity.storedColumns).map { "\"\($0)\"" }.joined(separator: ", ")
            tables[entity.name] = try context.rows("SELECT \(columns) FROM \"\(entity.name)\" ORDER BY id").map(\.values)
        }
        return tables
    }
}

@Suite("A gallery copied to PostgreSQL and back", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresStoreCopyTests {
    @Test("SQLite → PostgreSQL → SQLite gives back every row of every table, and check finds nothing on either")
    func roundTrip() async throws {
        let fixture = try await CopyFixture.copied()
        #expect(try Gallery.checkPostgres(fixture.database) == [])
        let counts = try Gallery.postgresStatus(fixture.database)
        let status = try fixture.test.gallery.status()
        #expect(counts.photos == status.photos && counts.regions == status.regions)

        let back = fixture.test.directory.appendingPathComponent("back.sqlite").path
        try Gallery.copyStore(from: fixture.database, to: back)
        let copy = try Gallery.open(path: back, for: .read)
        defer { copy.close() }
        #expect(try copy.check() == [])
        let original = try allRows(of: fixture.test.gallery), copied = try allRows(of: copy)
        for entity in TopRegionsSchema.entities {
            #expect(copied[entity.name] == original[entity.name], "\(entity.name) differs")
        }
        #expect(original["Thumbnail"]?.count == 1 && original["Recent"]?.count == 22 && original["Favorite"]?.count == 5)
        let local = try copy.user(named: GalleryUser.localName)
        #expect(try copy.recentRows(for: local) == fixture.test.gallery.recentRows(for: try fixture.test.gallery.user(named: GalleryUser.localName)))
        #expect(try copy.favoriteRows(for: local).map(\.id) == fixture.test.gallery.favoriteRows(for: try fixture.test.gallery.user(named: GalleryUser.localName)).map(\.id))
        #expect(try copy.store.history(since: 0).isEmpty, "a copy starts without history")

        // New rows in the copy take new ids: the identity sequences were moved past the copied ones.
        let connection = try PostgresConnection(fixture.database)
        defer { connection.close() }
        let id = try connection.query("INSERT INTO setting (key, value) VALUES ('probe', 'x') RETURNING id").integer(0, "id")
        #expect(id ?? 0 > (original["Setting"]?.compactMap { $0[0].int64 }.max() ?? 0))
    }

    @Test("PostgreSQL orders top regions and a region's photos by the stored keys exactly as SQLite's collation does")
    func sameOrder() async throws {
        let fixture = try await CopyFixture.copied()
        let connection = try fixture.connect()
        defer { connection.close() }
        let top = try connection.query("""
            SELECT placeID FROM Region WHERE photoCount > 0 ORDER BY photographerCount DESC, name_sortkey, placeID LIMIT 50
            """).rows.map { $0[0] ?? "" }
        #expect(top == (try fixture.test.gallery.topRegions(limit: 50)).map(\.placeID))
        let (_, regionID) = try await fixture.test.topRegion()
        let photos = try connection.query("""
            SELECT flickrID FROM Photo WHERE region_id = $1 ORDER BY title_sortkey, flickrNumber
            """, [.integer(regionID)]).rows.map { $0[0] ?? "" }
        let expected = try fixture.test.gallery.photos(inRegion: regionID).map(\.flickrID)
        #expect(expected.count > 5)
        #expect(photos == expected)
    }

    @Test("check on PostgreSQL finds a wrong count and a sort key another order made")
    func checkFindsProblems() async throws {
        let fixture = try await CopyFixture.copied()
        let connection = try fixture.connect()
        defer { connection.close() }
        let region = try #require(try connection.query("SELECT placeID AS place FROM Region ORDER BY id LIMIT 1").text(0, "place"))
        try connection.query("UPDATE Region SET photoCount = photoCount + 7 WHERE placeID = $1", [.text(region)])
        try connection.query("UPDATE Photo SET title_sortkey = '\\x00'::bytea WHERE id = (SELECT min(id) FROM Photo)")
        let problems = try Gallery.checkPostgres(fixture.database)
        #expect(problems.contains { $0.hasPrefix("region \(region): photoCount is") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("1 sort key differs") }, "\(problems)")
    }

    @Test("A copy overwrites nothing: a database holding a gallery, a file that exists")
    func copyOverwritesNothing() async throws {
        let fixture = try await CopyFixture.copied()
        let before = try Gallery.postgresStatus(fixture.database)
        #expect(throws: GalleryError.self) { try Gallery.copyStore(from: fixture.path, to: fixture.database) }
        do { try Gallery.copyStore(from: fixture.path, to: fixture.database) } catch let error as GalleryError {
            #expect(error.message.contains("holds a gallery already"), "\(error.message)")
        }
        let after = try Gallery.postgresStatus(fixture.database)
        #expect(after.photos == before.photos && after.regions == before.regions)

        let companion = fixture.test.directory.appendingPathComponent("copy.sqlite-wal").path
        do { try Gallery.copyStore(from: fixture.database, to: companion); Issue.record("a copy was named like SQLite's journal") } catch let error as GalleryError {
            #expect(error.message.contains("SQLite's own file"), "\(error.message)")
        }
        #expect(!FileManager.default.fileExists(atPath: companion))

        let dangling = fixture.test.directory.appendingPathComponent("dangling.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: dangling + "-wal", withDestinationPath: "/nonexistent/wal")
        do { try Gallery.copyStore(from: fixture.database, to: dangling); Issue.record("a copy beside a dangling -wal link") } catch let error as GalleryError {
            #expect(error.message.contains("-wal is there already"), "\(error.message)")
        }
        #expect(!FileManager.default.fileExists(atPath: dangling))

        let existing = fixture.test.directory.appendingPathComponent("existing.sqlite").path
        try Data("not mine".utf8).write(to: URL(fileURLWithPath: existing))
        #expect(throws: GalleryError.self) { try Gallery.copyStore(from: fixture.database, to: existing) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: existing)) == Data("not mine".utf8))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixture.test.directory.path).filter { $0.hasPrefix(".topregions-copy") }
        #expect(leftovers.isEmpty)
    }

    @Test("A copy that fails part way leaves the database as it was: no tables, no rows")
    func failedCopyLeavesNothing() async throws {
        let fixture = try await CopyFixture()
        // Text PostgreSQL cannot hold, written behind the gallery's back.
        try await fixture.test.gallery.store.write { transaction in
            try transaction.execute("UPDATE Photo SET title = 'a' || char(0) || 'b' WHERE id = (SELECT max(id) FROM Photo)")
        }
        do {
            try Gallery.copyStore(from: fixture.path, to: fixture.database)
            Issue.record("a NUL in a title was copied")
        } catch let error as GalleryError {
            #expect(error.message.contains("title holds text with a NUL character"), "\(error.message)")
        }
        let store = try PostgresStore(location: fixture.database, schema: TopRegionsSchema.postgres)
        defer { store.close() }
        #expect(try store.state() == .empty)
    }

    @Test("migrate creates the tables once; a newer program's store, a foreign table, a LATIN1 database and a missing store are refused")
    func versions() throws {
        let server = try PostgresTestServer.shared()
        let database = try server.makeDatabase("migrate")
        #expect(try Gallery.migratePostgres(database) == .created)
        #expect(try Gallery.migratePostgres(database) == .current)
        // The local user is made with the store, as a SQLite store's first migration makes it.
        let created = try PostgresGallery(location: database)
        #expect(try created.users().map(\.name) == [GalleryUser.localName])
        created.close()
        #expect(try Gallery.checkPostgres(database) == [])

        let connection = try PostgresConnection(database)
        try connection.query("INSERT INTO store_migrations (name, applied_at) VALUES ('topregions.v99.future', 0)")
        connection.close()
        do { try Gallery.migratePostgres(database); Issue.record("a newer store was accepted") } catch let error as GalleryError {
            #expect(error.message.contains("newer version") && error.message.contains("topregions.v99.future"), "\(error.message)")
        }

        let foreign = try server.makeDatabase("foreign")
        let other = try PostgresConnection(foreign)
        try other.execute("CREATE TABLE Photo (id int)")
        other.close()
        do { try Gallery.migratePostgres(foreign); Issue.record("a foreign table was taken over") } catch let error as GalleryError {
            #expect(error.message.contains("did not make"), "\(error.message)")
        }

        let admin = try PostgresConnection(server.url())
        let latin = "latin_\(UInt32.random(in: 0...UInt32.max))"
        try admin.execute("CREATE DATABASE \(latin) ENCODING 'LATIN1' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'")
        admin.close()
        do { try Gallery.migratePostgres(server.url(database: latin)); Issue.record("a LATIN1 database was taken") } catch let error as GalleryError {
            #expect(error.message.contains("LATIN1") && error.message.contains("--encoding=UTF8"), "\(error.message)")
        }

        let empty = try server.makeDatabase("empty")
        do { _ = try Gallery.checkPostgres(empty); Issue.record("an empty database checked") } catch let error as GalleryError {
            #expect(error.kind == .noStore, "\(error)")
        }
    }

    @Test("A schema whose names differ only in case is refused before anything is created (PostgreSQL's names are lower case)")
    func namesDifferingInCase() throws {
        let database = try PostgresTestServer.shared().makeDatabase("case")
        let entity = Entity("Sample", attributes: [Attribute("title", .text), Attribute("Title", .text)])
        let store = try PostgresStore(location: database, schema: PostgresSchema(Schema([entity]), migrator: Migrator.creating([entity])))
        defer { store.close() }
        do {
            try store.migrate()
            Issue.record("names that differ only in case were taken")
        } catch let error as PostgresStoreError {
            #expect(error.message.contains("title and Title"), "\(error.message)")
        }
        #expect(try store.state() == .empty)
    }

    @Test("Tables changed behind the program's back are named by check and refused by migrate and copy")
    func schemaDrift() async throws {
        let fixture = try await CopyFixture.copied()
        let connection = try fixture.connect()
        defer { connection.close() }
        try connection.execute("DROP TABLE thumbnail")
        try connection.execute("ALTER TABLE photo ALTER COLUMN title TYPE bytea USING convert_to(title, 'UTF8')")
        try connection.execute("DROP INDEX photo_region_title")
        let problems = try Gallery.checkPostgres(fixture.database)
        #expect(problems.contains("table thumbnail is missing"), "\(problems)")
        #expect(problems.contains("column photo.title is bytea, not text"), "\(problems)")
        #expect(problems.contains("index photo_region_title is missing"), "\(problems)")
        for attempt in [{ _ = try Gallery.migratePostgres(fixture.database) },
                        { try Gallery.copyStore(from: fixture.database, to: fixture.test.directory.appendingPathComponent("out.sqlite").path) }] {
            do { try attempt(); Issue.record("a changed schema was taken") } catch let error as GalleryError {
                #expect(error.message.contains("not as this program made it") && error.message.contains("thumbnail"), "\(error.message)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.test.directory.appendingPathComponent("out.sqlite").path))

        // Constraints loosened or moved keep the tables' shape but not their meaning.
        let other = try PostgresTestServer.shared().makeDatabase("drift")
        try Gallery.migratePostgres(other)
        let loosen = try PostgresConnection(other)
        defer { loosen.close() }
        try loosen.execute("""
            ALTER TABLE photo DROP CONSTRAINT photo_flickrid_key;
            DROP INDEX favorite_user_photo; CREATE INDEX favorite_user_photo ON favorite (user_id, photo_id);
            ALTER TABLE photo ALTER COLUMN subtitle DROP NOT NULL;
            ALTER TABLE photo DROP CONSTRAINT photo_region_id_fkey;
            ALTER TABLE photo ADD CONSTRAINT photo_region_id_fkey FOREIGN KEY (region_id) REFERENCES photographer (id) DEFERRABLE INITIALLY DEFERRED;
            ALTER TABLE recent ALTER CONSTRAINT recent_photo_id_fkey NOT DEFERRABLE;
            """)
        let loosened = try Gallery.checkPostgres(other)
        for expected in ["column photo.flickrid is no longer unique", "index favorite_user_photo is not unique", "column photo.subtitle allows NULL",
                         "foreign key photo.region_id → region is missing", "foreign key recent.photo_id is not as made: checked before commit, not validated, or deleting or updating along"] {
            #expect(loosened.contains(expected), "\(expected): \(loosened)")
        }
    }

    @Test("A role that may only read the tables can check a store and copy it out")
    func readOnlyRole() async throws {
        let fixture = try await CopyFixture.copied()
        let admin = try PostgresConnection(fixture.database)
        let role = "reader_\(UInt32.random(in: 0...UInt32.max))"
        try admin.execute("CREATE ROLE \(role) LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)")
        admin.close()
        let reader = fixture.database.replacingOccurrences(of: "postgres@", with: "\(role)@")
        #expect(try Gallery.checkPostgres(reader) == [])
        let out = fixture.test.directory.appendingPathComponent("read.sqlite").path
        try Gallery.copyStore(from: reader, to: out)
        #expect(try Gallery.open(path: out, for: .read).status().photos == fixture.test.gallery.status().photos)
    }

    @Test("check names the photos whose region is not their place's, by Flickr id, as on SQLite")
    func photosAwayNamed() async throws {
        let fixture = try await CopyFixture.copied()
        let connection = try fixture.connect()
        defer { connection.close() }
        let moved = try connection.query("""
            UPDATE photo SET region_id = (SELECT max(id) FROM region) WHERE id = (SELECT min(id) FROM photo WHERE region_id <> (SELECT max(id) FROM region))
            RETURNING flickrid
            """)
        let flickrID = try #require(try moved.text(0, "flickrid"))
        let problems = try Gallery.checkPostgres(fixture.database)
        #expect(problems.contains { $0.hasPrefix("1 photo's region is not their place's region") && $0.contains(flickrID) }, "\(problems)")
    }

    @Test("A statement waits at most the busy timeout for another session's lock, then gives up as busy")
    func lockWaitIsBounded() async throws {
        let fixture = try await CopyFixture.copied()
        let holder = try PostgresConnection(fixture.database)
        defer { holder.close() }
        try holder.execute("BEGIN; LOCK TABLE photo IN ACCESS EXCLUSIVE MODE")
        let started = Date()
        do {
            _ = try Gallery.checkPostgres(fixture.database, busyTimeout: 0.5)
            Issue.record("check read a locked table")
        } catch let error as GalleryError {
            #expect(error.kind == .busy(pid: nil), "\(error)")
            #expect(error.message.contains("try again"), "\(error.message)")
        }
        #expect(Date().timeIntervalSince(started) < 10)
        try holder.execute("ROLLBACK")
        #expect(try Gallery.checkPostgres(fixture.database, busyTimeout: 0.5) == [])
    }

    @Test("What a killed copy left, beside its destination or in TMPDIR, is removed by the next copy; a running or new one's is not")
    func leftoversOfKilledCopiesGo() async throws {
        let fixture = try await CopyFixture.copied()
        let directory = fixture.test.directory.path
        let long = Date().addingTimeInterval(-60)
        func leftover(_ base: String, old: Bool = true) throws {
            for suffix in [".sqlite", ".sqlite-wal", ".lock"] { try Data("users and tokens".utf8).write(to: URL(fileURLWithPath: base + suffix)) }
            if old { try FileManager.default.setAttributes([.modificationDate: long], ofItemAtPath: base + ".lock") }
        }
        let gone = directory + "/.topregions-copy-gone", young = directory + "/.topregions-copy-young", running = directory + "/.topregions-copy-running"
        try leftover(gone)
        try leftover(young, old: false)
        try leftover(running)
        // A copy still running holds its lock (from another process, host or namespace alike).
        let held = open(running + ".lock", O_RDONLY)
        defer { close(held) }
        #expect(flock(held, LOCK_EX | LOCK_NB) == 0)
        let scratch = NSTemporaryDirectory() + "/topregions-copy-test\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: scratch + "/lock"))
        try FileManager.default.setAttributes([.modificationDate: long], ofItemAtPath: scratch + "/lock")

        try Gallery.copyStore(from: fixture.database, to: directory + "/next.sqlite")
        #expect(!FileManager.default.fileExists(atPath: gone + ".sqlite") && !FileManager.default.fileExists(atPath: gone + ".sqlite-wal")
                && !FileManager.default.fileExists(atPath: gone + ".lock"))
        #expect(FileManager.default.fileExists(atPath: young + ".sqlite") && FileManager.default.fileExists(atPath: running + ".sqlite"))
        #expect(!FileManager.default.fileExists(atPath: scratch), "an abandoned scratch directory in TMPDIR")

        // A file copy builds beside its destination too, and leaves nothing but the copy.
        try Gallery.copyStore(from: fixture.path, to: directory + "/plain.sqlite")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(".topregions-copy") }
        #expect(Set(names) == Set([".topregions-copy-young", ".topregions-copy-running"].flatMap { base in [".sqlite", ".sqlite-wal", ".lock"].map { base + $0 } }))
        #expect(try Gallery.open(path: directory + "/plain.sqlite", for: .read).check() == [])
    }
}
