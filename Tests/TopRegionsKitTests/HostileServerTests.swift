import Flickr
import TestSupport
import Foundation
import Store
import Testing
@testable import TopRegionsKit

/// A sync against a server that misbehaves: no crash, no stall, no poisoned store.
@Suite("A sync against a hostile server", .serialized)
struct HostileServerTests {
    /// An empty gallery on a store of `kind` (the SQLite one kept while the store is used).
    private struct EmptyGallery {
        let test: TestGallery
        let store: GalleryOnStore
        var gallery: any GalleryServing { store.gallery }

        init(_ kind: StoreKind) throws {
            test = try TestGallery()
            store = try GalleryOnStore(test, on: kind)
        }

        func photoCount() throws -> Int64 {
            try gallery.readableStore.read { try $0.scalar("SELECT count(*) FROM Photo")?.int64 ?? -1 }
        }
    }

    @Test("Nesting 50,000 deep fails the page with a clear message and leaves the store unchanged", arguments: StoreKind.available, ResponseFormat.allCases)
    func deepNesting(kind: StoreKind, format: ResponseFormat) async throws {
        let server = try FlickrTestServer()
        let test = try EmptyGallery(kind)
        try await server.addFault(["method": "flickr.photos.search", "deep": 50_000, "times": -1])
        let result = try await test.gallery.sync(client: serverClient(server, format: format), options: SyncOptions(pages: 2, perPage: 100))
        #expect(result.outcome == .failed)
        #expect(result.error?.contains("deeper than 512") == true, "\(result.error ?? "")")
        #expect(try test.photoCount() == 0)
    }

    @Test("An upload date far in the future does not move the next pass's window", arguments: StoreKind.available, ResponseFormat.allCases)
    func futureUploadDate(kind: StoreKind, format: ResponseFormat) async throws {
        let server = try FlickrTestServer()
        let test = try EmptyGallery(kind)
        try await server.addFault(["method": "flickr.photos.search", "page": 1, "patch": [["index": 0, "set": ["dateupload": "99999999999"]]]])
        let first = try await test.gallery.sync(client: serverClient(server, format: format), options: SyncOptions(pages: 2, perPage: 100))
        #expect(first.outcome == .newData)
        #expect(first.futureDatesIgnored == 1)
        #expect(first.notes.contains { $0.contains("in the future") })
        try await server.clearRequests()
        _ = try await test.gallery.sync(client: serverClient(server, format: format), options: SyncOptions(pages: 2, perPage: 100))
        let searches = try await server.requests().filter { $0.method == "flickr.photos.search" }
        let minimum = try #require(searches.first?.query["min_upload_date"].flatMap(Double.init))
        #expect(minimum <= Date().timeIntervalSince1970, "the window starts in the past, not in the year 5138")
    }

