import Flickr
import TestSupport
import Foundation
import ResultsController
import Store
import Testing
@testable import TopRegionsKit

/// A gallery in a temporary directory.
final class TestGallery {
    private let temporary: TemporaryDirectory
    var directory: URL { temporary.url }
    let gallery: Gallery

    init() throws {
        temporary = try TemporaryDirectory("gallery")
        gallery = try Gallery(path: temporary.path("store.sqlite"))
    }

    deinit { gallery.close() }

    /// A sync from SampleData with `options`, whose place lookups have all the time they
    /// need: the suites run side by side on two cores, and a lookup starved of a thread for
    /// the default deadline (120 s) would leave places pending and the lists short.
    @discardableResult
    func syncSample(_ options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        var options = options
        options.placeLookupDeadline = 3_600
        let result = try await gallery.sync(client: try sampleClient(), options: options)
        let left = "places left: \(result.placesLeftAtDeadline) at the deadline, \(result.placesLeftAfterFailures) after failures; "
            + "\(result.placeLookupsFailed) lookups failed (\(result.placeLookupFailure ?? "none"))"
        #expect(result.placesLeftAtDeadline == 0 && result.placesLeftAfterFailures == 0 && result.placeLookupsFailed == 0, "\(left)")
        return result
    }

    /// The first of the top regions, and its row id.
    func topRegion() async throws -> (summary: RegionSummary, id: Int64) {
        let region = try #require(try gallery.topRegions(limit: 1).first)
        let id = try #require(try await gallery.store.read { try $0.fetch(RegionRecord.self, where: Key("placeID") == region.placeID).first?.id })
        return (region, id)
    }
}

func sampleClient() throws -> FlickrClient {
    FlickrClient(configuration: FlickrConfiguration(), transport: try SampleDataTransport(directory: Expected.directory))
}

func serverClient(_ server: FlickrTestServer, format: ResponseFormat = .json, attempts: Int = 2) -> FlickrClient {
    var configuration = FlickrConfiguration(endpoint: server.endpoint, apiKey: nil, format: format, imageBase: server.imageBase)
    configuration.retry = RetryPolicy(maximumAttempts: attempts, baseDelay: 0.01, maximumDelay: 0.05)
    return FlickrClient(configuration: configuration)
}

@Suite("Sync and top regions", .serialized)
struct SyncTests {
    @Test("A sync of SampleData gives the top regions computed independently from the responses", arguments: StoreKind.available)
    func topRegionsFromSampleData(on kind: StoreKind) async throws {
        let test = try TestGallery()
        let result = try await test.syncSample(SyncOptions(pages: 8, perPage: 500))
        #expect(result.outcome == .newData)
        let store = try GalleryOnStore(test, on: kind)
        let expected = try Expected.topRegions()
        let actual = try store.gallery.topRegions()
        #expect(actual.map(\.placeID) == expected.map(\.placeID))
        #expect(actual.map(\.photographers) == expected.map(\.photographers.count))
        #expect(actual.map(\.photos) == expected.map(\.photos.count))
        #expect(actual.map(\.name) == expected.map(\.name))
        #expect(try store.check().isEmpty)
        // Photos whose region is unknown (no place, a country place, a failing place) are in
        // no region.
        let placed = try Expected.regions().values.reduce(0) { $0 + $1.photos.count }
        let attached = try store.rows("SELECT count(*) FROM Photo WHERE region_id IS NOT NULL").first?[0].int64
        #expect(attached == Int64(placed))
    }

