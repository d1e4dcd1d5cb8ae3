import Flickr
import Foundation
import Store
import TestSupport
import Testing
@testable import TopRegionsKit

/// Keyset paging of the catalogue's lists, on both stores: pages together are the list,
/// and rows written between two pages neither repeat nor hide the rows that were there.
@Suite("Paging", .serialized)
struct PagingTests {
    @Test("Pages of regions together are every region in top-regions order, ranks continuing, past the top 50", arguments: StoreKind.available)
    func regions(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let store = try GalleryOnStore(test, on: kind)
        var rows: [RegionRow] = []
        var after: ListCursor?
        repeat {
            let page = try store.gallery.regionPage(limit: 10, after: after)
            #expect(page.rows.count <= 10)
            rows += page.rows
            after = page.next
        } while after != nil && rows.count < 10_000
        let expected = try Expected.topRegions(limit: 1_000)
        #expect(expected.count > Gallery.topRegionsLimit)
        #expect(rows.map(\.id) == expected.map(\.placeID))
        #expect(rows.map(\.rank) == Array(1...expected.count))
    }

    @Test("Pages of a region's photos together are its photos in title order", arguments: StoreKind.available)
    func photos(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let store = try GalleryOnStore(test, on: kind)
        for summary in try store.gallery.topRegions(limit: 3) {
            let region = try #require(try store.gallery.region(placeID: summary.placeID))
            let paged = try Self.allPhotoPages(region, limit: 7, in: store.gallery)
            #expect(paged == (try store.gallery.photos(inRegion: summary.id).map(\.flickrID)))
        }
    }

    @Test("Photos added and removed between two pages: no photo that stayed is given twice or left out", arguments: StoreKind.available)
    func stableUnderWrites(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let store = try GalleryOnStore(test, on: kind)
        let top = try #require(try store.gallery.topRegions(limit: 1).first)
        let region = try #require(try store.gallery.region(placeID: top.placeID))
        let before = try store.gallery.photos(inRegion: top.id).map(\.flickrID)
        let first = try store.gallery.photoPage(inRegion: region, limit: 10, after: nil)
        // Titles before the cursor and after it, as a sync would add them.
        var seen = first.rows.map(\.id)
        try store.gallery.writableStore.write { transaction in
            for (index, title) in ["!!! first of all", "0000", "zzzz last", "Mmm middle"].enumerated() {
                var photo = PhotoRecord(flickrID: "\(99_000_000_000 + index)", title: title, subtitle: "", photoDescription: "", uploaded: nil,
                                        downloaded: Date(), latitude: nil, longitude: nil, secret: nil, server: nil, farm: nil,
                                        originalSecret: nil, originalFormat: nil, photographerID: nil, placeID: nil, regionID: region.id)
                try transaction.insert(&photo)
            }
        }
        var after = first.next
        while let cursor = after {
            let page = try store.gallery.photoPage(inRegion: region, limit: 10, after: cursor)
            seen += page.rows.map(\.id)
            after = page.next
        }
        #expect(Set(seen).count == seen.count, "a photo was given twice")
        #expect(Set(before).isSubset(of: Set(seen)), "a photo that was there was left out")
        #expect(seen.contains("99000000002"), "a photo added after the cursor was not given")
    }

    @Test("A cursor of another list, or text that is no cursor, is refused and names what to do")
    func refusals() async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let next = try #require(try test.gallery.regionPage(limit: 5, after: nil).next)
        let top = try #require(try test.gallery.topRegions(limit: 1).first)
        let region = try #require(try test.gallery.region(placeID: top.placeID))
        #expect(throws: GalleryError.self) { try ListCursor(text: next.text, list: ListCursor.photosList(region)) }
        #expect(try ListCursor(text: next.text, list: ListCursor.regionsList) == next)
        for garbage in ["", "%%%", "e30", String(repeating: "Q", count: 10_000), "eyJsIjoicmVnaW9ucyIsInAiOi0xLCJ2IjpbXX0"] {
            #expect(throws: GalleryError.self, "cursor \(garbage.prefix(16))") { try ListCursor(text: garbage, list: ListCursor.regionsList) }
        }
    }

    private static func allPhotoPages(_ region: RegionRecord, limit: Int, in gallery: any GalleryServing) throws -> [String] {
        var ids: [String] = []
        var after: ListCursor?
        repeat {
            let page = try gallery.photoPage(inRegion: region, limit: limit, after: after)
            ids += page.rows.map(\.id)
            after = page.next
        } while after != nil && ids.count < 100_000
        return ids
    }
}
