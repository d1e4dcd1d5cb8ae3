import Flickr
import TestSupport
import Foundation
import ResultsController
import Store
import Testing
@testable import TopRegionsKit

/// Records batches from a controller.
final class BatchLog: ResultsControllerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [ChangeBatch] = []
    var batches: [ChangeBatch] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
    func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) {
        lock.lock()
        storage.append(change.batch)
        lock.unlock()
    }
}

@Suite("Recents, Favorites, thumbnails, images, pruning and the counts check", .serialized)
struct UserListsTests {
    let test: TestGallery

    init() async throws {
        test = try TestGallery()
        _ = try await test.syncSample(SyncOptions(pages: 2, perPage: 100))
    }

    private var local: GalleryUser { get throws { try test.gallery.user(named: GalleryUser.localName) } }

    /// The photo ids of a Recents or Favorites controller's rows, in order.
    private func photoIDs<R: TableRecord>(of controller: ResultsController<R>, _ photoID: (R) -> Int64?) throws -> [Int64] {
        try (0..<controller.numberOfObjects).compactMap { try photoID(controller.object(at: IndexPath(row: $0, section: 0))) }
    }

    /// The first photos a user can see (those whose region is known), by row id.
    private func photoIDs(_ count: Int) async throws -> [Int64] {
        try await test.gallery.store.read {
            try $0.fetchIDs(FetchRequest(PhotoRecord.self, predicate: Key("region").isNotNull, sortDescriptors: [SortKey("id")], fetchLimit: count))
        }
    }

    @Test("Recents: at most 20, newest first, each photo once; viewing again moves it to the top", arguments: StoreKind.available)
    func recents(on kind: StoreKind) async throws {
        let ids = try await photoIDs(25)
        let store = try GalleryOnStore(test, on: kind)
        let gallery = store.gallery
        let local = try gallery.user(named: GalleryUser.localName)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for (offset, id) in ids.prefix(21).enumerated() {
            try gallery.recordView(photoID: id, at: start.addingTimeInterval(Double(offset)), for: local)
        }
        var recents = try gallery.recents(for: local)
        #expect(recents.count == 20)
        #expect(recents.map { $0.photo.id } == ids[1..<21].reversed().map { Optional($0) }, "the oldest was pushed out")
        try gallery.recordView(photoID: ids[5], at: start.addingTimeInterval(100), for: local)
        recents = try gallery.recents(for: local)
        #expect(recents.count == 20)
        #expect(recents.first?.photo.id == ids[5])
        #expect(Set(recents.compactMap(\.photo.id)).count == 20)
        #expect { try gallery.recordView(photoID: 999_999, for: local) } throws: { "\($0)".contains("no photo") }
    }

    @Test("The recents controller moves a photo to the top when it is viewed again", arguments: StoreKind.available)
    func recentsController(on kind: StoreKind) async throws {
        let ids = try await photoIDs(3)
        let store = try GalleryOnStore(test, on: kind)
        let gallery = store.gallery
        let local = try gallery.user(named: GalleryUser.localName)
        for (offset, id) in ids.enumerated() { try gallery.recordView(photoID: id, at: Date(timeIntervalSince1970: Double(offset)), for: local) }
        let controller = try gallery.recentsController(for: local)
        let log = BatchLog()
        controller.delegate = log
        try controller.performFetch()
        #expect(try photoIDs(of: controller, \.photoID) == ids.reversed())
        let first = try #require(controller.fetchedIDs.last)
        try gallery.recordView(photoID: ids[0], at: Date(timeIntervalSince1970: 10), for: local)
        #expect(log.batches.last?.moves.map(\.id) == [first])
        #expect(try photoIDs(of: controller, \.photoID).first == ids[0])
    }

