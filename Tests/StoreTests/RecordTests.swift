import Foundation
import Store
import TestSupport
import Testing

@Suite("Typed records")
struct RecordTests {
    @Test("Insert assigns ids; fetch by id and by many ids (past the parameter limit) finds them")
    func insertAndFetch() throws {
        let store = try makeMemoryStore()
        let inserted = try store.write { transaction in
            try (0..<1200).map { try transaction.inserted(Region(name: "Region \($0)")) }
        }
        #expect(Set(inserted.compactMap(\.id)).count == 1200)
        let one = try store.read { try $0.fetchOne(Region.self, id: inserted[7].id ?? -1) }
        #expect(one == inserted[7])
        #expect(try store.read { try $0.fetchOne(Region.self, id: 999_999) } == nil)
        let wanted = inserted.enumerated().filter { $0.offset % 2 == 0 }.compactMap(\.element.id) + [999_999]
        let many = try store.read { try $0.fetch(Region.self, ids: wanted) }
        #expect(Set(many.compactMap(\.id)) == Set(wanted.dropLast()))
    }

    /// A record that keeps the row it was decoded from (the store reuses one row's storage
    /// while decoding a result).
    struct RegionKeepingRow: Record {
        static let entity = TestSchema.region
        var id: Int64?
        let row: Row
        init(row: Row) throws {
            id = try row.int64("id")
            self.row = row
        }
        func encode(to container: inout RecordContainer) {}
    }

    @Test("A record that keeps its row keeps that row's values, not the rows decoded after it")
    func recordsKeepTheirOwnRows() throws {
        let store = try makeMemoryStore()
        try store.write { transaction in
            for name in ["Aa", "Bb", "Cc"] { _ = try transaction.inserted(Region(name: name, country: "Land \(name)")) }
        }
        let records = try store.read { try $0.fetch(RegionKeepingRow.self, sortedBy: [SortKey("name")]) }
        #expect(records.map { $0.row["name"] } == [.text("Aa"), .text("Bb"), .text("Cc")])
        #expect(records.map { $0.row["country"] } == [.text("Land Aa"), .text("Land Bb"), .text("Land Cc")])
        #expect(records.map { try? $0.row.int64("id") } == records.map(\.id))
    }

    @Test("Update writes only the columns that changed and reports them")
    func updateChangedColumns() throws {
        let store = try makeMemoryStore()
        var photo = try store.write { try $0.inserted(Photo(flickrID: "1", title: "Dusk", subtitle: "Bay", views: 1)) }
        let log = EventLog()
        let observation = store.observe { log.append($0) }
        photo.title = "Dawn"
        photo.views = 1  // unchanged
        let keys = try store.write { try $0.update(photo) }
        #expect(keys == ["title"])
        #expect(log.committedEntries.last?.changes["Photo"].updated == [photo.id ?? -1: ["title"]])
        // Writing the same values again changes nothing and commits no history.
        let none = try store.write { try $0.update(photo) }
        #expect(none.isEmpty)
        #expect(log.committedEntries.count == 1)
        observation.cancel()
        var missing = photo
        missing.id = 424_242
        #expect { try store.write { try $0.update(missing) } } throws: { ($0 as? StoreError)?.kind == .recordNotFound }
    }

    @Test("Upsert inserts, updates or leaves alone, by a unique column")
    func upsert() throws {
        let store = try makeMemoryStore()
        var first = Photo(flickrID: "42", title: "One")
        #expect(try store.write { try $0.upsert(&first, matching: ["flickrID"]) } == .inserted)
        var again = Photo(flickrID: "42", title: "One")
        #expect(try store.write { try $0.upsert(&again, matching: ["flickrID"]) } == .unchanged)
        #expect(again.id == first.id)
        var renamed = Photo(flickrID: "42", title: "Two")
        #expect(try store.write { try $0.upsert(&renamed, matching: ["flickrID"]) } == .updated(["title"]))
        #expect(try store.read { try $0.count(FetchRequest(Photo.self)) } == 1)
    }

    @Test("Batch upsert finds existing rows with IN, handles repeats inside the batch")
    func batchUpsert() throws {
        let store = try makeMemoryStore()
        var initial = (0..<700).map { Photo(flickrID: "\($0)", title: "T\($0)") }
        let firstOutcomes = try store.write { try $0.upsert(&initial, matching: "flickrID") }
        #expect(firstOutcomes.allSatisfy { $0 == .inserted })
        var second = (600..<800).map { Photo(flickrID: "\($0)", title: $0 % 2 == 0 ? "T\($0)" : "changed") }
        second.append(Photo(flickrID: "799", title: "changed again"))
        let outcomes = try store.write { try $0.upsert(&second, matching: "flickrID") }
        let inserted = outcomes.filter { $0 == .inserted }.count
        let unchanged = outcomes.filter { $0 == .unchanged }.count
        let updated = outcomes.filter { if case .updated = $0 { return true } else { return false } }.count
        #expect(inserted == 100)
        #expect(unchanged == 50)
        #expect(updated == 51)
        #expect(try store.read { try $0.count(FetchRequest(Photo.self)) } == 800)
        let last = try store.read { try $0.fetch(Photo.self, where: Key("flickrID") == "799") }
        #expect(last.map(\.title) == ["changed again"])
        #expect(second.allSatisfy { $0.id != nil })
    }