    @Test("The same over HTTP from the test server, in JSON and in XML", arguments: ResponseFormat.allCases)
    func topRegionsOverHTTP(format: ResponseFormat) async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        _ = try await test.gallery.sync(client: serverClient(server, format: format), options: SyncOptions(pages: 10, perPage: 250))
        let expected = try Expected.topRegions()
        #expect(try test.gallery.topRegions().map(\.placeID) == expected.map(\.placeID))
        // Each place was asked once.
        let lookups = try await server.requests().filter { $0.method == "flickr.places.getInfo" }
        #expect(lookups.count == Set(lookups.compactMap { $0.query["place_id"] }).count)
    }

    @Test("Photos in a region: sorted as the Finder sorts titles, then by id as a number, with the title rules", arguments: StoreKind.available)
    func regionPhotos(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let store = try GalleryOnStore(test, on: kind)
        let region = try #require(try store.gallery.topRegions().first)
        let photos = try store.gallery.photos(inRegion: region.id)
        let expectedIDs = try Expected.regions()[region.placeID]?.photos ?? []
        #expect(Set(photos.map(\.flickrID)) == expectedIDs)
        let rawByID = Dictionary(try Expected.photos().map { ("\($0["id"] ?? "")", $0) }, uniquingKeysWith: { first, _ in first })
        for photo in photos {
            #expect(photo.title == Expected.title(rawByID[photo.flickrID] ?? [:]))
        }
        for (left, right) in zip(photos, photos.dropFirst()) {
            let order = Collation.localizedStandard.compare(left.title, right.title)
            #expect(order == .orderedAscending || (order == .orderedSame && (Int64(left.flickrID) ?? 0) < (Int64(right.flickrID) ?? 0)))
        }
        #expect(photos.allSatisfy { $0.thumbnailURL?.absoluteString.hasSuffix("_s.jpg") == true })
    }

    @Test("Syncing the same responses twice changes nothing the second time (but the record of the pass)")
    func idempotent() async throws {
        let test = try TestGallery()
        let client = try sampleClient()
        _ = try await test.gallery.sync(client: client)
        let token = try test.gallery.store.currentToken()
        let second = try await test.gallery.sync(client: client)
        #expect(second.outcome == .noData)
        #expect(second.photosNew == 0 && second.photosUpdated == 0)
        let entries = try test.gallery.store.history(since: token)
        #expect(entries.allSatisfy { $0.changes.entityNames == ["SyncRun"] }, "only the pass's own record: \(entries.map { $0.changes.entityNames })")

    }

    @Test("A first pass asks for every page once (reading ahead, in any order); a pass that catches up asks no further")
    func pagesAskedOnce() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        let client = serverClient(server)
        _ = try await test.gallery.sync(client: client, options: SyncOptions(pages: 10, perPage: 250))
        func searchedPages() async throws -> [String] {
            try await server.requests().filter { $0.method == FlickrMethod.photosSearch }.compactMap { $0.query["page"] }
        }
        let total = try Expected.photos().count
        let pageCount = (total + 249) / 250
        let first = try await searchedPages()
        #expect(first.compactMap { Int($0) }.sorted() == Array(1...pageCount), "\(first)")
        // The second pass finds page 1 already known and stops: no page read ahead.
        _ = try await test.gallery.sync(client: client, options: SyncOptions(pages: 10, perPage: 250))
        let both = try await searchedPages()
        #expect(Array(both.dropFirst(first.count)) == ["1"], "\(both)")
    }

    @Test("A pass catching up on many pages stores them in growing groups (1, 2, then 4 pages) and stops where it caught up")
    func catchUpGroupsPages() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        let client = serverClient(server)
        var options = SyncOptions(pages: 100, perPage: 20)
        options.overlap = 100 * 365 * 86_400
        _ = try await test.gallery.sync(client: client, options: options)
        // Forget the 100 newest photos (pages 1 to 5), counts kept exact: to the next pass
        // they are new, as if uploaded since.
        let newest = try Expected.photos().prefix(100).map { SQLValue.text("\($0["id"] ?? "")") }
        try await test.gallery.store.write { transaction in
            let rows = try transaction.rows("SELECT id, region_id, photographer_id FROM Photo WHERE flickrID IN (\(newest.map { _ in "?" }.joined(separator: ", ")))", newest)
            try RegionCounts.detach(rows.compactMap { row in row[1].int64.map { RegionCounts.Membership(region: $0, photographer: row[2].int64) } },
                                    in: transaction)
            #expect(try transaction.delete("Photo", ids: rows.compactMap { $0[0].int64 }) == 100)
        }
        try await server.clearRequests()
        let token = try test.gallery.store.currentToken()
        let second = try await test.gallery.sync(client: client, options: options)
        #expect(second.photosNew == 100 && second.photosUpdated == 0)
        #expect(try test.gallery.check().isEmpty)
        // Page 1 alone, pages 2–3, then pages 4–7 (6 and 7 known): three commits, where a
        // commit per page made five.
        let commits = try test.gallery.store.history(since: token).filter { !$0.changes["Photo"].inserted.isEmpty }
        #expect(commits.map { $0.changes["Photo"].inserted.count } == [20, 40, 40])
        // Pages read ahead past page 7 are bounded by the group (4): the pass did not go on.
        let asked = try await server.requests().filter { $0.method == FlickrMethod.photosSearch }.compactMap { $0.query["page"].flatMap { Int($0) } }
        #expect(Set(asked).isSuperset(of: 1...7) && (asked.max() ?? 0) <= 11, "\(asked.sorted())")
    }

    @Test("Each page costs the same number of queries, whatever its size")
    func constantQueriesPerPage() async throws {
        let test = try TestGallery()
        let page = try await sampleClient().recentGeotaggedPhotos(page: 1, perPage: 500).photos
        func queries(_ photos: [FlickrPhoto]) throws -> Int {
            try test.gallery.store.write { transaction in
                let before = transaction.queriesRun
                var named = Set<String>()
                _ = try PhotoIngest.store(photos, downloadedAt: Date(), namedThisPass: &named, in: transaction)
                return transaction.queriesRun - before
            }
        }
        let small = try queries(Array(page[0..<20]))
        let large = try queries(Array(page[100..<500]))
        #expect(small == large, "\(small) queries for 20 photos, \(large) for 400")
    }

    @Test("A photo whose secret or server changes (replaced on Flickr) loses the thumbnail kept of its old image; one whose image is the same keeps it")
    func replacedImageDropsItsThumbnail() async throws {
        let test = try TestGallery()
        func ingest(_ photos: [FlickrPhoto]) throws {
            try test.gallery.store.write { transaction in
                var named = Set<String>()
                _ = try PhotoIngest.store(photos, downloadedAt: Date(), namedThisPass: &named, in: transaction)
            }
        }
        let photos = (0..<3).map { FlickrPhoto(id: "\(900 + $0)", owner: "1@N01", secret: "aaaa", server: "1", title: "t\($0)") }
        try ingest(photos)
        let ids = try await test.gallery.store.read { try $0.fetch(PhotoRecord.self, where: Key("flickrID").isIn(photos.map(\.id))) }.compactMap(\.id)
        try await test.gallery.store.write { transaction in
            for id in ids { try transaction.inserted(ThumbnailRecord(bytes: [0xFF, 0xD8, 0xFF], fetchedAt: Date(), photoID: id)) }
        }
        var replaced = photos
        replaced[0].secret = "bbbb"
        replaced[1].server = "2"
        replaced[2].title = "a new title, the same image"
        try ingest(replaced)
        let kept = try await test.gallery.store.read { try $0.fetch(ThumbnailRecord.self) }.compactMap(\.photoID)
        #expect(kept == [ids[2]])
    }

    @Test("A photographer's changed display name is an update; within one pass the newest page's name wins")
    func renamedPhotographer() async throws {
        let test = try TestGallery()
        func ingest(_ names: [String]) throws -> ChangeSet {
            try test.gallery.store.write { transaction in
                var named = Set<String>()
                for (index, name) in names.enumerated() {
                    let photo = FlickrPhoto(id: "\(100 + index)", owner: "12345@N01", ownerName: name, title: "t")
                    _ = try PhotoIngest.store([photo], downloadedAt: Date(), namedThisPass: &named, in: transaction)
                }
                return transaction.changes
            }
        }
        _ = try ingest(["Sam Lee"])
        let renamed = try ingest(["Samantha Lee", "Sam Lee (older page)"])
        let photographers = try await test.gallery.store.read { try $0.fetch(PhotographerRecord.self) }
        let photographer = try #require(photographers.first)
        #expect(photographer.name == "Samantha Lee")
        #expect(renamed["Photographer"].updated[photographer.id ?? -1]?.contains("name") == true)
    }

    @Test("A page that fails to decode commits nothing of itself; earlier pages stay; the next pass completes")
    func partialFailure() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        try await server.addFault(["method": "flickr.photos.search", "page": 2, "malformed": true, "times": 1])
        let failed = try await test.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 5, perPage: 100))
        #expect(failed.outcome == .failed)
        #expect(failed.error?.contains("page 2") == true)
        let afterFailure = try await test.gallery.store.read { try $0.count(FetchRequest(PhotoRecord.self)) }
        #expect(afterFailure == 100)
        let second = try await test.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 5, perPage: 100))
        #expect(second.outcome == .newData)
        #expect(try await test.gallery.store.read { try $0.count(FetchRequest(PhotoRecord.self)) } > 400)
        #expect(try test.gallery.check().isEmpty)
    }

    @Test("Places are asked once; a permanent failure is not asked again; a transient one is retried next pass")
    func placeLookups() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        let transientPlace = try #require(try Expected.photos().compactMap { $0["place_id"] as? String }.first { !$0.isEmpty })
        try await server.addFault(["method": "flickr.places.getInfo", "place_id": transientPlace, "status": 503, "times": -1])
        let first = try await test.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 3, perPage: 500))
        #expect(first.placesPending == 1)
        #expect(first.placesFailed == 1, "the sample's unknown place fails permanently")
        try await server.clearFaults()
        try await server.clearRequests()
        let second = try await test.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 3, perPage: 500))
        let lookups = try await server.requests().filter { $0.method == "flickr.places.getInfo" }
        #expect(lookups.map { $0.query["place_id"] } == [transientPlace])
        #expect(second.placesPending == 0 && second.placesResolved == 1)
        #expect(try test.gallery.check().isEmpty)
    }

    @Test("A photo Flickr reports at another place takes that place's region (none while the place is unknown); counts and check follow")
    func photoMovesToAnotherPlace() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        let gallery = test.gallery
        let options = SyncOptions(pages: 1, perPage: 100)
        _ = try await gallery.sync(client: serverClient(server), options: options)
        let moved = try #require(try Expected.photos().first?["id"] as? String)
        let before = try #require(try await gallery.store.read { try $0.fetch(PhotoRecord.self, where: Key("flickrID") == moved).first })
        let oldRegion = try #require(before.regionID, "the first photo of the sample has a region")
        let elsewhere = try #require(try await gallery.store.read {
            try $0.fetch(PlaceRecord.self, where: Key("status") == PlaceStatus.resolved.rawValue).first { $0.regionID != nil && $0.regionID != oldRegion }
        })
        let (user, _) = try gallery.addUser(named: "ann")
        try gallery.addFavorite(flickrID: moved, for: user)

        try await server.addFault(["method": "flickr.photos.search", "times": -1, "patch": [["index": 0, "set": ["place_id": elsewhere.placeID]]]])
        _ = try await gallery.sync(client: serverClient(server), options: options)
        let after = try #require(try await gallery.store.read { try $0.fetchOne(PhotoRecord.self, id: before.id ?? -1) })
        #expect(after.regionID == elsewhere.regionID)
        #expect(try gallery.check().isEmpty)

        // A place no one knows: the photo has no region, so it is not shown, viewed or
        // favourited, but it can still be taken out of Favorites.
        try await server.clearFaults()
        try await server.addFault(["method": "flickr.photos.search", "times": -1, "patch": [["index": 0, "set": ["place_id": "no.such.place"]]]])
        _ = try await gallery.sync(client: serverClient(server), options: options)
        #expect(try await gallery.store.read { try $0.fetchOne(PhotoRecord.self, id: before.id ?? -1) }?.regionID == nil)
        #expect(try gallery.check().isEmpty)
        #expect(try gallery.photoDetail(flickrID: moved) == nil)
        #expect(throws: GalleryError.self) { try gallery.view(flickrID: moved, for: user) }
        #expect(throws: GalleryError.self) { try gallery.addFavorite(flickrID: moved, for: user) }
        try gallery.removeFavorite(flickrID: moved, for: user)
        #expect(try gallery.favorites(for: user).isEmpty)
    }

    @Test("Texts a server sends beyond their limits are cut: titles, descriptions, names")
    func longTextsAreCut() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        let long = String(repeating: "é", count: 50_000)
        try await server.addFault(["method": "flickr.photos.search", "times": -1,
                                   "patch": [["index": 0, "set": ["title": long, "ownername": long, "description": ["_content": long]]]]])
        _ = try await test.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 1, perPage: 100))
        let id = try #require(try Expected.photos().first?["id"] as? String)
        let photo = try #require(try await test.gallery.store.read { try $0.fetch(PhotoRecord.self, where: Key("flickrID") == id).first })
        #expect(photo.title.count == PhotoText.Limit.title && photo.title.hasSuffix("…"))
        #expect(photo.subtitle.count == PhotoText.Limit.title)
        #expect(photo.photoDescription.count == PhotoText.Limit.description)
        let owner = try #require(try await test.gallery.store.read { try $0.fetchOne(PhotographerRecord.self, id: photo.photographerID ?? -1) })
        #expect(owner.name.count == PhotoText.Limit.name)
        #expect(PhotoText.bounded("short", to: 3) == "sh…" && PhotoText.bounded("👍🏽👍🏽", to: 2) == "👍🏽👍🏽")
    }

    @Test("A text is bounded in Unicode scalars too: one letter with a million combining marks is not one character's worth")
    func combiningMarksAreBounded() {
        let piled = "a" + String(repeating: "\u{301}", count: 1_000_000)
        #expect(PhotoText.bounded(piled, to: 1_000) == "…")
        let accented = String(repeating: "e\u{301}\u{302}\u{303}\u{304}", count: 900)  // 900 characters, 4,500 scalars
        let cut = PhotoText.bounded(accented, to: 1_000)
        #expect(cut == String(repeating: "e\u{301}\u{302}\u{303}\u{304}", count: 799) + "…", "\(cut.count) characters")
        let fits = String(repeating: "e\u{301}\u{302}", count: 999)
        #expect(PhotoText.bounded(fits, to: 1_000) == fits, "999 characters of 3 scalars are within both bounds")
        #expect(PhotoText.bounded(String(repeating: "x", count: 1_000), to: 1_000).count == 1_000)
        #expect(PhotoText.bounded(String(repeating: "x", count: 1_001), to: 1_000) == String(repeating: "x", count: 999) + "…")
    }

    @Test("By photographer, two photographers of one name are two groups, not interleaved", arguments: StoreKind.available)
    func photographersOfOneName(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let regionID = try await test.topRegion().id
        let store = try GalleryOnStore(test, on: kind)
        let gallery = store.gallery
        // Renamed through the gallery's transactions: on PostgreSQL, the names' sort keys too.
        try gallery.writableStore.write { transaction in
            let photographers = try transaction.fetchIDs(FetchRequest(PhotoRecord.self, predicate: Key("region") == regionID))
            let renamed = try Set(transaction.fetch(PhotoRecord.self, ids: photographers).compactMap(\.photographerID)).sorted().prefix(3)
            for var photographer in try transaction.fetch(PhotographerRecord.self, ids: renamed) {
                photographer.name = "Same Name"
                try transaction.update(photographer)
            }
        }
        let photos = try gallery.readableStore.read {
            try $0.fetch(Gallery.regionPhotosRequest(regionID: regionID, byPhotographer: true), as: PhotoRecord.self)
        }
        var groups: [Int64?] = []
        for photo in photos where groups.last != photo.photographerID { groups.append(photo.photographerID) }
        #expect(groups.count == Set(groups).count, "each photographer's photos are together: \(groups)")
        #expect(Set(photos.compactMap(\.photographerID)).count >= 3)
        // Those of one name come in the order of their owner ids, not of their row ids.
        let owners = try gallery.readableStore.read { context in
            Dictionary(uniqueKeysWithValues: try context.fetch(PhotographerRecord.self, where: Key("name") == "Same Name").map { ($0.id ?? 0, $0.ownerID) })
        }
        let sameName = groups.compactMap { $0.flatMap { owners[$0] } }
        #expect(sameName.count == 3 && sameName == sameName.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, "\(sameName)")
        // The rows the CLI and the API give are in the same order.
        let rows = try gallery.photoRows(inRegion: regionID, byPhotographer: true)
        #expect(rows.map(\.id) == photos.map(\.flickrID))
        #expect(try store.check().isEmpty, "a name changed through a record has its sort key changed with it")
    }

    @Test("check names photos whose region is not their place's")
    func checkSeesPhotosAwayFromTheirPlaces() async throws {
        let test = try TestGallery()
        _ = try await test.syncSample(SyncOptions(pages: 1, perPage: 100))
        try await test.gallery.store.write { transaction in
            try transaction.execute("UPDATE Photo SET region_id = NULL WHERE id = (SELECT min(id) FROM Photo WHERE region_id IS NOT NULL)")
        }
        let problems = try test.gallery.check()
        #expect(problems.contains { $0.contains("1 photo's region is not their place's region") }, "\(problems)")
    }

    @Test("A server that refuses every place lookup is not asked about every place: the lookups stop after failures in a row")
    func placeLookupsStopWhenRefused() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        try await server.addFault(["method": "flickr.places.getInfo", "status": 429, "retry_after": 0, "times": -1])
        let result = try await test.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 1, perPage: 500))
        let lookups = try await server.requests().filter { $0.method == "flickr.places.getInfo" }.count
        let places = Set(try Expected.photos().prefix(500).compactMap { $0["place_id"] as? String }.filter { !$0.isEmpty }).count
        let concurrency = SyncOptions().concurrentPlaceLookups
        #expect(lookups <= (PlaceResolution.failuresBeforeStopping + concurrency) * 2, "each lookup tried twice (serverClient's policy)")
        #expect(result.placesPending == places)
        #expect(result.placesLeftAfterFailures > 0 && result.placesLeftAfterFailures < places)
        #expect(result.notes.contains { $0.contains("failed in a row") }, "\(result.notes)")
        #expect(try test.gallery.check().isEmpty)
    }

    @Test("A second sync while one runs is refused with the holder's pid")
    func oneSyncAtATime() async throws {
        let test = try TestGallery()
        let lock = try SyncLock.acquire(for: test.gallery.store)
        await #expect { try await test.syncSample() } throws: { error in
            (error as? GalleryError)?.kind == .syncRunning(pid: getpid())
        }
        #expect(SyncLock.holder(of: test.gallery.store) == getpid())
        lock.release()
        #expect(SyncLock.holder(of: test.gallery.store) == nil)
        _ = try await test.syncSample(SyncOptions(pages: 1, perPage: 50))
    }
}

