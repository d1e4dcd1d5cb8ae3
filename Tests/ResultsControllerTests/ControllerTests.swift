import Foundation
import PostgresStore
import ResultsController
import Store
import TestSupport
import Testing

@Suite("The results controller", .serialized)
struct ControllerTests {
    let testStore: TestStore
    var store: Store { testStore.store }

    init() throws {
        testStore = try TestStore()
        try Self.seed(testStore.store)
    }

    /// Two regions and six photos, the same in every test.
    private static func seed(_ store: any ObservableStore) throws {
        try store.write { transaction in
            let limburg = try transaction.inserted(Region(name: "Limburg", country: "Belgium"))
            let punjab = try transaction.inserted(Region(name: "Punjab", country: "India"))
            for (index, title) in ["apple", "Banana", "IMG 10", "IMG 2", "cherry", "éclair"].enumerated() {
                try transaction.inserted(Photo(flickrID: "\(index)", title: title, views: Int64(index),
                                               regionID: index % 2 == 0 ? limburg.id : punjab.id))
            }
        }
    }

    /// A seeded store of `kind`, for the tests that run on both.
    private static func seeded(_ kind: StoreKind) throws -> TestStoreOfKind {
        let under = try TestStoreOfKind(kind)
        try seed(under.store)
        return under
    }