    @Test("A photo's new title is an update of its Recents and Favorites rows; a change they do not show is not",
          arguments: StoreKind.available)
    func relatedTitleChanges(on kind: StoreKind) async throws {
        let ids = try await photoIDs(3)
        let store = try GalleryOnStore(test, on: kind)
        let gallery = store.gallery
        let local = try gallery.user(named: GalleryUser.localName)
        for (offset, id) in ids.enumerated() { try gallery.recordView(photoID: id, at: Date(timeIntervalSince1970: Double(offset)), for: local) }
        for id in ids.prefix(2) { try gallery.addFavorite(photoID: id, for: local) }
        let recents = try gallery.recentsController(for: local), favorites = try gallery.favoritesController(for: local)
        let recentsLog = BatchLog(), favoritesLog = BatchLog()
        recents.delegate = recentsLog
        favorites.delegate = favoritesLog
        try recents.performFetch()
        try favorites.performFetch()
        func retitle(_ id: Int64, _ change: @escaping @Sendable (inout PhotoRecord) -> Void) throws {
            try gallery.writableStore.write { transaction in
                guard var photo = try transaction.fetchOne(PhotoRecord.self, id: id) else { return }
                change(&photo)
                try transaction.update(photo)
            }
        }
        try retitle(ids[1]) { $0.title = "Renamed by a sync" }
        let row = try #require(try photoIDs(of: recents, \.photoID).firstIndex(of: ids[1]))
        let recentRow = try #require(try recents.object(at: IndexPath(row: row, section: 0)).id)
        #expect(recentsLog.batches.last?.updates.map(\.id) == [recentRow], "Recents hears of the new title")
        #expect(favoritesLog.batches.last?.updates.count == 1, "Favorites hears of it too")
        let batchesBefore = (recentsLog.batches.count, favoritesLog.batches.count)
        try retitle(ids[1]) { $0.latitude = 12.5 }
        #expect(recentsLog.batches.count == batchesBefore.0 && favoritesLog.batches.count == batchesBefore.1,
                "a change the rows do not show is no update")
    }

    @Test("Favorites: add, remove, move renumbering only the rows between; one move reported; user-driven moves are silent",
          arguments: StoreKind.available)
    func favorites(on kind: StoreKind) async throws {
        let ids = try await photoIDs(6)
        let store = try GalleryOnStore(test, on: kind)
        let gallery = store.gallery
        let local = try gallery.user(named: GalleryUser.localName)
        for id in ids { try gallery.addFavorite(photoID: id, for: local) }
        try gallery.addFavorite(photoID: ids[0], for: local)  // already there: no change
        #expect(try gallery.favorites(for: local).compactMap(\.id) == ids)
        let watching = try gallery.favoritesController(for: local)
        let mine = try gallery.favoritesController(for: local)
        let watchLog = BatchLog(), myLog = BatchLog()
        watching.delegate = watchLog
        mine.delegate = myLog
        try watching.performFetch()
        try mine.performFetch()
        let tokenBefore = try gallery.observableStore.currentToken()
        try gallery.moveFavorite(from: 1, to: 4, for: local)
        var expected = ids
        expected.insert(expected.remove(at: 1), at: 4)
        #expect(try gallery.favorites(for: local).compactMap(\.id) == expected)
        let changed = try gallery.observableStore.history(since: tokenBefore).first?.changes["Favorite"].updated.count
        #expect(changed == 4, "only the rows between 1 and 4 are renumbered")
        #expect(watchLog.batches.count == 1)
        #expect(watchLog.batches.first?.moves.count == 1 && watchLog.batches.first?.updates.isEmpty == true)
        // A move made by the view of `mine` is not replayed to it.
        let myBefore = myLog.batches.count
        try gallery.moveFavorite(from: 0, to: 5, for: local, userDrivenBy: mine)
        #expect(myLog.batches.count == myBefore)
        #expect(watchLog.batches.count == 2)
        #expect(mine.fetchedIDs == watching.fetchedIDs)
        try gallery.removeFavorite(photoID: ids[3], for: local)
        let orders = try store.rows("SELECT displayOrder FROM Favorite ORDER BY displayOrder").compactMap { $0[0].int64 }
        #expect(orders == [0, 1, 2, 3, 4], "no gap after a removal")
        #expect { try gallery.moveFavorite(from: 0, to: 9, for: local) } throws: { "\($0)".contains("cannot move") }
    }

    @Test("A photo whose region becomes unknown leaves Recents and Favorites until it is known again; hidden favorites keep their place through moves",
          arguments: StoreKind.available)
    func listsHidePhotosWithoutRegion(on kind: StoreKind) async throws {
        let ids = try await photoIDs(3)
        let store = try GalleryOnStore(test, on: kind)
        let gallery = store.gallery
        let local = try gallery.user(named: GalleryUser.localName)
        for id in ids {
            try gallery.addFavorite(photoID: id, for: local)
            try gallery.recordView(photoID: id, for: local)
        }
        // A live Recents on SQLite (PostgreSQL keeps no change history yet).
        let recents = kind == .sqlite ? try test.gallery.recentsController(for: local) : nil
        let log = BatchLog()
        recents?.delegate = log
        try recents?.performFetch()
        let region = try #require(try gallery.readableStore.read { try $0.fetchOne(PhotoRecord.self, id: ids[1]) }?.regionID)
        try store.execute("UPDATE Photo SET region_id = NULL WHERE id = ?", [.integer(ids[1])])
        #expect(try gallery.favorites(for: local).compactMap(\.id) == [ids[0], ids[2]])
        #expect(try gallery.recents(for: local).map(\.photo.id) == [ids[2], ids[0]])
        if let recents { #expect(recents.fetchedIDs.count == 2 && log.batches.last?.rowDeletes.count == 1, "the live Recents follows") }
        try gallery.moveFavorite(from: 0, to: 1, for: local)
        #expect(try gallery.favorites(for: local).compactMap(\.id) == [ids[2], ids[0]])
        try store.execute("UPDATE Photo SET region_id = ? WHERE id = ?", [.integer(region), .integer(ids[1])])
        #expect(try gallery.favorites(for: local).compactMap(\.id) == [ids[1], ids[2], ids[0]], "the hidden one kept its place")
        let orders = try store.rows("SELECT displayOrder FROM Favorite ORDER BY displayOrder").compactMap { $0[0].int64 }
        #expect(orders == [0, 1, 2])
    }

    @Test("A hidden Recent does not take a shown one's place: Recents still shows 20, and the hidden one comes back in its turn",
          arguments: StoreKind.available)
    func hiddenRecentsKeepTwentyShown(on kind: StoreKind) async throws {
        let ids = try await photoIDs(22)
        let store = try GalleryOnStore(test, on: kind)
        let gallery = store.gallery
        let local = try gallery.user(named: GalleryUser.localName)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func view(_ index: Int) throws {
            try gallery.recordView(photoID: ids[index], at: start.addingTimeInterval(Double(index)), for: local)
        }
        for index in 0..<20 { try view(index) }
        let region = try #require(try gallery.readableStore.read { try $0.fetchOne(PhotoRecord.self, id: ids[19]) }?.regionID)
        try store.execute("UPDATE Photo SET region_id = NULL WHERE id = ?", [.integer(ids[19])])
        try view(20)
        let shownAfterOne = try gallery.recents(for: local).compactMap(\.photo.id)
        #expect(shownAfterOne == [ids[20]] + ids[0..<19].reversed(), "20 shown: the hidden one pushed nothing out")
        try view(21)
        #expect(try gallery.recents(for: local).compactMap(\.photo.id) == [ids[21], ids[20]] + ids[1..<19].reversed())
        try store.execute("UPDATE Photo SET region_id = ? WHERE id = ?", [.integer(region), .integer(ids[19])])
        let back = try gallery.recents(for: local).compactMap(\.photo.id)
        #expect(back == [ids[21], ids[20], ids[19]] + ids[2..<19].reversed(), "the hidden one is back at its time; still 20")
        let stored = try gallery.readableStore.read { try $0.count(FetchRequest(RecentRecord.self)) }
        #expect(stored == 21, "the hidden one was kept beside the 20 shown")
    }

    @Test("Thumbnails download once, then come from the store; concurrent requests share one download")
    func thumbnails() async throws {
        let server = try FlickrTestServer()
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: Expected.directory.appendingPathComponent("images").path)
            .first { $0.hasSuffix("_s.jpg") })
        let flickrID = String(file.split(separator: "_")[0])
        let photo = try #require(try await test.gallery.store.read { try $0.fetch(PhotoRecord.self, where: Key("flickrID") == flickrID).first })
        let loader = ThumbnailLoader(gallery: test.gallery, client: serverClient(server))
        let results = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<5 { group.addTask { try await loader.thumbnail(photoID: photo.id ?? -1) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(results).count == 1)
        #expect(results.first?.starts(with: [0xFF, 0xD8]) == true)
        #expect(await loader.downloads == 1)
        let again = try await loader.thumbnail(photoID: photo.id ?? -1)
        #expect(again == results.first)
        #expect(await loader.downloads == 1)
        #expect(try await server.requests().count == 1)
    }

    @Test("A photo without a secret has no image (noImage, 404 over HTTP), not a failing source; no server is asked")
    func photoWithoutSecret() async throws {
        let server = try FlickrTestServer()
        let id = try #require(try await photoIDs(1).first)
        let photo = try #require(try await test.gallery.store.read { try $0.fetchOne(PhotoRecord.self, id: id) })
        try await test.gallery.store.write { try $0.execute("UPDATE Photo SET secret = NULL WHERE id = ?", [.integer(id)]) }
        for large in [false, true] {
            do {
                _ = large
                    ? try await test.gallery.image(flickrID: photo.flickrID, from: ImageSource(imageBase: server.imageBase), cacheDirectory: test.directory)
                    : try await test.gallery.thumbnail(flickrID: photo.flickrID, from: ImageSource(imageBase: server.imageBase))
                Issue.record("an image without a secret")
            } catch let error as GalleryError {
                #expect(error.kind == .noImage && error.message.contains("secret"), "\(error)")
            }
        }
        #expect(try await server.requests().isEmpty)
    }

    @Test("A store opened read-only gives its stored thumbnails, and one fetched now without keeping it")
    func readOnlyThumbnails() async throws {
        let server = try FlickrTestServer()
        let files = try FileManager.default.contentsOfDirectory(atPath: Expected.directory.appendingPathComponent("images").path)
            .filter { $0.hasSuffix("_s.jpg") }.map { String($0.split(separator: "_")[0]) }
        let stored = try await test.gallery.store.read { context in try context.fetch(PhotoRecord.self, where: Key("flickrID").isIn(files)) }
        try #require(stored.count >= 2, "SampleData has thumbnails of two synced photos")
        let first = try #require(stored[0].id), second = try #require(stored[1].id)
        let bytes = try await ThumbnailLoader(gallery: test.gallery, client: serverClient(server)).thumbnail(photoID: first)
        var configuration = StoreConfiguration()
        configuration.access = .readOnly
        let readOnly = try Gallery(path: test.directory.appendingPathComponent("store.sqlite").path, configuration: configuration)
        defer { readOnly.close() }
        let loader = ThumbnailLoader(gallery: readOnly, client: serverClient(server))
        #expect(try await loader.thumbnail(photoID: first) == bytes)
        let fetched = try await loader.thumbnail(photoID: second)
        #expect(fetched.starts(with: [0xFF, 0xD8]))
        let kept = try await test.gallery.store.read { try $0.count(FetchRequest(ThumbnailRecord.self)) }
        #expect(kept == 1, "the read-only store kept nothing")
    }

    @Test("The image cache is bounded, drops the least recently used, and names files safely")
    func imageCache() throws {
        let cache = try ImageCache(directory: test.directory.appendingPathComponent("images"), maximumBytes: 3_000)
        for index in 0..<3 {
            try cache.store(Data(count: 1_000), flickrID: "100\(index)", size: .large)
            Thread.sleep(forTimeInterval: 0.02)
        }
        _ = try cache.data(flickrID: "1000", size: .large)  // used again: now the newest
        Thread.sleep(forTimeInterval: 0.02)
        try cache.store(Data(count: 1_000), flickrID: "2000", size: .large)
        #expect(cache.totalBytes <= 3_000)
        #expect(try cache.data(flickrID: "1000", size: .large) != nil)
        #expect(try cache.data(flickrID: "1001", size: .large) == nil, "the least recently used went first")
        #expect { try cache.fileURL(flickrID: "../../etc/passwd", size: .large) } throws: { "\($0)".contains("not a Flickr photo id") }
        // Where an image came from is part of its key: one server's bytes for an id are
        // never another origin's.
        #expect(try cache.fileURL(flickrID: "1000", size: .large, origin: "0a1b") != cache.fileURL(flickrID: "1000", size: .large, origin: "2c3d"))
        try cache.store(Data([1, 2, 3]), flickrID: "3000", size: .large, origin: "0a1b")
        #expect(try cache.data(flickrID: "3000", size: .large, origin: "2c3d") == nil)
        #expect(try cache.data(flickrID: "3000", size: .large, origin: "0a1b") == Data([1, 2, 3]))
        #expect { try cache.fileURL(flickrID: "1000", size: .large, origin: "../x") } throws: { "\($0)".contains("origin key") }
    }

    @Test("Pruning deletes old photos except Recents and Favorites, then what is left empty; counts stay exact",
          arguments: StoreKind.available)
    func pruning(on kind: StoreKind) async throws {
        let ids = try await photoIDs(2)
        let store = try GalleryOnStore(test, on: kind)
        let gallery = store.gallery
        let local = try gallery.user(named: GalleryUser.localName)
        try gallery.recordView(photoID: ids[0], for: local)
        try gallery.addFavorite(photoID: ids[1], for: local)
        #expect(try store.check().isEmpty)
        let result = try gallery.prune(olderThan: 3600, now: Date().addingTimeInterval(7200))
        #expect(result.photos > 100)
        let left = try gallery.readableStore.read { try $0.fetchIDs(FetchRequest(PhotoRecord.self, sortDescriptors: [SortKey("id")])) }
        #expect(left == ids)
        let photographers = try gallery.readableStore.read { try $0.count(FetchRequest(PhotographerRecord.self)) }
        #expect(photographers <= 2)
        #expect(result.regions > 0 && result.places > 0)
        #expect(try store.check().isEmpty)
        // A second prune with nothing old removes nothing.
        #expect(try gallery.prune(olderThan: 3600, now: Date()) == PruneResult())
    }

    @Test("The check finds a count that does not match the photos")
    func checkFindsMismatch() async throws {
        #expect(try test.gallery.check().isEmpty)
        try await test.gallery.store.write { try $0.execute("UPDATE Region SET photographerCount = photographerCount + 1 WHERE id = (SELECT min(id) FROM Region)") }
        let problems = try test.gallery.check()
        #expect(problems.count == 1 && problems.first?.contains("photographerCount") == true)
    }

    @Test("Sectioned controllers: top regions by country, a region's photos by photographer")
    func sectionedControllers() async throws {
        let byCountry = try test.gallery.topRegionsController(byCountry: true)
        try byCountry.performFetch()
        let regions = try await test.gallery.store.read { try $0.fetch(RegionRecord.self, where: Key("photoCount") > 0) }
        let countries = Set(regions.map { $0.country ?? "" })
        #expect(byCountry.sections.count == countries.count)
        for (index, section) in byCountry.sections.enumerated() {
            let rows = try (0..<section.numberOfObjects).map { try byCountry.object(at: IndexPath(row: $0, section: index)) }
            #expect(rows.allSatisfy { ($0.country ?? "") == section.name })
            #expect(rows.map(\.photographerCount) == rows.map(\.photographerCount).sorted(by: >), "most photographers first in each country")
        }
        let region = try #require(try test.gallery.topRegions().first)
        let byPhotographer = try test.gallery.regionPhotosController(regionID: region.id, byPhotographer: true)
        try byPhotographer.performFetch()
        #expect(byPhotographer.numberOfObjects == region.photos)
        let names = byPhotographer.sections.map(\.name)
        #expect(names == names.sorted { Collation.localizedStandard.compare($0, $1) == .orderedAscending })
    }

    @Test("The top-regions controller keeps its limit as a sync adds regions")
    func topRegionsController() async throws {
        let controller = try test.gallery.topRegionsController(limit: 10)
        let log = BatchLog()
        controller.delegate = log
        try controller.performFetch()
        #expect(controller.numberOfObjects == 10)
        var options = SyncOptions(pages: 8, perPage: 500)
        options.overlap = 365 * 86_400  // reach back past what the first pass read
        let result = try await test.gallery.sync(client: try sampleClient(), options: options)
        #expect(result.photosNew > 0)
        #expect(controller.numberOfObjects == 10)
        #expect(controller.fetchedIDs == (try test.gallery.topRegions(limit: 10).map(\.id)))
        #expect(!log.batches.isEmpty)
    }
}