@Suite("The product's schema")
struct ProductSchemaTests {
    /// Foreign keys that lead a declared index (Recents and Favorites are led by their user
    /// since `topregions.v4.users`, so their `photo_id` has an index of its own again).
    static let coveredIndexes = ["Favorite_user_id", "Photo_region_id", "Recent_user_id", "RegionPhotographer_region_id", "Thumbnail_photo_id"]

    static func indexNames(_ gallery: Gallery) throws -> [String] {
        try gallery.store.read { context in
            try context.rows("SELECT name FROM sqlite_schema WHERE type = 'index' ORDER BY name").compactMap { $0[0].string }
        }
    }

    @Test("Looking up a page's region/photographer links searches the pair index instead of scanning every link")
    func linkLookupUsesTheIndex() async throws {
        let test = try TestGallery()
        let arguments = (1...8).flatMap { [SQLValue.integer($0), .integer($0 * 10)] }
        let plan = try await test.gallery.store.read { context in
            try context.rows("EXPLAIN QUERY PLAN " + RegionCounts.linksQuery(pairs: 8), arguments).compactMap { $0[3].string }
        }
        #expect(plan.contains { $0.hasPrefix("SEARCH l USING INDEX region_photographer_pair") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN l") || $0.hasPrefix("SCAN RegionPhotographer") }, "\(plan)")
    }

