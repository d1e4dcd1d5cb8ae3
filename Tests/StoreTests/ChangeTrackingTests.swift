import Foundation
import ResultsController
import Store
import TestSupport
import Testing

/// Every way of writing the store reaches the history and observers, without the writer
/// reporting anything: the store hears of each row from SQLite.
@Suite("The store sees every write", .serialized)
struct ChangeTrackingTests {
    let directory: TemporaryDirectory
    let store: Store
    let region: Region
    let other: Region
    let jane: Photographer

    init() throws {
        directory = try TemporaryDirectory()
        store = try TestSchema.openStore(at: directory.path("store.sqlite"))
        (region, other, jane) = try store.write { transaction in
            (try transaction.inserted(Region(name: "Limburg")), try transaction.inserted(Region(name: "Punjab")),
             try transaction.inserted(Photographer(name: "Jane")))
        }
    }

    /// Commits `body` on `store` and returns its history entry's changes (nil: nothing recorded).
    private static func changes(on store: any ObservableStore, _ body: (Transaction) throws -> Void) throws -> ChangeSet? {
        let token = try store.currentToken()
        try store.write(body)
        let entries = try store.history(since: token)
        #expect(entries.count <= 1)
        return entries.first?.changes
    }

    /// A store of `kind` holding this suite's regions and photographer.
    private static func seeded(_ kind: StoreKind) throws -> (TestStoreOfKind, region: Region, other: Region, jane: Photographer) {
        let under = try TestStoreOfKind(kind)
        let (region, other, jane) = try under.store.write { transaction in
            (try transaction.inserted(Region(name: "Limburg")), try transaction.inserted(Region(name: "Punjab")),
             try transaction.inserted(Photographer(name: "Jane")))
        }
        return (under, region, other, jane)
    }

    /// Commits `body` and returns its history entry's changes (nil: nothing recorded).
    private func changes(_ body: (Transaction) throws -> Void) throws -> ChangeSet? {
        try Self.changes(on: store, body)
    }

    private func photo(_ title: String, region: Region? = nil) throws -> Photo {
        try store.write { try $0.inserted(Photo(flickrID: UUID().uuidString, title: title, regionID: region?.id, photographerID: jane.id)) }
    }

    @Test("Records: insert, update, upsert one and many, delete; both ends of a relationship", arguments: StoreKind.available)
    func recordPaths(on kind: StoreKind) throws {
        let (under, region, other, _) = try Self.seeded(kind)
        let changes = { (body: (Transaction) throws -> Void) in try Self.changes(on: under.store, body) }
        var created = Photo(flickrID: "a", title: "first", regionID: region.id)
        let inserted = try #require(try changes { try $0.insert(&created) })
        #expect(inserted["Photo"].inserted == [created.id!])
        #expect(inserted["Region"].updated[region.id!] == ["photos"], "the other end of the new relationship")
        var moved = created
        moved.regionID = other.id
        moved.title = "moved"
        let updated = try #require(try changes { _ = try $0.update(moved) })
        #expect(updated["Photo"].updated[created.id!] == ["region", "title"])
        #expect(updated["Region"].updated.keys.sorted() == [region.id!, other.id!].sorted())
        var upserted = Photo(flickrID: "a", title: "upserted", regionID: other.id)
        let upsertOne = try #require(try changes { _ = try $0.upsert(&upserted, matching: ["flickrID"]) })
        #expect(upsertOne["Photo"].updated[created.id!] == ["title"])
        var many = [Photo(flickrID: "a", title: "again", regionID: other.id), Photo(flickrID: "b", title: "new")]
        let upsertMany = try #require(try changes { _ = try $0.upsert(&many, matching: "flickrID") })
        #expect(upsertMany["Photo"].updated[created.id!] == ["title"] && upsertMany["Photo"].inserted == [many[1].id!])
        #expect(try changes { _ = try $0.update(many[0]) } == nil, "an update that changes nothing records nothing")
        let deleted = try #require(try changes { try $0.delete(many[0]) })
        #expect(deleted["Photo"].deleted == [created.id!] && deleted["Region"].updated[other.id!] == ["photos"])
    }

