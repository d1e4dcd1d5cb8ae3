import Flickr
import Foundation
import Store
import TestSupport
import Testing
@testable import TopRegionsKit

/// Search over SampleData, on both stores, against hits computed here from the raw
/// responses: a photo matches when each word of the query begins a word of its title,
/// description, photographer, region or country (case and accents aside); title matches
/// come first, then the rest, each newest stored first.
@Suite("Search", .serialized)
struct SearchTests {
    /// Words of a text as a person would cut them: folded, split at what is not a letter or digit.
    private static func words(_ text: String) -> [String] {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    private static func holdsEvery(_ terms: [String], _ words: [String]) -> Bool {
        terms.allSatisfy { term in words.contains { $0.hasPrefix(term) } }
    }

    /// The photo row ids a search must give, in order, computed from the raw responses (text)
    /// and the store's row ids and photographer names.
    private static func expectedHits(_ query: String, in gallery: any GalleryServing) throws -> [Int64] {
        let terms = words(query)
        let regionOfPlace = try Expected.regionOfPlace()
        let records = try gallery.readableStore.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }
        let names = try gallery.readableStore.read { context in
            Dictionary(try context.fetch(PhotographerRecord.self).compactMap { record in record.id.map { ($0, record.name) } },
                       uniquingKeysWith: { first, _ in first })
        }
        let rowOf = Dictionary(records.compactMap { record in record.id.map { (record.flickrID, (id: $0, photographer: record.photographerID)) } },
                               uniquingKeysWith: { first, _ in first })
        var inTitle: [Int64] = [], elsewhere: [Int64] = []
        for photo in try Expected.photos() {
            guard let row = rowOf["\(photo["id"] ?? "")"], let placeID = photo["place_id"] as? String,
                  let (_, region, country) = regionOfPlace[placeID] else { continue }
            let title = Expected.title(photo)
            let description = ((photo["description"] as? [String: Any])?["_content"] as? String) ?? ""
            let others = [description, row.photographer.flatMap { names[$0] } ?? "", region, country ?? ""].joined(separator: " ")
            if holdsEvery(terms, words(title)) { inTitle.append(row.id) }
            else if holdsEvery(terms, words(title + " " + others)) { elsewhere.append(row.id) }
        }
        return inTitle.sorted(by: >) + elsewhere.sorted(by: >)
    }

    /// Every page of a search, `limit` photos at a time, as row ids.
    private static func allPages(_ query: String, limit: Int, in gallery: any GalleryServing, region: RegionRecord? = nil) throws -> [Int64] {
        var ids: [Int64] = []
        var after: String?
        for _ in 0..<1_000 {
            let page = try gallery.search(query, region: region, limit: limit, after: after)
            #expect(page.photos.count <= limit)
            ids += try page.photos.map { photo in
                try #require(try gallery.readableStore.read { try $0.fetch(PhotoRecord.self, where: Key("flickrID") == photo.photo.id).first?.id })
            }
            guard let next = page.next else { return ids }
            after = next.text
        }
        Issue.record("the search never ended")
        return ids
    }

    static let queries = ["eclair", "ÉCLAIR", "sunset", "sunset quebec", "quebec sunset", "東京", "street food", "item", "canada", "ka", "zzzz"]

    @Test("Every page together is exactly the expected hits, in order, on either store", arguments: StoreKind.available)
    func hitsAndOrder(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let store = try GalleryOnStore(test, on: kind)
        for query in Self.queries {
            let expected = try Self.expectedHits(query, in: store.gallery)
            let found = try Self.allPages(query, limit: 7, in: store.gallery)
            #expect(found == expected, "query \(query)")
            #expect(Set(found).count == found.count, "query \(query): a photo given twice")
        }
        // The planted cases: accents and case do not matter, and words match in any order.
        #expect(try Self.allPages("eclair", limit: 50, in: store.gallery).count >= 2)
        #expect(try Self.allPages("sunset quebec", limit: 50, in: store.gallery) == (try Self.allPages("quebec sunset", limit: 50, in: store.gallery)))
    }

    @Test("SQLite and PostgreSQL give the same hits in the same order")
    func sameOnBothStores() async throws {
        guard StoreKind.available.contains(.postgresql) else { return }
        let test = try TestGallery()
        _ = try await test.syncSample()
        let postgres = try GalleryOnStore(test, on: .postgresql)
        for query in Self.queries {
            let sqlite = try test.gallery.search(query, limit: 1_000)
            let other = try postgres.gallery.search(query, limit: 1_000)
            #expect(sqlite.photos.map(\.photo.id) == other.photos.map(\.photo.id), "query \(query)")
            #expect(sqlite.regions == other.regions, "query \(query)")
        }
    }