    @Test("A new store has no foreign-key index that a declared index already leads with")
    func newStore() throws {
        let test = try TestGallery()
        let names = try Self.indexNames(test.gallery)
        #expect(Set(names).isDisjoint(with: Self.coveredIndexes))
        #expect(names.contains("photo_region_title") && names.contains("Photo_photographer_id"))
        #expect(Set(TopRegionsSchema.entities.flatMap(\.coveredForeignKeyIndexNames)) == Set(Self.coveredIndexes))
    }

    @Test("Opening a store made before drops those indexes, once, and keeps its data")
    func olderStore() async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let before = try test.gallery.topRegions(limit: 50)
        // Put the store back as the first version left it: the indexes, and no v2 migration.
        try await test.gallery.store.write { transaction in
            try transaction.execute(#"CREATE INDEX "Photo_region_id" ON "Photo" ("region_id")"#)
            try transaction.execute(#"CREATE INDEX "Recent_user_id" ON "Recent" ("user_id")"#)
            try transaction.execute("DELETE FROM store_migrations WHERE name = 'topregions.v2.drop-covered-foreign-key-indexes'")
        }
        #expect(try Self.indexNames(test.gallery).contains("Photo_region_id"))
        test.gallery.close()
        let reopened = try Gallery(path: test.directory.appendingPathComponent("store.sqlite").path)
        defer { reopened.close() }
        #expect(Set(try Self.indexNames(reopened)).isDisjoint(with: Self.coveredIndexes))
        #expect(try reopened.topRegions(limit: 50) == before)
        #expect(try reopened.check().isEmpty)
        let applied = try await reopened.store.read { try $0.rows("SELECT name FROM store_migrations ORDER BY rowid").compactMap { $0[0].string } }
        // v2 was applied again (after the later ones and the store's own, which the store kept), and only once.
        #expect(applied == ["topregions.v1", "topregions.v3.settings", "topregions.v4.users", "topregions.v5.credit", "topregions.v6.search",
                            "store.v1.localized-standard-icu-order", "topregions.v2.drop-covered-foreign-key-indexes"])
    }
}

