import CSQLite
import Foundation
import Store
import TestSupport
import Testing

@Suite("Opening a store")
struct StoreOpeningTests {
    @Test("A new store is a WAL file with mode 0600, synchronous=NORMAL and foreign keys on")
    func newStoreSettings() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("nested/store.sqlite")
        let store = try TestSchema.openStore(at: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let settings = try store.write { transaction in
            [try transaction.scalar("PRAGMA journal_mode"), try transaction.scalar("PRAGMA synchronous"),
             try transaction.scalar("PRAGMA foreign_keys")]
        }
        #expect(settings == [.text("wal"), .integer(1), .integer(1)])
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("Reopening keeps the data and applies no migration twice")
    func reopen() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        do {
            let store = try TestSchema.openStore(at: path)
            try store.write { try $0.inserted(Region(name: "Limburg", country: "Netherlands")) }
            store.close()
        }
        let store = try TestSchema.openStore(at: path)
        let regions = try store.read { try $0.fetch(Region.self) }
        #expect(regions.map(\.name) == ["Limburg"])
        let applied = try store.read { try $0.rows("SELECT name FROM store_migrations").compactMap { $0[0].string } }
        #expect(Set(applied) == ["testSchema.v1", "store.v1.localized-standard-icu-order"], "the program's migrations and the store's")
    }

