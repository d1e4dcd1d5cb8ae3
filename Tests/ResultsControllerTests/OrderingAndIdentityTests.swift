import Foundation
import ResultsController
import Store
import TestSupport
import Synchronization
import Testing

/// The controller's promises under messy conditions: commits from elsewhere interleaved
/// with local ones, section values that are canonically equal but not the same bytes,
/// requests that reverse the order of sections.
@Suite("Commit order, section identity and section order", .serialized)
struct OrderingAndIdentityTests {
    let testStore: TestStore
    var store: Store { testStore.store }

    init() throws {
        testStore = try TestStore()
    }

    /// A second store object over the same file: to the first it is another process (its
    /// own origin, its own writer connection), so its commits are only found by polling.
    private func otherWriter(pollingEvery interval: TimeInterval = 1) throws -> Store {
        var configuration = StoreConfiguration()
        configuration.observationInterval = interval
        configuration.observationMethod = .polling
        return try TestSchema.openStore(at: testStore.directory.appendingPathComponent("store.sqlite").path, configuration: configuration)
    }

    @Test("A commit from elsewhere is delivered even when a local commit lands before it is noticed")
    func remoteCommitBeforeLocalCommit() throws {
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title", collation: .localizedStandard)])
        // Poll rarely, so that the local commit surely comes first.
        var configuration = StoreConfiguration()
        configuration.observationInterval = 5
        configuration.observationMethod = .polling
        let watched = try TestSchema.openStore(at: testStore.directory.appendingPathComponent("store.sqlite").path,
                                               configuration: configuration)
        let controller = try ResultsController<Photo>(store: watched, request: request)
        let log = DelegateLog()
        controller.delegate = log
        try controller.performFetch()
        var table = TableModel(controller.snapshot)
        let elsewhere = try otherWriter()
        let remote = try elsewhere.commit { try $0.inserted(Photo(flickrID: "remote", title: "from elsewhere")) }
        let local = try watched.commit { try $0.inserted(Region(name: "Unrelated")) }
        let localToken = try #require(local.token)
        #expect(localToken == (remote.token ?? 0) + 1)
        #expect(controller.waitUntilProcessed(through: localToken, timeout: 2), "the local commit is processed at once")
        #expect(controller.fetchedIDs == [remote.value.id!], "the remote photo is shown")
        for change in log.changes { try table.apply(change.batch) }
        #expect(table.snapshot == (try freshSnapshot(Photo.self, store: watched, request: request, sectionKeyPath: nil)))
        #expect(log.changes.compactMap(\.token) == [remote.token!], "one batch, for the remote commit")
        elsewhere.close()
        watched.close()
    }

    @Test("Every commit reaches an observer once, in token order, from this store and another alike", arguments: StoreKind.available)
    func observersSeeEveryTokenOnceInOrder(on kind: StoreKind) throws {
        let under = try TestStoreOfKind(kind)
        let store = under.store
        let other = try under.another()
        let elsewhere = other.store
        let seen = Mutex<[Int64]>([])
        let observation = store.observe { event in
            if case .committed(let entry, _) = event { seen.withLock { $0.append(entry.token) } }
        }
        let first = try store.currentToken()
        for round in 0..<40 {
            let writer = round % 3 == 0 ? store : elsewhere
            try writer.write { try $0.inserted(Region(name: "R\(round)")) }
            if round % 5 == 0 { Thread.sleep(forTimeInterval: 0.02) }
        }
        let last = try store.currentToken()
        #expect(eventually { seen.withLock { $0.last } == last })
        #expect(seen.withLock { $0 } == Array((first + 1)...last))
        observation.cancel()
    }