@Suite("A first sync's bulk load", .serialized)
struct BulkLoadTests {
    /// What `photoIndexes` gives for an index SQLite made for a UNIQUE column (it has no SQL).
    static let uniqueIndexSQL = "(unique)"

    /// Photo's indexes: name → SQL.
    static func photoIndexes(_ gallery: Gallery) throws -> [String: String] {
        let rows = try gallery.store.read { try $0.rows("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'Photo'") }
        return Dictionary(uniqueKeysWithValues: rows.compactMap { row in row[0].string.map { ($0, row[1].string ?? uniqueIndexSQL) } })
    }

    static func rootPage(_ gallery: Gallery, _ index: String) throws -> Int64 {
        try gallery.store.read { try $0.scalar("SELECT rootpage FROM sqlite_schema WHERE name = ?", [.text(index)])?.int64 } ?? 0
    }

    /// 48 pages of 25, the whole sample: after the first group (16 pages, 400 photos) the
    /// pass has stored more than 100 new photos and may read 800 more, more than the store
    /// holds: it defers.
    static func bulkOptions() -> SyncOptions {
        var options = SyncOptions(pages: 48, perPage: 25)
        options.bulkLoadMinimumPhotos = 100
        return options
    }

    /// The Flickr ids of the stored photos with their region's place id, and the store's
    /// top regions: what a bulk load must leave exactly as a row-by-row one does.
    static func contents(_ gallery: Gallery) throws -> (photos: [String], top: [String]) {
        let photos = try gallery.store.read { context in
            try context.rows("SELECT p.flickrID || ' ' || coalesce(r.placeID, '-') FROM Photo p LEFT JOIN Region r ON r.id = p.region_id ORDER BY 1")
                .compactMap { $0[0].string }
        }
        return (photos, try gallery.topRegions().map(\.placeID))
    }