    @Test("A store whose localizedStandard indexes were built in another order is re-indexed once, on opening")
    func reindexedForTheCollationOrder() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("older.sqlite")
        let titles = ["IMG 10", "img 2", "Zebra", "apple", "\u{E9}clair", "11", "\u{FF11}1", "1\u{FF12}"] + (0..<200).map { "Photo \($0)" }
        do {
            let store = try TestSchema.openStore(at: path)
            try store.write { transaction in
                for (index, title) in titles.enumerated() { try transaction.inserted(Photo(flickrID: "\(index)", title: title)) }
            }
            store.close()
        }
        // An index ordered by another `localizedStandard` (here bytes reversed), as a store
        // from before the collation's order changed has, and that store's migrations.
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK else { throw StoreError(.sqlite, "open failed") }
        sqlite3_create_collation_v2(handle, "localizedStandard", SQLITE_UTF8, nil, { _, leftCount, left, rightCount, right in
            let common = Int(min(leftCount, rightCount))
            guard common > 0, let left, let right else { return rightCount - leftCount }
            let order = memcmp(left, right, common)
            return order != 0 ? -order : rightCount - leftCount
        }, nil)
        #expect(sqlite3_exec(handle, "REINDEX localizedStandard; DELETE FROM store_migrations WHERE name LIKE 'store.%'", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        handle = nil
        guard sqlite3_open(path, &handle) == SQLITE_OK else { throw StoreError(.sqlite, "open failed") }
        Store.registerFunctions(on: handle!)
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, "PRAGMA integrity_check", -1, &statement, nil)
        var before: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { before.append(String(cString: sqlite3_column_text(statement, 0))) }
        sqlite3_finalize(statement)
        sqlite3_close(handle)
        #expect(before != ["ok"], "the index is out of this program's order before the migration")

        let store = try TestSchema.openStore(at: path)
        #expect(try store.read { try $0.rows("PRAGMA integrity_check").compactMap { $0[0].string } } == ["ok"])
        let ordered = try store.read { try $0.rows("SELECT title FROM Photo INDEXED BY photo_title ORDER BY title COLLATE localizedStandard").compactMap { $0[0].string } }
        #expect(ordered == titles.sorted { Collation.localizedStandard.compare($0, $1) == .orderedAscending })
        let applied = try store.read { try $0.rows("SELECT name FROM store_migrations ORDER BY rowid").compactMap { $0[0].string } }
        #expect(applied == ["testSchema.v1", "store.v1.localized-standard-icu-order"])
    }

    @Test("Another program's SQLite database is refused and left untouched, whether or not the store may be created")
    func foreignDatabaseRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.db")
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, "CREATE TABLE notes (x); INSERT INTO notes VALUES (1)", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for access in [StoreConfiguration.Access.readWriteCreate, .readWrite] {
            var configuration = StoreConfiguration()
            configuration.access = access
            let error = #expect(throws: StoreError.self) { _ = try TestSchema.openStore(at: path, configuration: configuration) }
            #expect(error?.kind == .notADatabase)
            #expect(error?.message.contains("another program") == true)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("An empty file is no store to open, but may become one when the store may be created")
    func emptyFileIsNoStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        var configuration = StoreConfiguration()
        configuration.access = .readWrite
        let error = #expect(throws: StoreError.self) { _ = try TestSchema.openStore(at: path, configuration: configuration) }
        #expect(error?.kind == .notFound)
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue == 0)
        let store = try TestSchema.openStore(at: path)
        #expect(try store.read { try $0.rows("SELECT name FROM store_migrations").count } == 2)
    }

    @Test("A file that is not a SQLite database is refused and left untouched")
    func notADatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.txt")
        let content = Data(String(repeating: "these are my notes, not a database\n", count: 40).utf8)
        try content.write(to: URL(fileURLWithPath: path))
        #expect {
            try TestSchema.openStore(at: path)
        } throws: { error in
            (error as? StoreError)?.kind == .notADatabase
                && "\(error)".contains("not a SQLite database")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == content)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("A short file that only starts like SQLite is refused too")
    func truncatedHeader() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("short.sqlite")
        let content = Data("SQLite format 3\0abc".utf8)
        try content.write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreError.self) { try TestSchema.openStore(at: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == content)
    }

    @Test("A database whose schema page is damaged is refused as corrupt and left untouched")
    func corruptSchema() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        try makeRollbackJournalDatabase(at: path)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // Page 1 holds the schema's b-tree after the 100-byte file header: damage its
        // page header (the cell count and content offset) so SQLite cannot parse it.
        for offset in 100..<112 { bytes[offset] = 0xff }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect {
            try TestSchema.openStore(at: path)
        } throws: { error in
            (error as? StoreError)?.kind == .corrupt
        }
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
    }

    @Test("Damage inside a table is reported as corrupt when it is read")
    func corruptTable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        try makeRollbackJournalDatabase(at: path, regions: 2000)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let pageSize = 4096
        let lastPage = bytes.count / pageSize - 1
        for offset in (lastPage * pageSize)..<(lastPage * pageSize + 16) { bytes[offset] = 0xee }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let store = try TestSchema.openStore(at: path)
        #expect {
            _ = try store.read { try $0.fetch(Region.self) }
            return try store.integrityCheck() != ["ok"]
        } throws: { error in
            (error as? StoreError)?.kind == .corrupt
        }
    }

    @Test("A store written by a newer version is refused and left untouched")
    func newerSchema() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        var newer = TestSchema.migrator
        newer.register("testSchema.v2") { try $0.execute("CREATE TABLE Album (id INTEGER PRIMARY KEY)") }
        do {
            let store = try Store(path: path, schema: TestSchema.schema, migrator: newer)
            store.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect {
            try TestSchema.openStore(at: path)
        } throws: { error in
            (error as? StoreError)?.kind == .newerSchema && "\(error)".contains("testSchema.v2")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("Migrations run in order, once each; a failing one leaves the store at the last good one")
    func migrations() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        var migrator = Migrator()
        migrator.register("one") { try $0.execute("CREATE TABLE A (id INTEGER PRIMARY KEY, x TEXT)") }
        migrator.register("two") { try $0.execute("ALTER TABLE A ADD COLUMN y TEXT") }
        migrator.register("three") { transaction in
            try transaction.execute("CREATE TABLE B (id INTEGER PRIMARY KEY)")
            try transaction.execute("INSERT INTO missing_table VALUES (1)")
        }
        #expect {
            try Store(path: path, schema: Schema([]), migrator: migrator)
        } throws: { error in
            (error as? StoreError)?.kind == .migrationFailed && "\(error)".contains("three")
        }
        var good = Migrator()
        good.register("one") { try $0.execute("CREATE TABLE A (id INTEGER PRIMARY KEY, x TEXT)") }
        good.register("two") { try $0.execute("ALTER TABLE A ADD COLUMN y TEXT") }
        let store = try Store(path: path, schema: Schema([]), migrator: good)
        let tables = try store.read { context in
            try context.rows("SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN ('A', 'B') ORDER BY name").compactMap { $0[0].string }
        }
        #expect(tables == ["A"], "table B of the failed migration must have been rolled back")
        let applied = try store.read { try $0.rows("SELECT name FROM store_migrations ORDER BY rowid").compactMap { $0[0].string } }
        #expect(applied == ["one", "two", "store.v1.localized-standard-icu-order"], "the store's own after the program's")
    }

    @Test("A foreign key gets its own index only when no declared index leads with it")
    func foreignKeyIndexes() throws {
        let owner = Entity("Owner", attributes: [Attribute("name", .text)],
                           relationships: [.toMany("covered", "Covered", inverse: "owner"), .toMany("collated", "Collated", inverse: "owner")])
        let covered = Entity("Covered", attributes: [Attribute("title", .text)], relationships: [.toOne("owner", "Owner", inverse: "covered")],
                             indexes: [TableIndex("covered_owner_title", columns: ["owner_id", "title"])])
        let collated = Entity("Collated", attributes: [Attribute("title", .text)], relationships: [.toOne("owner", "Owner", inverse: "collated")],
                              indexes: [TableIndex("collated_title_owner", columns: ["title", "owner_id"])])
        #expect(covered.coveredForeignKeyIndexNames == ["Covered_owner_id"])
        #expect(collated.coveredForeignKeyIndexNames.isEmpty)
        let store = try Store(inMemorySchema: Schema([owner, covered, collated]), migrator: Migrator.creating([owner, covered, collated]))
        let indexes = try store.read { context in
            try context.rows("SELECT name FROM sqlite_schema WHERE type = 'index' AND name NOT LIKE 'sqlite_%' AND tbl_name IN ('Covered', 'Collated') ORDER BY name")
                .compactMap { $0[0].string }
        }
        #expect(indexes == ["Collated_owner_id", "collated_title_owner", "covered_owner_title"])
        // The leading index serves the foreign key's lookups.
        let plan = try store.read { try $0.rows("EXPLAIN QUERY PLAN SELECT id FROM Covered WHERE owner_id = 1").compactMap { $0[3].string } }
        #expect(plan.contains { $0.contains("covered_owner_title") })
    }

    @Test("An in-memory store supports the same reads and writes")
    func inMemory() throws {
        let store = try makeMemoryStore()
        #expect(store.path == nil)
        let region = try store.write { try $0.inserted(Region(name: "Punjab", country: "India")) }
        let fetched = try store.read { try $0.fetchOne(Region.self, id: region.id ?? -1) }
        #expect(fetched == region)
    }

    @Test("A closed store refuses further work")
    func closed() throws {
        let directory = try TemporaryDirectory()
        let store = try TestSchema.openStore(at: directory.path("store.sqlite"))
        store.close()
        #expect { try store.read { _ in 1 } } throws: { ($0 as? StoreError)?.kind == .closed }
    }

    /// A plain SQLite file in rollback-journal mode (so it is all in the main file) holding
    /// the test schema, written with the C API directly.
    private func makeRollbackJournalDatabase(at path: String, regions: Int = 3) throws {
        do {
            let store = try TestSchema.openStore(at: path)
            try store.write { transaction in
                for index in 0..<regions {
                    try transaction.inserted(Region(name: "Region \(index) " + String(repeating: "r", count: 100), country: "C"))
                }
            }
            store.close()
        }
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK else { throw StoreError(.sqlite, "open failed") }
        sqlite3_exec(handle, "PRAGMA journal_mode = DELETE", nil, nil, nil)
        sqlite3_close(handle)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }
}