    @Test("Requests it cannot serve are refused with a clear message", arguments: StoreKind.available)
    func invalidRequests(on kind: StoreKind) throws {
        let under = try Self.seeded(kind)
        let store = under.store
        #expect { try ResultsController<Photo>(store: store, request: FetchRequest(Photo.self)) } throws: {
            "\($0)".contains("at least one sort key")
        }
        #expect {
            try ResultsController<Photo>(store: store, request: FetchRequest(Photo.self, sortDescriptors: [SortKey("title")]),
                                         sectionKeyPath: "region.name")
        } throws: { "\($0)".contains("must order by the section key \"region.name\"") }
        #expect { try ResultsController<Region>(store: store, request: FetchRequest(Photo.self, sortDescriptors: [SortKey("title")])) } throws: {
            "\($0)".contains("fetches Photo")
        }
        #expect { try ResultsController<Photo>(store: store, request: FetchRequest(Photo.self, sortDescriptors: [SortKey("colour")])) } throws: {
            "\($0)".contains("colour")
        }
    }

    @Test("Sections, index titles, index paths and objects, loaded on demand", arguments: StoreKind.available)
    func reading(on kind: StoreKind) throws {
        let under = try Self.seeded(kind)
        let store = under.store
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("region.name"), SortKey("title", collation: .localizedStandard)])
        let controller = try ResultsController<Photo>(store: store, request: request, sectionKeyPath: "region.name")
        try controller.performFetch()
        #expect(controller.sections.map(\.name) == ["Limburg", "Punjab"])
        #expect(controller.sections.map(\.numberOfObjects) == [3, 3])
        #expect(controller.sectionIndexTitles == ["L", "P"])
        let first = try controller.object(at: IndexPath(row: 0, section: 0))
        #expect(first.title == "apple")
        let secondSection = try (0..<3).map { try controller.object(at: IndexPath(row: $0, section: 1)).title }
        #expect(secondSection == ["Banana", "éclair", "IMG 2"])
        let firstSection = try (0..<3).map { try controller.object(at: IndexPath(row: $0, section: 0)).title }
        #expect(firstSection == ["apple", "cherry", "IMG 10"])
        #expect(controller.indexPath(for: first.id!) == IndexPath(row: 0, section: 0))
        #expect(controller.indexPath(for: 999_999) == nil)
        #expect(controller.id(at: IndexPath(row: 5, section: 0)) == nil)
        #expect { try controller.object(at: IndexPath(row: 0, section: 7)) } throws: { "\($0)".contains("no row") }
        controller.sectionIndexTitle = { name in String(name.prefix(2)) }
        #expect(controller.sectionIndexTitles == ["Li", "Pu"])
    }

    @Test("Changing the request reports the difference as a valid batch", arguments: StoreKind.available)
    func changingRequest(on kind: StoreKind) throws {
        let under = try Self.seeded(kind)
        let store = under.store
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title")])
        let controller = try ResultsController<Photo>(store: store, request: request)
        let log = DelegateLog()
        controller.delegate = log
        try controller.performFetch()
        var model = TableModel(controller.snapshot)
        var narrowed = request
        narrowed.predicate = Key("views") >= 2
        narrowed.sortDescriptors = [SortKey("views", ascending: false)]
        try controller.setRequest(narrowed)
        let batch = try #require(log.changes.last?.batch)
        #expect(batch.rowDeletes.count == 2)
        try model.apply(batch, after: try freshSnapshot(Photo.self, store: store, request: narrowed, sectionKeyPath: nil))
        #expect(controller.numberOfObjects == 4)
        #expect(log.inAppleOrder)
    }

    @Test("A row deleted and written again under its id in one transaction is an update of all it shows, to a controller that shows some keys and to one that shows them through a relationship", arguments: StoreKind.available)
    func reusedIDIsAnUpdate(on kind: StoreKind) throws {
        let under = try Self.seeded(kind)
        let store = under.store
        let byViews = FetchRequest(Photo.self, sortDescriptors: [SortKey("views")])
        let target = try #require(try store.read { try $0.fetch(byViews) as [Photo] }.dropFirst(2).first)
        let id = try #require(target.id)
        let recent = try store.write { try $0.inserted(Recent(lastViewed: 1, photoID: id)) }
        let titles = try ResultsController<Photo>(store: store, request: byViews, displayedKeys: ["title"])
        let recents = try ResultsController<Recent>(store: store, request: FetchRequest(Recent.self, sortDescriptors: [SortKey("lastViewed")]),
                                                    displayedKeys: ["photo.title"])
        let (titleLog, recentLog) = (DelegateLog(), DelegateLog())
        titles.delegate = titleLog
        recents.delegate = recentLog
        try titles.performFetch()
        try recents.performFetch()
        // Raw SQL: the store's delete rules would take the Recent along.
        try store.write { transaction in
            let dialect = transaction.dialect
            let photo = dialect.identifier("Photo"), columns = ["id", "flickrID", "title", "subtitle", "views"]
            try transaction.execute("DELETE FROM \(photo) WHERE \(dialect.identifier("id")) = \(dialect.parameter(1))", [.integer(id)])
            try transaction.execute("INSERT INTO \(photo) (\(columns.map(dialect.identifier).joined(separator: ", "))) "
                                    + "VALUES (\((1...columns.count).map(dialect.parameter).joined(separator: ", ")))",
                                    [.integer(id), .text("again"), .text("Written again"), .text(""), .integer(target.views)])
        }
        #expect(titleLog.changes.last?.batch.updates.map(\.id) == [id], "\(titleLog.calls)")
        #expect(recentLog.changes.last?.batch.updates.map(\.id) == [recent.id].compactMap { $0 }, "\(recentLog.calls)")
        #expect(try titles.object(at: IndexPath(row: 2, section: 0)).title == "Written again")
    }

    @Test("A change behind a relationship that the request reads but the rows do not show is no update; a shown one is", arguments: StoreKind.available)
    func relatedChangeNotShown(on kind: StoreKind) throws {
        let under = try Self.seeded(kind)
        let store = under.store
        let photos = try store.read { try $0.fetch(FetchRequest(Photo.self, sortDescriptors: [SortKey("views")])) as [Photo] }
        let recents = try store.write { transaction in
            try photos.prefix(3).enumerated().map { try transaction.inserted(Recent(lastViewed: Double($0.offset), photoID: $0.element.id)) }
        }
        let request = FetchRequest(Recent.self, predicate: Key("photo.views") >= 0, sortDescriptors: [SortKey("lastViewed")])
        let controller = try ResultsController<Recent>(store: store, request: request, displayedKeys: ["photo.title"])
        let log = DelegateLog()
        controller.delegate = log
        try controller.performFetch()
        var viewed = photos[1]
        viewed.views += 100
        try store.write { _ = try $0.update(viewed) }
        #expect(log.changes.isEmpty, "the rows show no photo's views: \(log.calls)")
        var renamed = photos[2]
        renamed.title = "Renamed"
        try store.write { _ = try $0.update(renamed) }
        #expect(log.changes.last?.batch.updates.map(\.id) == [recents[2].id].compactMap { $0 }, "\(log.calls)")
    }

    @Test("Batches arrive as an AsyncSequence too", arguments: StoreKind.available)
    func asyncSequence(on kind: StoreKind) async throws {
        let under = try Self.seeded(kind)
        let store = under.store
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title")])
        let controller = try ResultsController<Photo>(store: store, request: request)
        try controller.performFetch()
        let stream = controller.changes()
        let consumer = Task { () -> [ChangeBatch] in
            var batches: [ChangeBatch] = []
            for await change in stream {
                batches.append(change.batch)
                if batches.count == 2 { break }
            }
            return batches
        }
        try store.write { try $0.inserted(Photo(flickrID: "a1", title: "aardvark")) }
        try store.write { try $0.deleteAll(FetchRequest(Photo.self, predicate: Key("title") == "aardvark")) }
        let batches = await consumer.value
        #expect(batches.map(\.rowInserts.count) == [1, 0])
        #expect(batches.map(\.rowDeletes.count) == [0, 1])
    }

    @Test("A released controller stops observing: no callback after release, no growth over thousands", arguments: StoreKind.available)
    func releaseStopsObserving(on kind: StoreKind) throws {
        let under = try Self.seeded(kind)
        let store = under.store
        let observers = { (store as? Store)?.observerCount ?? (store as? PostgresRecordStore)?.observerCount ?? -1 }
        let baseline = observers()
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title")])
        let log = DelegateLog()
        for _ in 0..<2_000 {
            let controller = try ResultsController<Photo>(store: store, request: request)
            controller.delegate = log
            try controller.performFetch()
        }
        #expect(observers() == baseline && baseline >= 0)
        try store.write { try $0.inserted(Photo(flickrID: "late", title: "late")) }
        #expect(log.calls.isEmpty)
    }

    /// Commits `change` through this store and returns the first batch a controller on a
    /// second store object over the same file reports, checked against the table model.
    private func batchSeenByAnotherStore(pollingEvery interval: TimeInterval, _ change: () throws -> Void) throws -> ChangeBatch {
        var configuration = StoreConfiguration()
        configuration.observationInterval = interval
        configuration.observationMethod = .polling
        let watcherStore = try TestSchema.openStore(at: testStore.directory.appendingPathComponent("store.sqlite").path,
                                                    configuration: configuration)
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title")])
        let controller = try ResultsController<Photo>(store: watcherStore, request: request)
        let log = DelegateLog()
        controller.delegate = log
        try controller.performFetch()
        var model = TableModel(controller.snapshot)
        try change()
        let deadline = Date().addingTimeInterval(5)
        while log.changes.isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let batch = try #require(log.changes.first?.batch)
        try model.apply(batch, after: try freshSnapshot(Photo.self, store: store, request: request, sectionKeyPath: nil))
        return batch
    }

    @Test("Commits from another store object on the file are followed")
    func otherWriters() throws {
        let batch = try batchSeenByAnotherStore(pollingEvery: 0.02) {
            try store.write { try $0.inserted(Photo(flickrID: "remote", title: "remote")) }
        }
        #expect(batch.rowInserts.count == 1)
    }

    @Test("A limited list that refetches and sees a later commit too redraws that commit's rows as well, under its token")
    func limitedListSeesTwoCommitsAtOnce() throws {
        var configuration = StoreConfiguration()
        configuration.observationInterval = 1  // both commits land in one poll
        configuration.observationMethod = .polling
        let watcherStore = try TestSchema.openStore(at: testStore.directory.appendingPathComponent("store.sqlite").path,
                                                    configuration: configuration)
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title")], fetchLimit: 4)
        let controller = try ResultsController<Photo>(store: watcherStore, request: request)
        let log = DelegateLog()
        controller.delegate = log
        try controller.performFetch()
        var model = TableModel(controller.snapshot)
        // Banana first and apple fourth (byte order); each keeps its place when retitled.
        let retitled = try ["Banana": "Banana split", "apple": "apple pie"].map { old, new in
            try store.commit { transaction -> Int64? in
                guard var photo = try transaction.fetch(Photo.self, where: Key("title") == old).first else { return nil }
                photo.title = new
                try transaction.update(photo)
                return photo.id
            }
        }
        let ids = Set(retitled.compactMap(\.value))
        let last = try #require(retitled.compactMap(\.token).max())
        #expect(ids.count == 2 && controller.waitUntilProcessed(through: last, timeout: 5))
        var redrawn = Set<Int64>()
        for change in log.changes {
            try model.apply(change.batch, after: try freshSnapshot(Photo.self, store: store, request: request, sectionKeyPath: nil))
            redrawn.formUnion(change.batch.updates.map(\.id))
        }
        #expect(redrawn == ids, "both retitled rows are redrawn")
        #expect(log.changes.last?.token == last)
    }

    @Test("A history gap makes the controller refetch and report the difference")
    func historyGap() throws {
        let batch = try batchSeenByAnotherStore(pollingEvery: 0.5) {
            try store.write { try $0.deleteAll(FetchRequest(Photo.self, predicate: Key("title") == "apple")) }
            try store.trimHistory(before: Date().addingTimeInterval(1))
        }
        #expect(batch.rowDeletes.count == 1)
    }
}

