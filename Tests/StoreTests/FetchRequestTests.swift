import Foundation
import Store
import TestSupport
import Testing

/// A small fixed data set, with the expected answers written out by hand.
private struct Gallery {
    let under: TestStoreOfKind
    var store: any ObservableStore { under.store }
    var ids: [String: Int64] = [:]
    var isPostgres: Bool { !(store is Store) }

    init(_ kind: StoreKind) throws {
        under = try TestStoreOfKind(kind)
        ids = try under.store.write { transaction in
            var ids: [String: Int64] = [:]
            let california = try transaction.inserted(Region(name: "California", country: "United States"))
            let limburgNL = try transaction.inserted(Region(name: "Limburg", country: "Netherlands"))
            let limburgBE = try transaction.inserted(Region(name: "Limburg", country: "Belgium"))
            let jane = try transaction.inserted(Photographer(name: "Jane"))
            let omar = try transaction.inserted(Photographer(name: "Omar"))
            let photos: [(String, String, Double?, Int64, Int64?, Int64?)] = [
                ("p1", "IMG 10", 100, 5, california.id, jane.id),
                ("p2", "IMG 2", 200, 7, california.id, omar.id),
                ("p3", "Éclair", nil, 0, limburgNL.id, jane.id),
                ("p4", "eclair", 300, 3, limburgBE.id, nil),
                ("p5", "Zebra", 400, 9, nil, omar.id),
                ("p6", "apple", 50, 1, limburgNL.id, omar.id),
            ]
            for (flickrID, title, uploaded, views, region, photographer) in photos {
                let photo = try transaction.inserted(Photo(flickrID: flickrID, title: title, uploaded: uploaded, views: views,
                                                           regionID: region, photographerID: photographer))
                ids[flickrID] = photo.id
            }
            try transaction.inserted(Recent(lastViewed: 30, photoID: ids["p2"]))
            try transaction.inserted(Recent(lastViewed: 10, photoID: ids["p5"]))
            try transaction.inserted(Recent(lastViewed: 20, photoID: ids["p3"]))
            return ids
        }
    }

    func flickrIDs(_ predicate: FetchPredicate?, _ sort: [SortKey] = [SortKey("flickrID")],
                   limit: Int? = nil, offset: Int = 0) throws -> [String] {
        let request = FetchRequest(Photo.self, predicate: predicate, sortDescriptors: sort, fetchLimit: limit, fetchOffset: offset)
        return try store.read { try $0.fetch(request, as: Photo.self) }.map(\.flickrID)
    }
}

/// On both stores: PostgreSQL refuses what it has no form for (caseInsensitive) by name.
@Suite("Fetch requests")
struct FetchRequestTests {
    @Test("Comparisons, IN, NULL tests and boolean composition", arguments: StoreKind.available)
    func predicates(on kind: StoreKind) throws {
        let gallery = try Gallery(kind)
        #expect(try gallery.flickrIDs(Key("views") > 4) == ["p1", "p2", "p5"])
        #expect(try gallery.flickrIDs(Key("views") >= 5 && Key("views") <= 7) == ["p1", "p2"])
        #expect(try gallery.flickrIDs(Key("views") < 2 || Key("title") == "Zebra") == ["p3", "p5", "p6"])
        #expect(try gallery.flickrIDs(!(Key("views") < 5)) == ["p1", "p2", "p5"])
        #expect(try gallery.flickrIDs(Key("flickrID").isIn(["p2", "p4", "nope"])) == ["p2", "p4"])
        #expect(try gallery.flickrIDs(Key("flickrID").isIn([String]())) == [])
        #expect(try gallery.flickrIDs(Key("uploaded").isNull) == ["p3"])
        #expect(try gallery.flickrIDs(Key("uploaded").isNotNull && Key("uploaded") < 150) == ["p1", "p6"])
        #expect(try gallery.flickrIDs(Key("region").isNull) == ["p5"])
        // As in Core Data, "not equal" matches objects whose value is NULL.
        #expect(try gallery.flickrIDs(Key("uploaded") != 100.0) == ["p2", "p3", "p4", "p5", "p6"])
        #expect(try gallery.flickrIDs(Key("uploaded") == SQLValue.null) == ["p3"])
        #expect(try gallery.flickrIDs(.constant(false)) == [])
        #expect(try gallery.flickrIDs(.and([])) == ["p1", "p2", "p3", "p4", "p5", "p6"])
    }

