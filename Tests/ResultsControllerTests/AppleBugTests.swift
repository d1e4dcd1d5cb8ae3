import Foundation
import ResultsController
import Store
import TestSupport
import Testing

/// A controller with its delegate log, its table model kept in step with every batch, and
/// a check against a fresh fetch after each commit.
private final class Harness<R: Record> {
    let store: any ObservableStore
    let request: FetchRequest
    let sectionKeyPath: String?
    let controller: ResultsController<R>
    let log = DelegateLog()
    private(set) var table: TableModel

    init(store: any ObservableStore, request: FetchRequest, sectionKeyPath: String? = nil, undisplayedKeys: Set<String> = []) throws {
        self.store = store
        self.request = request
        self.sectionKeyPath = sectionKeyPath
        controller = try ResultsController<R>(store: store, request: request, sectionKeyPath: sectionKeyPath, undisplayedKeys: undisplayedKeys)
        controller.delegate = log
        try controller.performFetch()
        table = TableModel(controller.snapshot)
    }

    /// Commits `body`, applies the batch it produced to the table model (which checks
    /// UIKit's rules) and returns the batch.
    @discardableResult
    func commit(_ body: (Transaction) throws -> Void) throws -> ChangeBatch {
        log.reset()
        try store.write { try body($0) }
        return try take()
    }

    func take() throws -> ChangeBatch {
        let truth = try freshSnapshot(R.self, store: store, request: request, sectionKeyPath: sectionKeyPath)
        let batch = log.changes.last?.batch ?? ChangeBatch()
        #expect(log.changes.count <= 1)
        #expect(log.inAppleOrder)
        // The batch alone, applied to the table as it was, must give the fresh fetch.
        try table.apply(batch)
        #expect(table.snapshot == truth)
        #expect(table.snapshot.sections.map(\.ids) == truth.sections.map(\.ids))
        log.reset()
        return batch
    }
}

/// Each on both stores but the eighth (a schema of its own, written with raw SQL).
@Suite("Apple's known bugs, one test each")
struct AppleBugTests {
    private func photos(_ titles: [String], views: [Int64]? = nil, region: Int64? = nil, in store: any ObservableStore) throws -> [Photo] {
        try store.write { transaction in
            try titles.enumerated().map { index, title in
                try transaction.inserted(Photo(flickrID: UUID().uuidString, title: title, views: views?[index] ?? 0, regionID: region))
            }
        }
    }

    @Test("1. An update whose row does not move is an update, never a move onto the same index path", arguments: StoreKind.available)
    func updateIsNotMove(on kind: StoreKind) throws {
        let testStore = try TestStoreOfKind(kind)
        let store = testStore.store
        let created = try photos(["a", "b", "c"], in: store)
        let harness = try Harness<Photo>(store: store, request: FetchRequest(Photo.self, sortDescriptors: [SortKey("title")]))
        var middle = created[1]
        middle.subtitle = "new subtitle"
        let batch = try harness.commit { try $0.update(middle) }
        #expect(batch.moves.isEmpty)
        #expect(batch.updates.map(\.id) == [middle.id!])
        #expect(batch.updates.first?.old == IndexPath(row: 1, section: 0) && batch.updates.first?.new == IndexPath(row: 1, section: 0))
    }

    @Test("2. An object inserted and then updated in one commit is one insert; updated and moved is one move", arguments: StoreKind.available)
    func oneChangePerObject(on kind: StoreKind) throws {
        let testStore = try TestStoreOfKind(kind)
        let store = testStore.store
        let created = try photos(["a", "c", "e"], in: store)
        let harness = try Harness<Photo>(store: store, request: FetchRequest(Photo.self, sortDescriptors: [SortKey("title")]))
        var insertedID: Int64 = 0
        var batch = try harness.commit { transaction in
            var photo = try transaction.inserted(Photo(flickrID: "new", title: "b"))
            photo.subtitle = "changed right away"
            try transaction.update(photo)
            insertedID = photo.id!
        }
        #expect(batch.rowInserts.map(\.id) == [insertedID])
        #expect(batch.updates.isEmpty && batch.moves.isEmpty)
        var first = created[0]
        first.title = "z"
        batch = try harness.commit { try $0.update(first) }
        #expect(batch.moves.count == 1 && batch.moves[0].updated)
        #expect(batch.updates.isEmpty, "the moved object is not also reported as an update")
    }

