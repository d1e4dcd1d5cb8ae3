import Foundation
import Store
import TestSupport
import Testing

@Suite("Indexes deferred for a bulk load")
struct DeferredIndexesTests {
    /// The file's index names and their SQL (nil for those SQLite makes for UNIQUE).
    static func indexes(_ store: Store, table: String = "Photo") throws -> [String: String?] {
        let rows = try store.read { try $0.rows("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?", [.text(table)]) }
        return Dictionary(uniqueKeysWithValues: rows.compactMap { row in row[0].string.map { ($0, row[1].string) } })
    }

    static func insertPhotos(_ count: Int, from start: Int = 0, into store: Store) throws {
        try store.write { transaction in
            for number in start..<(start + count) {
                var photo = Photo(flickrID: "\(number)", title: "Photo \(count - number)")
                try transaction.insert(&photo)
            }
        }
    }

    @Test("Dropped, the non-unique indexes are noted; built again, the file has the very same indexes and rows in order")
    func deferThenBuild() throws {
        let directory = try TemporaryDirectory()
        let store = try TestSchema.openStore(at: directory.path("store.sqlite"))
        defer { store.close() }
        let before = try Self.indexes(store)
        let dropped = try store.deferIndexes(of: TestSchema.photo)
        #expect(Set(dropped) == Set(before.filter { $0.value != nil }.keys))
        #expect(dropped.contains("photo_title") && !dropped.isEmpty)
        // Only the unique index is left, and the noted statements are the dropped ones.
        #expect(try Self.indexes(store).keys.allSatisfy { before[$0] == .some(nil) })
        #expect(Set(try store.deferredIndexStatements()) == Set(before.values.compactMap { $0 }))
        try Self.insertPhotos(500, into: store)
        #expect(try store.buildDeferredIndexes() == dropped.count)
        #expect(try Self.indexes(store) == before)
        #expect(try store.deferredIndexStatements().isEmpty)
        #expect(try store.buildDeferredIndexes() == 0)
        let titles = try store.read { try $0.rows("SELECT title FROM Photo ORDER BY title COLLATE localizedStandard").compactMap { $0[0].string } }
        #expect(titles.first == "Photo 1" && titles.last == "Photo 500" && titles.count == 500, "numbers in titles sort as numbers")
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test("While deferred, the unique index still holds: a duplicate Flickr id fails and rolls back")
    func uniqueKept() throws {
        let directory = try TemporaryDirectory()
        let store = try TestSchema.openStore(at: directory.path("store.sqlite"))
        defer { store.close() }
        try store.deferIndexes(of: TestSchema.photo)
        try Self.insertPhotos(10, into: store)
        #expect(throws: StoreError.self) { try Self.insertPhotos(2, from: 9, into: store) }
        #expect(try store.read { try $0.scalar("SELECT count(*) FROM Photo")?.int64 } == 10)
    }

    @Test("A process that ends before building leaves them noted in the file; a later one builds them, opening alone does not")
    func survivesTheProcess() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let first = try TestSchema.openStore(at: path)
        let before = try Self.indexes(first)
        let dropped = try first.deferIndexes(of: TestSchema.photo)
        try Self.insertPhotos(100, into: first)
        // What is on disk after the commit is what a kill would leave: the drop and the note
        // were one transaction.
        first.close()
        let second = try TestSchema.openStore(at: path)
        defer { second.close() }
        #expect(try Self.indexes(second).count == before.count - dropped.count, "opening must not build another process's deferred indexes")
        #expect(try second.deferredIndexStatements().count == dropped.count)
        #expect(try second.buildDeferredIndexes() == dropped.count)
        #expect(try Self.indexes(second) == before)
    }

    @Test("Deferring twice keeps the first notes; another table's indexes are not touched")
    func deferTwice() throws {
        let directory = try TemporaryDirectory()
        let store = try TestSchema.openStore(at: directory.path("store.sqlite"))
        defer { store.close() }
        let entries = try Self.indexes(store, table: "Entry")
        let dropped = try store.deferIndexes(of: TestSchema.photo)
        #expect(try store.deferIndexes(of: TestSchema.photo).isEmpty)
        #expect(try store.deferredIndexStatements().count == dropped.count)
        #expect(try Self.indexes(store, table: "Entry") == entries)
        #expect(try store.buildDeferredIndexes() == dropped.count)
    }

    @Test("A note that is not a list of CREATE INDEX statements is named as corrupt, and nothing of it runs",
          arguments: ["DROP TABLE Photo", #"["DROP TABLE Photo"]"#, #"["CREATE INDEX x ON Photo (title); DROP TABLE Photo"]"#])
    func corruptNote(note: String) throws {
        let directory = try TemporaryDirectory()
        let store = try TestSchema.openStore(at: directory.path("store.sqlite"))
        defer { store.close() }
        try store.write { try $0.execute("INSERT INTO store_metadata (key, value) VALUES ('deferred_indexes', ?)", [.text(note)]) }
        #expect { try store.buildDeferredIndexes() } throws: { error in
            (error as? StoreError)?.kind == .corrupt && "\(error)".contains("deferred_indexes")
        }
        #expect(try store.read { try $0.scalar("SELECT count(*) FROM sqlite_schema WHERE name IN ('Photo', 'x')")?.int64 } == 1)
    }
}