    @Test("A long IN list (past the parameter budget) still matches exactly", arguments: StoreKind.available)
    func longInList(on kind: StoreKind) throws {
        let gallery = try Gallery(kind)
        let values = (0..<5000).map { "x\($0)" } + ["p6", "p1"]
        #expect(try gallery.flickrIDs(Key("flickrID").isIn(values)) == ["p1", "p6"])
    }

    @Test("Text matching: prefix, contains, suffix, with and without case folding", arguments: StoreKind.available)
    func textMatching(on kind: StoreKind) throws {
        let gallery = try Gallery(kind)
        #expect(try gallery.flickrIDs(Key("title").beginsWith("IMG")) == ["p1", "p2"])
        #expect(try gallery.flickrIDs(Key("title").beginsWith("img")) == [])
        #expect(try gallery.flickrIDs(Key("title").contains("cla")) == ["p3", "p4"])
        #expect(try gallery.flickrIDs(Key("title").endsWith("ra")) == ["p5"])
        if gallery.isPostgres {
            #expect { try gallery.flickrIDs(Key("title").beginsWith("img", caseInsensitive: true)) } throws: { error in
                (error as? StoreError)?.kind == .invalidRequest && "\(error)".contains("PostgreSQL")
            }
        } else {
            #expect(try gallery.flickrIDs(Key("title").beginsWith("img", caseInsensitive: true)) == ["p1", "p2"])
            #expect(try gallery.flickrIDs(Key("title").contains("ÉCL", caseInsensitive: true)) == ["p3"])
            #expect(try gallery.flickrIDs(Key("title").endsWith("AIR", caseInsensitive: true)) == ["p3", "p4"])
        }
        #expect(try gallery.flickrIDs(Key("title").contains("%")) == [], "LIKE wildcards mean nothing here")
    }

    @Test("Values are bound, never spliced: quotes and SQL in a value are just text", arguments: StoreKind.available)
    func boundValues(on kind: StoreKind) throws {
        let gallery = try Gallery(kind)
        let hostile = "x' OR '1'='1"
        #expect(try gallery.flickrIDs(Key("title") == hostile) == [])
        try gallery.store.write { try $0.inserted(Photo(flickrID: "p7", title: hostile)) }
        #expect(try gallery.flickrIDs(Key("title") == hostile) == ["p7"])
    }

    @Test("Key paths cross to-one relationships, both where the key is held and on the inverse side", arguments: StoreKind.available)
    func relationshipKeyPaths(on kind: StoreKind) throws {
        let gallery = try Gallery(kind)
        #expect(try gallery.flickrIDs(Key("region.name") == "Limburg") == ["p3", "p4", "p6"])
        #expect(try gallery.flickrIDs(Key("region.country") == "Belgium") == ["p4"])
        #expect(try gallery.flickrIDs(Key("photographer.name") == "Omar" && Key("region.name") == "Limburg") == ["p6"])
        #expect(try gallery.flickrIDs(Key("recent").isNotNull) == ["p2", "p3", "p5"])
        let byRecent = try gallery.flickrIDs(Key("recent.lastViewed").isNotNull,
                                             [SortKey("recent.lastViewed", ascending: false)])
        #expect(byRecent == ["p2", "p3", "p5"])
        let recentByRegion = try gallery.store.read { context in
            try context.fetch(Recent.self, where: Key("photo.region.name") == "California")
        }
        #expect(recentByRegion.map(\.photoID) == [gallery.ids["p2"]])
    }

    @Test("Sorting: localized standard, case-insensitive and binary collations, descending, NULLs first", arguments: StoreKind.available)
    func sorting(on kind: StoreKind) throws {
        let gallery = try Gallery(kind)
        let localized = try gallery.flickrIDs(nil, [SortKey("title", collation: .localizedStandard)])
        // apple, eclair/Éclair (equal ignoring case? no: accents differ), IMG 2 before IMG 10, Zebra.
        let titles = try gallery.store.read { context in
            try context.fetch(FetchRequest(Photo.self, sortDescriptors: [SortKey("title", collation: .localizedStandard)]), as: Photo.self)
        }.map(\.title)
        let expected = ["apple", "eclair", "Éclair", "IMG 2", "IMG 10", "Zebra"].sorted { foundationLocalizedStandard($0, $1) == .orderedAscending }
        #expect(titles == expected)
        #expect(localized.firstIndex(of: "p2")! < localized.firstIndex(of: "p1")!, "IMG 2 sorts before IMG 10")
        let binary = try gallery.store.read { context in
            try context.fetch(FetchRequest(Photo.self, sortDescriptors: [SortKey("title")]), as: Photo.self)
        }.map(\.title)
        #expect(binary == ["IMG 10", "IMG 2", "Zebra", "apple", "eclair", "Éclair"])
        if !gallery.isPostgres {
            let caseless = try gallery.store.read { context in
                try context.fetch(FetchRequest(Photo.self, sortDescriptors: [SortKey("title", collation: .caseInsensitive)]), as: Photo.self)
            }.map(\.title)
            #expect(caseless.first == "apple" && caseless.last == "Zebra")
        }
        #expect(try gallery.flickrIDs(nil, [SortKey("uploaded")]).first == "p3", "NULL sorts first ascending")
        #expect(try gallery.flickrIDs(nil, [SortKey("uploaded", ascending: false)]).last == "p3", "and last descending")
        let byRegionThenViews = try gallery.flickrIDs(Key("region").isNotNull,
                                                      [SortKey("region.name"), SortKey("views", ascending: false)])
        #expect(byRegionThenViews == ["p2", "p1", "p4", "p6", "p3"])
    }

    @Test("Equal sort keys fall back to the primary key, so the order is always the same", arguments: StoreKind.available)
    func tiesBrokenByID(on kind: StoreKind) throws {
        let gallery = try Gallery(kind)
        let byRegionName = try gallery.flickrIDs(Key("region.name") == "Limburg", [SortKey("region.name")])
        #expect(byRegionName == ["p3", "p4", "p6"])
    }

    @Test("Limit, offset and count", arguments: StoreKind.available)
    func limitOffsetCount(on kind: StoreKind) throws {
        let gallery = try Gallery(kind)
        let sort = [SortKey("views", ascending: false)]
        #expect(try gallery.flickrIDs(nil, sort, limit: 2) == ["p5", "p2"])
        #expect(try gallery.flickrIDs(nil, sort, limit: 2, offset: 2) == ["p1", "p4"])
        #expect(try gallery.flickrIDs(nil, sort, offset: 4) == ["p6", "p3"])
        let counts = try gallery.store.read { context in
            [try context.count(FetchRequest(Photo.self)),
             try context.count(FetchRequest(Photo.self, predicate: Key("region.name") == "Limburg")),
             try context.count(FetchRequest(Photo.self, fetchLimit: 4)),
             try context.count(FetchRequest(Photo.self, fetchLimit: 4, fetchOffset: 3))]
        }
        #expect(counts == [6, 3, 4, 3])
        let ids = try gallery.store.read { try $0.fetchIDs(FetchRequest(Photo.self, sortDescriptors: sort, fetchLimit: 1)) }
        #expect(ids == [gallery.ids["p5"]])
    }

    @Test("Bad key paths and mismatched requests are refused with a message that names them", arguments: StoreKind.available)
    func invalidRequests(on kind: StoreKind) throws {
        let gallery = try Gallery(kind)
        #expect { try gallery.flickrIDs(Key("colour") == "red") } throws: { error in
            (error as? StoreError)?.kind == .invalidRequest && "\(error)".contains("colour")
        }
        #expect { try gallery.flickrIDs(Key("region.photos.title") == "x") } throws: { error in
            "\(error)".contains("to-many")
        }
        #expect { try gallery.flickrIDs(Key("region..name") == "x") } throws: { error in
            "\(error)".contains("empty component")
        }
        #expect {
            try gallery.store.read { try $0.fetch(FetchRequest(Region.self), as: Photo.self) }
        } throws: { "\($0)".contains("not Photo") }
    }
}