    @Test("A region's name finds the region, and a region filter keeps its photos only", arguments: StoreKind.available)
    func regions(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let store = try GalleryOnStore(test, on: kind)
        let results = try store.gallery.search("quebec", limit: 5)
        let quebec = try #require(try Expected.regions().values.first { $0.name == "Quebec" })
        #expect(results.regions.map(\.id) == [quebec.placeID])
        let region = try #require(try store.gallery.region(placeID: quebec.placeID))
        let within = try Self.allPages("sunset", limit: 9, in: store.gallery, region: region)
        let everywhere = Set(try Self.allPages("sunset", limit: 200, in: store.gallery))
        let regionPhotos = try store.gallery.readableStore.read { try $0.fetchIDs(FetchRequest(PhotoRecord.self, predicate: Key("region") == region.id ?? -1)) }
        #expect(!within.isEmpty)
        #expect(Set(within) == everywhere.intersection(regionPhotos))
    }

    @Test("A cursor of another search, or text that is no cursor, is refused with a sentence", arguments: StoreKind.available)
    func cursors(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let store = try GalleryOnStore(test, on: kind)
        let next = try #require(try store.gallery.search("sunset", limit: 3).next)
        #expect(throws: GalleryError.self) { try store.gallery.search("eclair", limit: 3, after: next.text) }
        for garbage in ["", "x", "!!!", String(repeating: "A", count: 5_000), "eyJsIjoicmVnaW9ucyJ9"] {
            #expect(throws: GalleryError.self, "cursor \(garbage.prefix(20))") { try store.gallery.search("sunset", limit: 3, after: garbage) }
        }
        #expect(try store.gallery.search("  ¿¡ ", limit: 3).photos.isEmpty)
    }

    @Test("Terms fold case, accents and widths, and split at anything not a letter, digit or mark")
    func terms() {
        #expect(SearchTerms.terms("Liège, QUÉBEC") == ["liege", "quebec"])
        #expect(SearchTerms.terms("Straße-in_Köln 2026!") == ["straße", "in", "koln", "2026"] || SearchTerms.terms("Straße-in_Köln 2026!") == ["strasse", "in", "koln", "2026"])
        #expect(SearchTerms.terms("ＦＵＬＬ width") == ["full", "width"])
        #expect(SearchTerms.terms("東京の夜 12") == ["東京の夜", "12"])
        #expect(SearchTerms.query("a b a c d e f g h i j") == ["a", "b", "c", "d", "e", "f", "g", "h"])
        #expect(SearchTerms.column("Sunset", nil, "sunset over", "Over") == "sunset over")
    }
}