@Suite("The table model")
struct TableModelTests {
    let before = Snapshot(sections: [Snapshot.Section(name: "A", ids: [1, 2, 3]), Snapshot.Section(name: "B", ids: [4])])

    private func rejects(_ batch: ChangeBatch, after: Snapshot, _ message: String) -> Bool {
        var model = TableModel(before)
        do {
            try model.apply(batch, after: after)
            return false
        } catch let error as TableModel.InvalidUpdate {
            return error.message.contains(message)
        } catch {
            return false
        }
    }

    @Test("It stops on each of UIKit's rules with UIKit's message")
    func uikitRules() {
        let path = { (row: Int, section: Int) in IndexPath(row: row, section: section) }
        var batch = ChangeBatch()
        batch.rowDeletes = [ChangeBatch.Row(id: 2, indexPath: path(1, 0))]
        #expect(rejects(batch, after: before, "Invalid update: invalid number of rows in section 0"))
        batch.updates = [ChangeBatch.Update(id: 2, old: path(1, 0), new: path(1, 0))]
        #expect(rejects(batch, after: before, "attempt to delete and reload the same index path"))
        batch = ChangeBatch()
        batch.rowDeletes = [ChangeBatch.Row(id: 2, indexPath: path(1, 0))]
        batch.moves = [ChangeBatch.Move(id: 2, from: path(1, 0), to: path(0, 1), updated: false)]
        #expect(rejects(batch, after: before, "attempt to perform a delete and a move from the same index path"))
        batch = ChangeBatch()
        batch.rowInserts = [ChangeBatch.Row(id: 9, indexPath: path(0, 1))]
        batch.moves = [ChangeBatch.Move(id: 1, from: path(0, 0), to: path(0, 1), updated: false)]
        #expect(rejects(batch, after: before, "attempt to perform an insert and a move to the same index path"))
        batch = ChangeBatch()
        batch.sectionDeletes = [1]
        batch.moves = [ChangeBatch.Move(id: 4, from: path(0, 1), to: path(3, 0), updated: false)]
        #expect(rejects(batch, after: Snapshot(sections: [Snapshot.Section(name: "A", ids: [1, 2, 3, 4])]), "cannot move a row from a deleted section"))
        batch = ChangeBatch()
        batch.rowInserts = [ChangeBatch.Row(id: 9, indexPath: path(7, 1))]
        #expect(rejects(batch, after: Snapshot(sections: [before.sections[0], Snapshot.Section(name: "B", ids: [4, 9])]),
                        "attempt to insert row 7 into section 1, but there are only 2 rows in section 1 after the update"))
        batch = ChangeBatch()
        batch.sectionInserts = [ChangeBatch.SectionInsert(index: 2, section: Snapshot.Section(name: "C", ids: []))]
        #expect(rejects(batch, after: before, "Invalid update: invalid number of sections"))
        batch = ChangeBatch()
        batch.moves = [ChangeBatch.Move(id: 1, from: path(0, 0), to: path(0, 0), updated: false)]
        #expect(rejects(batch, after: before, "which is an update"))
    }

    @Test("A valid batch gives the data source's rows, and edits give the same")
    func validBatch() throws {
        let path = { (row: Int, section: Int) in IndexPath(row: row, section: section) }
        var batch = ChangeBatch()
        batch.rowDeletes = [ChangeBatch.Row(id: 2, indexPath: path(1, 0))]
        batch.moves = [ChangeBatch.Move(id: 1, from: path(0, 0), to: path(1, 1), updated: true)]
        batch.rowInserts = [ChangeBatch.Row(id: 7, indexPath: path(0, 0))]
        batch.updates = [ChangeBatch.Update(id: 3, old: path(2, 0), new: path(1, 0))]
        let after = Snapshot(sections: [Snapshot.Section(name: "A", ids: [7, 3]), Snapshot.Section(name: "B", ids: [4, 1])])
        var model = TableModel(before)
        try model.apply(batch, after: after)
        #expect(model.snapshot == after)
        var edited = TableModel(before)
        try edited.apply([.removeRow(path(1, 0)), .removeRow(path(0, 0)), .insertRow(path(0, 0), id: 7), .insertRow(path(1, 1), id: 1)])
        #expect(edited.snapshot.sections.map(\.ids) == after.sections.map(\.ids))
    }
}