    @Test("3. Two objects swapping sort values are two moves, not a move and an update", arguments: StoreKind.available)
    func swapIsTwoMoves(on kind: StoreKind) throws {
        let testStore = try TestStoreOfKind(kind)
        let store = testStore.store
        let created = try photos(["a", "b"], views: [1, 2], in: store)
        let harness = try Harness<Photo>(store: store, request: FetchRequest(Photo.self, sortDescriptors: [SortKey("views")]))
        var first = created[0], second = created[1]
        (first.views, second.views) = (2, 1)
        let batch = try harness.commit { transaction in
            try transaction.update(first)
            try transaction.update(second)
        }
        #expect(batch.updates.isEmpty)
        #expect(Set(batch.moves.map(\.id)) == [first.id!, second.id!])
        #expect(batch.moves.filter { !$0.updated }.isEmpty)
    }

    @Test("4. The last object leaving a section and the first entering a new one; section-key changes create and remove sections", arguments: StoreKind.available)
    func movesAcrossSections(on kind: StoreKind) throws {
        let testStore = try TestStoreOfKind(kind)
        let store = testStore.store
        let (limburg, punjab) = try store.write { (try $0.inserted(Region(name: "Limburg")), try $0.inserted(Region(name: "Punjab"))) }
        let alone = try photos(["only one"], region: limburg.id, in: store).first!
        _ = try photos(["x", "y"], region: punjab.id, in: store)
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("region.name"), SortKey("title")])
        let harness = try Harness<Photo>(store: store, request: request, sectionKeyPath: "region.name")
        #expect(harness.controller.sections.map(\.name) == ["Limburg", "Punjab"])
        // The only photo of Limburg moves to Punjab: Limburg's section goes.
        var moved = alone
        moved.regionID = punjab.id
        var batch = try harness.commit { try $0.update(moved) }
        #expect(batch.sectionDeletes == [0])
        #expect(batch.moves.isEmpty, "nothing moves out of a deleted section")
        // Canonical: the section delete covers the old row, so the photo is one insert.
        #expect(batch.rowDeletes.isEmpty && batch.rowInserts.map(\.id) == [alone.id!])
        // It moves again, to a region not shown yet: a section is inserted.
        let quebec = try store.write { try $0.inserted(Region(name: "Quebec")) }
        moved.regionID = quebec.id
        batch = try harness.commit { try $0.update(moved) }
        #expect(batch.insertedSectionIndexes == [1])
        #expect(batch.sectionInserts.first?.section.ids == [alone.id!], "the inserted section carries its row")
        #expect(batch.rowDeletes.map(\.id) == [alone.id!] && batch.rowInserts.isEmpty)
        #expect(harness.controller.sections.map(\.name) == ["Punjab", "Quebec"])
        // Renaming a region renames (deletes and inserts) its section and moves its photos.
        var renamed = punjab
        renamed.name = "Alberta"
        batch = try harness.commit { try $0.update(renamed) }
        #expect(harness.controller.sections.map(\.name) == ["Alberta", "Quebec"])
        #expect(batch.sectionDeletes == [0] && batch.insertedSectionIndexes == [0])
        #expect(batch.rowDeletes.isEmpty && batch.rowInserts.isEmpty && batch.moves.isEmpty)
    }

    @Test("5. The first section into an empty table; the last section out of it", arguments: StoreKind.available)
    func firstAndLastSection(on kind: StoreKind) throws {
        let testStore = try TestStoreOfKind(kind)
        let store = testStore.store
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title")])
        let harness = try Harness<Photo>(store: store, request: request, sectionKeyPath: "title")
        #expect(harness.controller.sections.isEmpty)
        var photo = Photo(flickrID: "1", title: "first")
        var batch = try harness.commit { photo = try $0.inserted(photo) }
        #expect(batch.insertedSectionIndexes == [0] && batch.sectionInserts[0].section.ids == [photo.id!] && batch.rowInserts.isEmpty)
        batch = try harness.commit { try $0.delete(photo) }
        #expect(batch.sectionDeletes == [0])
        #expect(harness.controller.sections.isEmpty)
        // Without sections there is always exactly one section, even when empty.
        let unsectioned = try ResultsController<Photo>(store: store, request: request)
        try unsectioned.performFetch()
        #expect(unsectioned.sections == [SectionInfo(value: .null, indexTitle: nil, numberOfObjects: 0)])
    }

    @Test("6. Changes behind a relationship key path are noticed (recent.lastViewed, region.name)", arguments: StoreKind.available)
    func relationshipKeyPaths(on kind: StoreKind) throws {
        let testStore = try TestStoreOfKind(kind)
        let store = testStore.store
        let created = try photos(["a", "b", "c"], in: store)
        let recents = try store.write { transaction in
            try created.enumerated().map { try transaction.inserted(Recent(lastViewed: Double($0.offset), photoID: $0.element.id)) }
        }
        let request = FetchRequest(Photo.self, predicate: Key("recent").isNotNull,
                                   sortDescriptors: [SortKey("recent.lastViewed", ascending: false)])
        let harness = try Harness<Photo>(store: store, request: request)
        #expect(harness.controller.fetchedIDs == created.reversed().map(\.id!))
        // Viewing "a" again moves it to the top, though no Photo row changed.
        var viewedAgain = recents[0]
        viewedAgain.lastViewed = 100
        let batch = try harness.commit { try $0.update(viewedAgain) }
        #expect(batch.moves.map(\.id) == [created[0].id!])
        #expect(harness.controller.fetchedIDs.first == created[0].id!)
        // Dropping a recent removes the photo from the list.
        let dropped = try harness.commit { try $0.delete(recents[1]) }
        #expect(dropped.rowDeletes.map(\.id) == [created[1].id!])
    }

    @Test("7. fetchLimit holds at all times: an object rising into the top pushes the last one out", arguments: StoreKind.available)
    func fetchLimitKept(on kind: StoreKind) throws {
        let testStore = try TestStoreOfKind(kind)
        let store = testStore.store
        _ = try photos(["a", "b", "c", "d", "e"], views: [5, 4, 3, 2, 1], in: store)
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("views", ascending: false)], fetchLimit: 3)
        let harness = try Harness<Photo>(store: store, request: request)
        #expect(harness.controller.numberOfObjects == 3)
        var rising = Photo(flickrID: "new", title: "rising", views: 10)
        var batch = try harness.commit { rising = try $0.inserted(rising) }
        #expect(batch.rowInserts.map(\.id) == [rising.id!])
        #expect(batch.rowDeletes.count == 1 && batch.rowDeletes[0].indexPath == IndexPath(row: 2, section: 0))
        #expect(harness.controller.numberOfObjects == 3)
        // A top object that leaves is replaced by the next one from the store.
        batch = try harness.commit { try $0.delete(rising) }
        #expect(batch.rowDeletes.map(\.id) == [rising.id!] && batch.rowInserts.count == 1)
        #expect(harness.controller.numberOfObjects == 3)
    }

    @Test("8. Renumbering a hand-ordered list is one move; a user-driven move is silent for its own view")
    func handOrderedList() throws {
        let item = Entity("Item", attributes: [Attribute("title", .text), Attribute("displayOrder", .integer)])
        let directory = try TemporaryDirectory("items")
        let store = try Store(path: directory.path("items.sqlite"), schema: Schema([item]),
                              migrator: .creating([item]))
        try store.write { transaction in
            for index in 0..<10 {
                try transaction.execute("INSERT INTO Item (id, title, displayOrder) VALUES (?, ?, ?)",
                                        [.integer(Int64(index + 1)), .text("item \(index)"), .integer(Int64(index))])
            }
        }
        let request = FetchRequest(entityName: "Item", sortDescriptors: [SortKey("displayOrder")])
        let mine = try Harness<ItemRecord>(store: store, request: request, undisplayedKeys: ["displayOrder"])
        let other = try Harness<ItemRecord>(store: store, request: request, undisplayedKeys: ["displayOrder"])
        // Move the item at position 2 to position 6: only rows 2...6 are renumbered.
        func move(_ transaction: Transaction, from: Int, to: Int) throws {
            var items = try transaction.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("displayOrder")]), as: ItemRecord.self)
            let moving = items.remove(at: from)
            items.insert(moving, at: to)
            for position in min(from, to)...max(from, to) {
                var renumbered = items[position]
                renumbered.displayOrder = Int64(position)
                try transaction.update(renumbered)
            }
        }
        let batch = try other.commit { try move($0, from: 2, to: 6) }
        #expect(batch.moves.count == 1 && batch.moves[0].from == IndexPath(row: 2, section: 0) && batch.moves[0].to == IndexPath(row: 6, section: 0))
        #expect(batch.updates.isEmpty && batch.rowInserts.isEmpty && batch.rowDeletes.isEmpty)
        #expect(try mine.take().moves.count == 1, "the other view's move is reported to this one")
        // Now this view moves a row itself: it is told nothing, the other view is told.
        mine.log.reset()
        other.log.reset()
        try mine.controller.performUserDrivenWrite { try move($0, from: 7, to: 1) }
        #expect(mine.log.calls.isEmpty)
        #expect(mine.controller.fetchedIDs == other.controller.fetchedIDs, "the silent controller still follows the change")
        #expect(try other.take().moves.count == 1)
    }

    @Test("9. A cascade delete of related objects gives a valid batch", arguments: StoreKind.available)
    func cascadeDelete(on kind: StoreKind) throws {
        let testStore = try TestStoreOfKind(kind)
        let store = testStore.store
        let (jane, limburg) = try store.write { (try $0.inserted(Photographer(name: "Jane")), try $0.inserted(Region(name: "Limburg"))) }
        try store.write { transaction in
            for index in 0..<6 {
                try transaction.inserted(Photo(flickrID: "\(index)", title: "p\(index)", regionID: limburg.id,
                                               photographerID: index % 2 == 0 ? jane.id : nil))
            }
        }
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("region.name"), SortKey("title")])
        let harness = try Harness<Photo>(store: store, request: request, sectionKeyPath: "region.name")
        let batch = try harness.commit { try $0.delete(jane) }
        #expect(batch.rowDeletes.count == 3)
        let regionGone = try harness.commit { try $0.delete(limburg) }
        // The photos left lose their region: their section is replaced by the "" section.
        #expect(regionGone.sectionDeletes == [0] && regionGone.insertedSectionIndexes == [0])
        #expect(harness.controller.sections.map(\.value) == [.null], "photos without a region are in the NULL section")
    }
}

struct ItemRecord: Record {
    static let entity = Entity("Item", attributes: [Attribute("title", .text), Attribute("displayOrder", .integer)])
    var id: Int64?
    var title: String
    var displayOrder: Int64

    init(row: Row) throws {
        id = try row.int64("id")
        title = try row.string("title")
        displayOrder = try row.int64("displayOrder")
    }

    func encode(to container: inout RecordContainer) {
        container["title"] = title
        container["displayOrder"] = displayOrder
    }
}