    @Test("Delete rules: a cascade and a nullify are recorded row by row", arguments: StoreKind.available)
    func deleteRules(on kind: StoreKind) throws {
        let (under, region, _, jane) = try Self.seeded(kind)
        let store = under.store
        let changes = { (body: (Transaction) throws -> Void) in try Self.changes(on: store, body) }
        func photo(_ title: String, region: Region) throws -> Photo {
            try store.write { try $0.inserted(Photo(flickrID: UUID().uuidString, title: title, regionID: region.id, photographerID: jane.id)) }
        }
        let first = try photo("one", region: region), second = try photo("two", region: region)
        let viewed = try store.write { try $0.inserted(Recent(lastViewed: 1, photoID: first.id)) }
        // Region → photos is nullify: the photos lose their region.
        let nullified = try #require(try changes { _ = try $0.delete("Region", ids: [region.id!]) })
        #expect(nullified["Region"].deleted == [region.id!])
        #expect(nullified["Photo"].updated[first.id!] == ["region"] && nullified["Photo"].updated[second.id!] == ["region"])
        // Photographer → photos is cascade; Photo → recent is cascade.
        let cascaded = try #require(try changes { _ = try $0.delete("Photographer", ids: [jane.id!]) })
        #expect(cascaded["Photographer"].deleted == [jane.id!])
        #expect(cascaded["Photo"].deleted == [first.id!, second.id!])
        #expect(cascaded["Recent"].deleted == [viewed.id!])
    }

    @Test("Raw SQL, a trigger, INSERT OR REPLACE and a changed primary key are recorded like records")
    func rawWrites() throws {
        let target = try photo("raw")
        let rawUpdate = try #require(try changes { try $0.execute("UPDATE Photo SET title = ?, views = views WHERE id = ?", [.text("renamed"), .integer(target.id!)]) })
        #expect(rawUpdate["Photo"].updated[target.id!] == ["title"], "a column set to its own value is no change")
        let rawInsert = try #require(try changes {
            try $0.execute("INSERT INTO Photo (flickrID, title, region_id) VALUES ('r', 'raw insert', ?)", [.integer(other.id!)])
        })
        let rawID = try #require(rawInsert["Photo"].inserted.first)
        #expect(rawInsert["Region"].updated[other.id!] == ["photos"])
        let replaced = try #require(try changes {
            try $0.execute("INSERT OR REPLACE INTO Photo (id, flickrID, title) VALUES (?, 'r', 'replaced')", [.integer(rawID)])
        })
        #expect(replaced["Photo"].updated[rawID] == ["*"], "a row deleted and inserted again under its id has changed")
        let renumbered = try #require(try changes { try $0.execute("UPDATE Photo SET id = 9999 WHERE id = ?", [.integer(rawID)]) })
        #expect(renumbered["Photo"].deleted == [rawID] && renumbered["Photo"].inserted == [9999])
        let triggered = try #require(try changes { transaction in
            try transaction.execute("CREATE TEMP TRIGGER photo_views AFTER UPDATE OF title ON Photo BEGIN UPDATE Photo SET views = views + 1 WHERE id = NEW.id; END")
            try transaction.execute("UPDATE Photo SET title = 'by trigger' WHERE id = ?", [.integer(target.id!)])
            try transaction.execute("DROP TRIGGER photo_views")
        })
        #expect(triggered["Photo"].updated[target.id!] == ["title", "views"])
        let rawDelete = try #require(try changes { try $0.execute("DELETE FROM Photo WHERE id = 9999") })
        #expect(rawDelete["Photo"].deleted == [9999])
    }

    @Test("A results controller follows writes made with raw SQL")
    func controllerFollowsRawSQL() async throws {
        _ = try photo("b")
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title")])
        let controller = try ResultsController<Photo>(store: store, request: request)
        try controller.performFetch()
        var table = TableModel(controller.snapshot)
        var stream = controller.changes().makeAsyncIterator()
        try await store.write { try $0.execute("INSERT INTO Photo (flickrID, title) VALUES ('z', 'a first')") }
        let change = try #require(await stream.next())
        try table.apply(change.batch)
        #expect(table.snapshot == controller.snapshot && controller.numberOfObjects == 2)
    }
}