    @Test("A large first pass builds Photo's indexes after its rows: the same indexes, and what a row-by-row load stores")
    func bulkFirstPass() async throws {
        let server = try FlickrTestServer()
        let bulk = try TestGallery(), rowByRow = try TestGallery()
        let fresh = try Self.photoIndexes(bulk.gallery)
        let freshRoot = try Self.rootPage(bulk.gallery, "photo_region_title")
        let result = try await bulk.gallery.sync(client: serverClient(server), options: Self.bulkOptions())
        let expected = try await rowByRow.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 48, perPage: 25))
        #expect(result.outcome == .newData && result.photosNew == expected.photosNew && result.photosNew > 1_000)
        #expect(try Self.photoIndexes(bulk.gallery) == fresh)
        #expect(try Self.rootPage(bulk.gallery, "photo_region_title") > freshRoot, "built after the rows, at the end of the file")
        #expect(try Self.rootPage(rowByRow.gallery, "photo_region_title") == freshRoot)
        #expect(try bulk.gallery.store.deferredIndexStatements().isEmpty)
        let (photos, top) = try Self.contents(bulk.gallery)
        #expect(photos == (try Self.contents(rowByRow.gallery)).photos)
        #expect(top == (try Expected.topRegions()).map(\.placeID))
        #expect(try bulk.gallery.check().isEmpty)
    }

    @Test("A pass that may read fewer photos than the store holds, or stores fewer than the minimum, keeps its indexes")
    func declined() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        let freshRoot = try Self.rootPage(test.gallery, "photo_region_title")
        var few = Self.bulkOptions()
        few.bulkLoadMinimumPhotos = 2_000
        _ = try await test.gallery.sync(client: serverClient(server), options: few)
        #expect(try Self.rootPage(test.gallery, "photo_region_title") == freshRoot, "never 2,000 new photos")
        let other = try TestGallery()
        var short = Self.bulkOptions()
        short.pages = 24
        _ = try await other.gallery.sync(client: serverClient(server), options: short)
        #expect(try Self.rootPage(other.gallery, "photo_region_title") == freshRoot, "8 pages left (200 photos) after 400 stored")
        #expect(try other.gallery.check().isEmpty)
    }

    @Test("A bulk pass that fails on a page builds the indexes over the pages it stored; the next pass completes")
    func failedBulkPass() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        let fresh = try Self.photoIndexes(test.gallery)
        let freshRoot = try Self.rootPage(test.gallery, "photo_region_title")
        try await server.addFault(["method": "flickr.photos.search", "page": 20, "malformed": true, "times": 1])
        let failed = try await test.gallery.sync(client: serverClient(server), options: Self.bulkOptions())
        #expect(failed.outcome == .failed && failed.error?.contains("page 20") == true)
        #expect(try Self.photoIndexes(test.gallery) == fresh)
        #expect(try Self.rootPage(test.gallery, "photo_region_title") > freshRoot, "the failure came after the indexes were dropped")
        #expect(try test.gallery.store.deferredIndexStatements().isEmpty)
        let stored = try await test.gallery.store.read { try $0.count(FetchRequest(PhotoRecord.self)) }
        #expect(stored >= 450 && stored <= 475, "pages 1 to 19 of 25 (one photo is on two pages): \(stored)")
        #expect(try test.gallery.check().isEmpty)
        let second = try await test.gallery.sync(client: serverClient(server), options: Self.bulkOptions())
        #expect(second.outcome == .newData)
        #expect(try test.gallery.check().isEmpty)
    }

    @Test("A corrupt note of deferred indexes is one of check's problems, and fails a sync with its name")
    func corruptNote() async throws {
        let test = try TestGallery()
        try await test.gallery.store.write { try $0.execute("INSERT INTO store_metadata (key, value) VALUES ('deferred_indexes', 'nonsense')") }
        let problems = try test.gallery.check()
        #expect(problems.count == 1 && problems.first?.contains("deferred_indexes") == true, "\(problems)")
        #expect(problems.first?.contains("nonsense") == false && problems.first?.contains("SQL") == false, "the file's text and the SQL stay out")
        let result = try await test.syncSample(SyncOptions(pages: 1, perPage: 50))
        #expect(result.outcome == .failed && result.error?.contains("deferred_indexes") == true)
    }

    @Test("Indexes a dead pass left unbuilt: check names them, the next pass builds them first")
    func leftUnbuilt() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        let fresh = try Self.photoIndexes(test.gallery)
        let dropped = try await test.gallery.store.deferIndexes(of: TopRegionsSchema.photo)
        #expect(!dropped.isEmpty)
        let problems = try test.gallery.check()
        #expect(problems.count == 1 && problems.first?.contains("\(dropped.count) indexes dropped for a bulk load") == true, "\(problems)")
        #expect(dropped.allSatisfy { problems.first?.contains($0) == true } && problems.first?.contains("CREATE") == false, "named, not as SQL")
        _ = try await test.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 1, perPage: 50))
        #expect(try Self.photoIndexes(test.gallery) == fresh)
        #expect(try test.gallery.check().isEmpty)
    }
}