    @Test("Region names equal in Unicode but not in bytes are two sections, on a fresh fetch and incrementally alike", arguments: StoreKind.available)
    func canonicallyEqualSectionNames(on kind: StoreKind) throws {
        let under = try TestStoreOfKind(kind)
        let store = under.store
        let composed = "Li\u{E8}ge", decomposed = "Lie\u{300}ge"
        #expect(composed == decomposed, "Swift calls them equal; the controller must not")
        let (nfcRegion, nfdRegion) = try store.write { (try $0.inserted(Region(name: composed)), try $0.inserted(Region(name: decomposed))) }
        let toDelete = try store.write { transaction -> Photo in
            for title in ["a", "b", "c", "d"] { try transaction.inserted(Photo(flickrID: "nfc-\(title)", title: title, regionID: nfcRegion.id)) }
            try transaction.inserted(Photo(flickrID: "nfd-a", title: "a", regionID: nfdRegion.id))
            try transaction.inserted(Photo(flickrID: "nfd-b", title: "b", regionID: nfdRegion.id))
            return try transaction.inserted(Photo(flickrID: "nfc-e", title: "e", regionID: nfcRegion.id))
        }
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("region.name", collation: .localizedStandard),
                                                                 SortKey("title", collation: .localizedStandard)])
        let controller = try ResultsController<Photo>(store: store, request: request, sectionKeyPath: "region.name")
        let log = DelegateLog()
        controller.delegate = log
        try controller.performFetch()
        #expect(controller.sections.map(\.numberOfObjects).sorted() == [2, 5])
        #expect(Set(controller.sections.map(\.value)).count == 2)
        var table = TableModel(controller.snapshot)
        try store.write { try $0.delete(toDelete) }
        let batch = try #require(log.changes.last?.batch)
        try table.apply(batch)
        let fresh = try freshSnapshot(Photo.self, store: store, request: request, sectionKeyPath: "region.name")
        #expect(table.snapshot == fresh)
        #expect(controller.snapshot == fresh)
        #expect(fresh.sections.map(\.ids.count).sorted() == [2, 4])
    }

    @Test("Reversing the order of sections gives a batch the table before it turns into the table after", arguments: StoreKind.available)
    func reversedSections(on kind: StoreKind) throws {
        let under = try TestStoreOfKind(kind)
        let store = under.store
        let (valparaiso, last) = try store.write { (try $0.inserted(Region(name: "Valparaíso")), try $0.inserted(Region(name: "Zzzz last"))) }
        try store.write { transaction in
            try transaction.inserted(Photo(flickrID: "159", title: "Harbour", regionID: valparaiso.id))
            try transaction.inserted(Photo(flickrID: "142", title: "One", regionID: last.id))
            try transaction.inserted(Photo(flickrID: "144", title: "Two", regionID: last.id))
        }
        let ascending = FetchRequest(Photo.self, sortDescriptors: [SortKey("region.name"), SortKey("title")])
        let controller = try ResultsController<Photo>(store: store, request: ascending, sectionKeyPath: "region.name")
        let log = DelegateLog()
        controller.delegate = log
        try controller.performFetch()
        var table = TableModel(controller.snapshot)
        var descending = ascending
        descending.sortDescriptors = [SortKey("region.name", ascending: false), SortKey("title")]
        try controller.setRequest(descending)
        let batch = try #require(log.changes.last?.batch)
        #expect(!batch.sectionDeletes.isEmpty && !batch.sectionInserts.isEmpty, "a reorder of sections is a section operation")
        try table.apply(batch)
        #expect(table.snapshot == (try freshSnapshot(Photo.self, store: store, request: descending, sectionKeyPath: "region.name")))
        #expect(table.sections.map(\.name) == ["Zzzz last", "Valparaíso"])
        // And back, with a predicate change on the way.
        var filtered = ascending
        filtered.predicate = Key("title") != "Two"
        log.reset()
        try controller.setRequest(filtered)
        try table.apply(try #require(log.changes.last?.batch))
        #expect(table.snapshot == (try freshSnapshot(Photo.self, store: store, request: filtered, sectionKeyPath: "region.name")))
    }

    @Test("NULL and the empty string are two sections, each with its own identity", arguments: StoreKind.available)
    func nullAndEmptySections(on kind: StoreKind) throws {
        let under = try TestStoreOfKind(kind)
        let store = under.store
        let (empty, named) = try store.write { (try $0.inserted(Region(name: "")), try $0.inserted(Region(name: "Named"))) }
        try store.write { transaction in
            try transaction.inserted(Photo(flickrID: "no region", title: "a"))
            try transaction.inserted(Photo(flickrID: "empty region", title: "b", regionID: empty.id))
            try transaction.inserted(Photo(flickrID: "named region", title: "c", regionID: named.id))
        }
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("region.name"), SortKey("title")])
        let controller = try ResultsController<Photo>(store: store, request: request, sectionKeyPath: "region.name")
        try controller.performFetch()
        #expect(controller.sections.map(\.value) == [.null, SectionValue(.text("")), SectionValue(.text("Named"))])
        #expect(controller.sections.map(\.name) == ["", "", "Named"])
        #expect(controller.sections[0].value.isNull && !controller.sections[1].value.isNull)
    }

    @Test("Batches are delivered on the queue the caller chose, with the controller's state in step", arguments: StoreKind.available)
    func deliveryQueue(on kind: StoreKind) throws {
        let under = try TestStoreOfKind(kind)
        let store = under.store
        let queue = DispatchQueue(label: "test.delivery")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title")])
        let controller = try ResultsController<Photo>(store: store, request: request, deliveryQueue: queue)
        let onQueue = Mutex<[Bool]>([])
        let counts = Mutex<[Int]>([])
        final class Recorder: ResultsControllerDelegate, @unchecked Sendable {
            let record: (ResultsChange) -> Void
            init(_ record: @escaping (ResultsChange) -> Void) { self.record = record }
            func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) { record(change) }
        }
        let recorder = Recorder { change in
            onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) == true) }
            counts.withLock { $0.append(change.snapshot.ids.count) }
        }
        controller.delegate = recorder
        try controller.performFetch()
        let commit = try store.commit { try $0.inserted(Photo(flickrID: "q", title: "queued")) }
        #expect(controller.waitUntilProcessed(through: try #require(commit.token), timeout: 5))
        queue.sync {}
        #expect(onQueue.withLock { $0 } == [true])
        #expect(counts.withLock { $0 } == [1])
        withExtendedLifetime(recorder) {}
    }
}