@Suite("The controller's cache")
struct CacheTests {
    @Test("A cached index is reused by a later fetch, in another store object too, until a relevant change")
    func cacheReuse() throws {
        let testStore = try TestStore()
        let store = testStore.store
        try store.write { transaction in
            for index in 0..<50 { try transaction.inserted(Photo(flickrID: "\(index)", title: "IMG \(index)")) }
        }
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title", collation: .localizedStandard)])
        let first = try ResultsController<Photo>(store: store, request: request, cacheName: "photos-by-title")
        try first.performFetch()
        #expect(!first.lastFetchUsedCache)
        let path = testStore.directory.appendingPathComponent("store.sqlite").path
        let otherStore = try TestSchema.openStore(at: path)
        let second = try ResultsController<Photo>(store: otherStore, request: request, cacheName: "photos-by-title")
        try second.performFetch()
        #expect(second.lastFetchUsedCache)
        #expect(second.snapshot == first.snapshot)
        // A change to another entity does not spoil it; a change to photos does.
        try store.write { try $0.inserted(Photographer(name: "Jane")) }
        let third = try ResultsController<Photo>(store: otherStore, request: request, cacheName: "photos-by-title")
        try third.performFetch()
        #expect(third.lastFetchUsedCache)
        try store.write { try $0.inserted(Photo(flickrID: "new", title: "IMG 5a")) }
        let fourth = try ResultsController<Photo>(store: otherStore, request: request, cacheName: "photos-by-title")
        try fourth.performFetch()
        #expect(!fourth.lastFetchUsedCache)
        #expect(fourth.numberOfObjects == 51)
        // A different request under the same name does not use it.
        let other = try ResultsController<Photo>(store: store, request: FetchRequest(Photo.self, sortDescriptors: [SortKey("flickrID")]),
                                                 cacheName: "photos-by-title")
        try other.performFetch()
        #expect(!other.lastFetchUsedCache)
        try ResultsController<Photo>.deleteCache(named: "photos-by-title", in: store)
        #expect(try store.cachedValue(named: "photos-by-title") == nil)
    }
}