/// Credit and the store migration that brought it and search, on both stores.
@Suite("Credit and upgrades", .serialized)
struct CreditTests {
    @Test("Every photo names its licence, its photographer's page and its own Flickr page, as the responses say", arguments: StoreKind.available)
    func credit(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let store = try GalleryOnStore(test, on: kind)
        let shown = Set(try Expected.regions().values.flatMap(\.photos))
        var checked = 0
        for photo in try Expected.photos() {
            let id = "\(photo["id"] ?? "")"
            guard shown.contains(id), let detail = try store.gallery.photoDetail(flickrID: id) else { continue }
            let licence = photo["license"].map { "\($0)" }
            #expect(detail.photo.license.id == licence, "photo \(id)")
            let names = ["1": "CC BY-NC-SA 2.0", "2": "CC BY-NC 2.0", "4": "CC BY 2.0", "7": "No known copyright restrictions"]
            #expect(detail.photo.license.name == (licence.flatMap { names[$0] } ?? "Licence unknown"), "photo \(id)")
            checked += 1
        }
        #expect(checked > 1_000)
        // An owner with an alias is linked by it; one without, by the owner id.
        let photos = try Expected.photos()
        let aliased = try #require(photos.first { ($0["pathalias"] as? String).map { !$0.isEmpty } == true && shown.contains("\($0["id"] ?? "")") })
        let plain = try #require(photos.first { ($0["pathalias"] as? String) == "" && shown.contains("\($0["id"] ?? "")") })
        for (photo, piece) in [(aliased, aliased["pathalias"] as? String ?? ""), (plain, plain["owner"] as? String ?? "")] {
            let id = "\(photo["id"] ?? "")"
            let detail = try #require(try store.gallery.photoDetail(flickrID: id))
            let owner = piece.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "@-_."))) ?? piece
            #expect(detail.photo.photographerURL?.absoluteString == "https://www.flickr.com/photos/\(owner)/")
            #expect(detail.photo.pageURL?.absoluteString == "https://www.flickr.com/photos/\(owner)/\(id)/")
        }
    }

    @Test("A store made before credit and search keeps every list; licences are unknown, search finds its photos")
    func upgradeSQLite() async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let photo = try #require(try test.gallery.topRegions().first.flatMap { try test.gallery.photos(inRegion: $0.id).first })
        let local = try test.gallery.user(named: GalleryUser.localName)
        _ = try test.gallery.view(flickrID: photo.flickrID, for: local)
        try test.gallery.addFavorite(flickrID: photo.flickrID, for: local)
        let path = try #require(test.gallery.path)
        test.gallery.close()
        // As the previous version left it: without the columns, the index or the migrations.
        let old = try Store(path: path, schema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator)
        try await old.write { transaction in
            for statement in ["DROP TRIGGER photo_search_insert", "DROP TRIGGER photo_search_delete", "DROP TRIGGER photo_search_update",
                              "DROP TRIGGER region_search_insert", "DROP TRIGGER region_search_delete", "DROP TRIGGER region_search_update",
                              "DROP TABLE RegionSearch", "ALTER TABLE Region DROP COLUMN searchName",
                              "DROP TABLE PhotoSearch", "ALTER TABLE Photo DROP COLUMN searchTitle", "ALTER TABLE Photo DROP COLUMN searchText",
                              "ALTER TABLE Photo DROP COLUMN license", "ALTER TABLE Photographer DROP COLUMN pathAlias",
                              "DELETE FROM store_migrations WHERE name IN ('topregions.v5.credit', 'topregions.v6.search')"] {
                try transaction.execute(statement)
            }
        }
        old.close()
        let upgraded = try Gallery(path: path)
        defer { upgraded.close() }
        let user = try upgraded.user(named: GalleryUser.localName)
        #expect(try upgraded.recents(for: user).map(\.photo.flickrID) == [photo.flickrID])
        #expect(try upgraded.favorites(for: user).map(\.flickrID) == [photo.flickrID])
        let detail = try #require(try upgraded.photoDetail(flickrID: photo.flickrID))
        #expect(detail.photo.license.id == nil && detail.photo.license.name == "Licence unknown")
        let hits = try upgraded.search(photo.title, limit: 1_000).photos.map(\.photo.id)
        #expect(hits.contains(photo.flickrID))
        let region = try #require(try upgraded.topRegions(limit: 1).first)
        #expect(try upgraded.search(region.name, limit: 1).regions.map(\.id).contains(region.placeID))
        #expect(try upgraded.check().isEmpty)
    }

    @Test("A PostgreSQL store made before credit and search is upgraded by migrate, its photos found")
    func upgradePostgres() async throws {
        guard StoreKind.available.contains(.postgresql) else { return }
        let test = try TestGallery()
        _ = try await test.syncSample()
        let store = try GalleryOnStore(test, on: .postgresql)
        let location = try #require(store.location)
        for statement in ["DROP INDEX photo_search_all", "DROP INDEX photo_search_title", "DROP INDEX region_search",
                          "ALTER TABLE region DROP COLUMN searchname", "ALTER TABLE photo DROP COLUMN searchtitle",
                          "ALTER TABLE photo DROP COLUMN searchtext", "ALTER TABLE photo DROP COLUMN license",
                          "ALTER TABLE photographer DROP COLUMN pathalias",
                          "DELETE FROM store_migrations WHERE name IN ('topregions.v5.credit', 'topregions.v6.search')"] {
            try store.execute(statement)
        }
        #expect(throws: Error.self) { try PostgresGallery(location: location).close() }
        #expect(try Gallery.migratePostgres(location) == .upgraded)
        let upgraded = try PostgresGallery(location: location)
        defer { upgraded.close() }
        let hits = try upgraded.search("sunset", limit: 1_000).photos.map(\.photo.id)
        #expect(hits == (try test.gallery.search("sunset", limit: 1_000).photos.map(\.photo.id)))
        #expect(try upgraded.search("quebec", limit: 1).regions.map(\.name) == ["Quebec"])
        #expect(try Gallery.checkPostgres(location).isEmpty)
    }
}