    @Test("Deleting with nullify leaves related objects with no reference, and marks them updated")
    func deleteNullify() throws {
        let store = try makeMemoryStore()
        let (region, photo) = try store.write { transaction in
            let region = try transaction.inserted(Region(name: "California"))
            let photo = try transaction.inserted(Photo(flickrID: "1", title: "Bridge", regionID: region.id))
            return (region, photo)
        }
        let changes = try store.write { transaction in
            try transaction.delete(region)
            return transaction.changes
        }
        #expect(changes["Region"].deleted == [region.id ?? -1])
        #expect(changes["Photo"].updated[photo.id ?? -1] == ["region"])
        let after = try store.read { try $0.fetchOne(Photo.self, id: photo.id ?? -1) }
        #expect(after?.regionID == nil)
    }

    @Test("Deleting with cascade deletes related objects, recursively, and reports every one")
    func deleteCascade() throws {
        let store = try makeMemoryStore()
        let (jane, photos, recent, region) = try store.write { transaction in
            let region = try transaction.inserted(Region(name: "Quebec"))
            let jane = try transaction.inserted(Photographer(name: "Jane"))
            let photos = try (0..<3).map {
                try transaction.inserted(Photo(flickrID: "\($0)", title: "P\($0)", regionID: region.id, photographerID: jane.id))
            }
            let recent = try transaction.inserted(Recent(lastViewed: 5, photoID: photos[0].id))
            return (jane, photos, recent, region)
        }
        let changes = try store.write { transaction in
            try transaction.delete(jane)
            return transaction.changes
        }
        #expect(changes["Photographer"].deleted == [jane.id ?? -1])
        #expect(changes["Photo"].deleted == Set(photos.compactMap(\.id)))
        #expect(changes["Recent"].deleted == [recent.id ?? -1], "photo.recent cascades")
        #expect(changes["Region"].updated[region.id ?? -1] == ["photos"], "the region lost photos")
        #expect(try store.read { try $0.count(FetchRequest(Photo.self)) } == 0)
        #expect(try store.read { try $0.count(FetchRequest(Recent.self)) } == 0)
        #expect(try store.read { try $0.count(FetchRequest(Region.self)) } == 1)
    }

    @Test("A deny rule refuses the delete and the transaction leaves everything as it was")
    func deleteDeny() throws {
        let denyRegion = Entity("Region", attributes: [Attribute("name", .text)],
                                relationships: [.toMany("photos", "Photo", inverse: "region", deleteRule: .deny)])
        let photo = Entity("Photo", attributes: [Attribute("title", .text)],
                           relationships: [.toOne("region", "Region", inverse: "photos")])
        let store = try Store(inMemorySchema: Schema([denyRegion, photo]), migrator: .creating([denyRegion, photo]))
        try store.write { transaction in
            try transaction.execute("INSERT INTO Region (id, name) VALUES (1, 'Limburg')")
            try transaction.execute("INSERT INTO Photo (id, title, region_id) VALUES (1, 'x', 1)")
        }
        #expect {
            try store.write { try $0.delete("Region", ids: [1]) }
        } throws: { ($0 as? StoreError)?.kind == .deleteDenied }
        #expect(try store.read { try $0.scalar("SELECT count(*) FROM Region")?.int64 } == 1)
    }

    @Test("Changing a to-one relationship marks the object and both ends updated")
    func relationshipBothEnds() throws {
        let store = try makeMemoryStore()
        var (photo, california, nevada) = try store.write { transaction in
            let california = try transaction.inserted(Region(name: "California"))
            let nevada = try transaction.inserted(Region(name: "Nevada"))
            let photo = try transaction.inserted(Photo(flickrID: "1", title: "Desert", regionID: california.id))
            return (photo, california, nevada)
        }
        photo.regionID = nevada.id
        let changes = try store.write { transaction in
            try transaction.update(photo)
            return transaction.changes
        }
        #expect(changes["Photo"].updated[photo.id ?? -1] == ["region"])
        #expect(changes["Region"].updated[california.id ?? -1] == ["photos"])
        #expect(changes["Region"].updated[nevada.id ?? -1] == ["photos"])
        _ = california
    }

    @Test("Inserting with a reference marks the referenced object updated")
    func insertMarksDestination() throws {
        let store = try makeMemoryStore()
        let region = try store.write { try $0.inserted(Region(name: "Punjab")) }
        let changes = try store.write { transaction in
            try transaction.inserted(Photo(flickrID: "9", title: "Fields", regionID: region.id))
            return transaction.changes
        }
        #expect(changes["Region"].updated[region.id ?? -1] == ["photos"])
        #expect(changes["Photo"].inserted.count == 1)
    }

    @Test("A record that encodes an unknown column is refused")
    func unknownColumn() throws {
        struct Broken: Record {
            static let entity = TestSchema.region
            var id: Int64?
            init() {}
            init(row: Row) throws {}
            func encode(to container: inout RecordContainer) {
                container["name"] = "x"
                container["nmae"] = "typo"
            }
        }
        let store = try makeMemoryStore()
        #expect {
            try store.write { try $0.inserted(Broken()) }
        } throws: { "\($0)".contains("nmae") }
    }

    @Test("Decoding a row of the wrong type names the column")
    func decodingError() throws {
        let store = try makeMemoryStore()
        try store.write { try $0.execute("INSERT INTO Photo (id, flickrID, title, views) VALUES (1, '1', 't', 'many')") }
        #expect {
            try store.read { try $0.fetch(Photo.self) }
        } throws: { error in
            (error as? StoreError)?.kind == .decoding && "\(error)".contains("views")
        }
    }
}