    @Test("A window poisoned by a stored future date repairs itself on the next pass", arguments: StoreKind.available)
    func poisonedWindowHeals(kind: StoreKind) async throws {
        let server = try FlickrTestServer()
        let test = try EmptyGallery(kind)
        // The previous pass started just after SampleData's newest upload, and stored a
        // newest upload from the year 5138.
        let newest = try Expected.photos().compactMap { ($0["dateupload"] as? String).flatMap(Double.init) }.max() ?? 0
        let started = newest + 60
        try test.store.execute("INSERT INTO SyncRun (startedAt, finishedAt, result, newestUpload) VALUES (?, ?, 'newData', 99999999999)",
                               [.real(started), .real(started + 10)])
        _ = try await test.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 1, perPage: 100))
        let search = try #require(try await server.requests().first { $0.method == "flickr.photos.search" })
        let minimum = try #require(search.query["min_upload_date"].flatMap(Double.init))
        #expect(minimum <= started)
        #expect(try test.photoCount() > 0)
    }

    @Test("A page that always fails still lets the photos stored before it reach their regions", arguments: StoreKind.available, ResponseFormat.allCases)
    func failingPageStillResolvesPlaces(kind: StoreKind, format: ResponseFormat) async throws {
        let server = try FlickrTestServer()
        let test = try EmptyGallery(kind)
        try await server.addFault(["method": "flickr.photos.search", "page": 3, "status": 500, "times": -1])
        let result = try await test.gallery.sync(client: serverClient(server, format: format), options: SyncOptions(pages: 5, perPage: 100))
        #expect(result.outcome == .failed)
        #expect(result.error?.contains("page 3") == true, "\(result.error ?? "")")
        #expect(result.photosNew == 200)
        #expect(result.placesResolved > 0)
        #expect(try !test.gallery.topRegions().isEmpty, "the photos of pages 1 and 2 are in their regions")
        #expect(try test.store.check().isEmpty)
    }

    @Test("Place lookups that hang end at the pass's deadline; the rest wait for the next pass", arguments: StoreKind.available, ResponseFormat.allCases)
    func hangingPlaceLookups(kind: StoreKind, format: ResponseFormat) async throws {
        let server = try FlickrTestServer()
        let test = try EmptyGallery(kind)
        try await server.addFault(["method": "flickr.places.getInfo", "delay": 60, "times": -1])
        var options = SyncOptions(pages: 1, perPage: 100)
        options.placeLookupDeadline = 1.5
        let result = try await test.gallery.sync(client: serverClient(server, format: format), options: options)
        #expect(result.placesLeftAtDeadline > 0 && result.placesPending == result.placesLeftAtDeadline)
        #expect(result.notes.contains { $0.contains("place lookups stopped") })
        #expect(throws: Never.self, "the sync lock is released") { try test.gallery.tryAcquireSyncLock().release() }
        try await server.clearFaults()
        let next = try await test.gallery.sync(client: serverClient(server, format: format), options: options)
        #expect(next.placesPending == 0 && next.placesResolved > 0)
    }

    @Test("Records without an id or owner are skipped and counted; the rest of the page is stored", arguments: StoreKind.available, ResponseFormat.allCases)
    func badRecords(kind: StoreKind, format: ResponseFormat) async throws {
        let server = try FlickrTestServer()
        let test = try EmptyGallery(kind)
        try await server.addFault(["method": "flickr.photos.search", "page": 1,
                                   "patch": [["index": 3, "set": ["id": ""]], ["index": 5, "remove": ["owner"]]]])
        let result = try await test.gallery.sync(client: serverClient(server, format: format), options: SyncOptions(pages: 1, perPage: 100))
        #expect(result.outcome == .newData)
        #expect(result.photosNew == 98 && result.recordsSkipped == 2)
        #expect(result.skippedRecords.first == "page 1: photo 4 has no id")
        #expect(result.skippedRecords.last.map { $0.hasPrefix("page 1: photo ") && $0.hasSuffix(" has no owner") } == true)
    }

    @Test("An id that is not a Flickr photo id (letters, a path, 33 digits) is skipped: every stored photo can be asked for", arguments: StoreKind.available, ResponseFormat.allCases)
    func oddIDs(kind: StoreKind, format: ResponseFormat) async throws {
        let server = try FlickrTestServer()
        let test = try EmptyGallery(kind)
        try await server.addFault(["method": "flickr.photos.search", "page": 1,
                                   "patch": [["index": 1, "set": ["id": "12ab"]], ["index": 2, "set": ["id": "../../etc"]],
                                             ["index": 3, "set": ["id": String(repeating: "9", count: 33)]],
                                             ["index": 4, "set": ["id": String(repeating: "8", count: 32)]]]])
        let result = try await test.gallery.sync(client: serverClient(server, format: format), options: SyncOptions(pages: 1, perPage: 100))
        #expect(result.photosNew == 97 && result.recordsSkipped == 3, "\(result.skippedRecords)")
        #expect(result.skippedRecords.allSatisfy { $0.hasSuffix("has an id that is not a Flickr photo id (1 to 32 digits)") }, "\(result.skippedRecords)")
        #expect(try test.gallery.photo(flickrID: String(repeating: "8", count: 32)) != nil)
    }

    @Test("An id too large for an integer is stored as sent, the same from JSON and from XML", arguments: StoreKind.available, ResponseFormat.allCases)
    func hugeID(kind: StoreKind, format: ResponseFormat) async throws {
        let server = try FlickrTestServer()
        let test = try EmptyGallery(kind)
        try await server.addFault(json: #"{"method": "flickr.photos.search", "page": 1, "patch": [{"index": 0, "set": {"id": 1180591620717411303424, "latitude": "1e400", "longitude": "999"}}]}"#)
        _ = try await test.gallery.sync(client: serverClient(server, format: format), options: SyncOptions(pages: 1, perPage: 10))
        let photo = try #require(try test.gallery.photo(flickrID: "1180591620717411303424"))
        #expect(photo.latitude == nil && photo.longitude == nil)
    }
}