@Suite("Controllers and writers on several threads")
struct ConcurrencyTests {
    @Test("performFetch with a cache name while another thread commits does not deadlock")
    func cachedFetchesDuringCommits() async throws {
        let testStore = try TestStore()
        let store = testStore.store
        let request = FetchRequest(Photo.self, sortDescriptors: [SortKey("title")])
        let observer = try ResultsController<Photo>(store: store, request: request)
        try observer.performFetch()
        let writer = Task.detached {
            for index in 0..<200 { try store.write { try $0.inserted(Photo(flickrID: "w\(index)", title: "t\(index)")) } }
        }
        let fetcher = Task.detached {
            for _ in 0..<200 {
                let controller = try ResultsController<Photo>(store: store, request: request, cacheName: "concurrent")
                try controller.performFetch()
            }
        }
        // Both finish: with the cache written under the controller's lock, they waited for
        // each other for ever (the cache's write delivering to a controller whose lock the
        // fetch held).
        try await writer.value
        try await fetcher.value
        #expect(observer.waitUntilProcessed(through: try store.currentToken(), timeout: 10))
        #expect(observer.numberOfObjects == 200)
    }

    @Test("A write inside a write of the same store is refused, not a deadlock")
    func reentrantWrite() throws {
        let testStore = try TestStore()
        #expect {
            try testStore.store.write { _ in try testStore.store.write { try $0.inserted(Region(name: "inner")) } }
        } throws: { ($0 as? StoreError)?.kind == .reentrantWrite }
        #expect(try testStore.store.read { try $0.count(FetchRequest(Region.self)) } == 0, "the outer write rolled back")
    }
}
