import Foundation
import Synchronization
import PostgreSQL
import PostgresStore
import Store
import TestSupport
import Testing
@testable import TopRegionsKit

/// A request's answer on one store: its ids in order, and its count.
private func answer(_ request: FetchRequest, on store: any StoreReading) throws -> (ids: [Int64], count: Int) {
    try store.read { (try $0.fetchIDs(request), try $0.count(request)) }
}

/// Random fetch requests over the gallery's photos: every kind of predicate (comparisons
/// of text, numbers and NULL, IN lists short and past the parameter budget, text matches,
/// keys across to-one relationships, NOT, AND, OR) and sort (binary and localizedStandard,
/// ascending and descending, nullable keys), with limits and offsets.
private struct RequestGenerator {
    var random: SeededGenerator
    let photos: [PhotoRecord]
    let regions: [RegionRecord]

    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    /// Part of a title: a prefix, a suffix or a middle, by Unicode scalars.
    mutating func fragment() -> String {
        let scalars = Array(pick(photos).title.unicodeScalars)
        guard scalars.count > 1 else { return String(String.UnicodeScalarView(scalars)) }
        let start = Int.random(in: 0..<scalars.count, using: &random)
        let end = Int.random(in: (start + 1)...scalars.count, using: &random)
        return String(String.UnicodeScalarView(scalars[start..<end]))
    }

    mutating func comparison() -> FetchPredicate.Comparison {
        pick([.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
    }

    mutating func leaf() -> FetchPredicate {
        switch Int.random(in: 0..<13, using: &random) {
        case 0: return .compare("title", comparison(), .text(chance(70) ? pick(photos).title : fragment()))
        case 1: return .compare("flickrNumber", comparison(), .integer(pick(photos).flickrNumber))
        case 2: return .compare("latitude", comparison(), chance(20) ? .null : .real(Double.random(in: -60...60, using: &random)))
        case 3: return .compare("region", pick([.equal, .notEqual]), pick(regions).id.map(SQLValue.integer) ?? .null)
        case 4: return .compare("region.name", comparison(), .text(pick(regions).name))
        case 5: return .compare("region.country", pick([.equal, .notEqual]), chance(30) ? .null : .text(pick(regions).country ?? "Mexico"))
        case 6:
            let count = chance(20) ? 600 : Int.random(in: 1...20, using: &random)
            return .isIn("flickrID", (0..<count).map { _ in .text(pick(photos).flickrID) })
        case 7:
            var ids: [SQLValue] = (0..<Int.random(in: 1...4, using: &random)).map { _ in pick(regions).id.map(SQLValue.integer) ?? .null }
            if chance(30) { ids.append(.null) }
            return .isIn("region", ids)
        case 8: return .text("title", pick([.contains, .beginsWith, .endsWith]), fragment(), caseInsensitive: false)
        case 9: return .isNull(pick(["uploaded", "photographer", "region.country", "farm", "photographer.name"]))
        case 10: return .compareKeys("title", comparison(), "subtitle")
        case 11: return .compareKeys("latitude", comparison(), "longitude")
        default: return .constant(chance(80))
        }
    }

    mutating func predicate(depth: Int = 0) -> FetchPredicate {
        guard depth < 2, chance(45) else { return leaf() }
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return .not(predicate(depth: depth + 1))
        case 1: return .and((0..<Int.random(in: 0...3, using: &random)).map { _ in predicate(depth: depth + 1) })
        default: return .or((0..<Int.random(in: 0...3, using: &random)).map { _ in predicate(depth: depth + 1) })
        }
    }

    mutating func sortKey() -> SortKey {
        let choices: [(String, Collation)] = [
            ("title", .localizedStandard), ("title", .binary), ("subtitle", .binary), ("photographer.name", .localizedStandard),
            ("region.name", .localizedStandard), ("region.country", .localizedStandard), ("region.country", .binary),
            ("uploaded", .binary), ("latitude", .binary), ("flickrNumber", .binary), ("farm", .binary), ("photographer", .binary),
        ]
        let (keyPath, collation) = pick(choices)
        return SortKey(keyPath, ascending: chance(50), collation: collation)
    }

    mutating func request() -> FetchRequest {
        var request = FetchRequest(PhotoRecord.self, predicate: chance(85) ? predicate() : nil,
                                   sortDescriptors: (0..<Int.random(in: 0...3, using: &random)).map { _ in sortKey() })
        if chance(30) { request.fetchLimit = Int.random(in: 0...80, using: &random) }
        if chance(20) { request.fetchOffset = Int.random(in: 0...40, using: &random) }
        return request
    }
}

@Suite("A gallery read from PostgreSQL answers as the same gallery in SQLite", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresReadingTests {
    @Test("Random fetch requests give the same photos in the same order, and the same count, on both stores (seed printed)")
    func randomRequestsAgree() async throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresReadingTests.randomRequestsAgree")
        let fixture = try await CopyFixture.copied()
        let sqlite = fixture.test.gallery
        let postgres = try PostgresGallery(location: fixture.database)
        defer { postgres.close() }
        let (photos, regions) = try sqlite.readableStore.read { (try $0.fetch(PhotoRecord.self), try $0.fetch(RegionRecord.self)) }
        var generator = RequestGenerator(random: SeededGenerator(seed: seed), photos: photos, regions: regions)
        var nonEmpty = 0
        for round in 0..<400 {
            let request = generator.request()
            let expected = try answer(request, on: sqlite.store)
            let actual: (ids: [Int64], count: Int)
            do { actual = try answer(request, on: postgres) } catch {
                Issue.record("round \(round), seed \(seed): \(request) failed on PostgreSQL: \(error)")
                continue
            }
            if !expected.ids.isEmpty { nonEmpty += 1 }
            #expect(actual.ids == expected.ids, "round \(round), seed \(seed): \(request)")
            #expect(actual.count == expected.count, "round \(round), seed \(seed): \(request)")
        }
        print("random requests on both stores, seed \(seed): \(nonEmpty) of 400 matched some photos")
        #expect(nonEmpty > 100, "the requests should mostly match something to compare")
    }

    @Test("Top regions, region photos, a photo, Recents, Favorites, users and region lookups read from PostgreSQL equal SQLite's")
    func galleryQueriesAgree() async throws {
        let fixture = try await CopyFixture.copied()
        let sqlite = fixture.test.gallery
        let postgres = try PostgresGallery(location: fixture.database)
        defer { postgres.close() }
        #expect(try postgres.topRegionRows(limit: 1000) == sqlite.topRegionRows(limit: 1000))
        #expect(try postgres.topRegionRows(limit: 7, byCountry: true) == sqlite.topRegionRows(limit: 7, byCountry: true))
        let regions = try sqlite.readableStore.read { try $0.fetch(RegionRecord.self, where: Key("photoCount") > 0) }
        #expect(regions.count > 3)
        for region in regions {
            let id = region.id ?? 0
            for byPhotographer in [false, true] {
                #expect(try postgres.photoRows(inRegion: id, byPhotographer: byPhotographer)
                        == sqlite.photoRows(inRegion: id, byPhotographer: byPhotographer), "\(region.placeID)")
            }
            #expect(try postgres.region(named: region.placeID).id == region.id)
            #expect(try outcome { try postgres.region(named: region.name).id }
                    == outcome { try sqlite.region(named: region.name).id })
        }
        for photo in try sqlite.photos(inRegion: regions[0].id ?? 0).prefix(5) {
            #expect(try postgres.photoDetail(flickrID: photo.flickrID) == sqlite.photoDetail(flickrID: photo.flickrID))
        }
        #expect(try postgres.photoDetail(flickrID: "1") == nil)
        #expect(try postgres.users().map(\.name) == sqlite.users().map(\.name))
        for user in try sqlite.users() {
            let postgresUser = try #require(try postgres.existingUser(named: user.name))
            #expect(try postgres.recentRows(for: postgresUser) == sqlite.recentRows(for: user))
            #expect(try postgres.favoriteRows(for: postgresUser) == sqlite.favoriteRows(for: user))
        }
        #expect(try !postgres.recentRows(for: try #require(try postgres.existingUser(named: "ada"))).isEmpty)
        // The same errors, suggestions included.
        for name in ["yucatan", "Nowhere at all", "san"] {
            #expect(outcome { try postgres.region(named: name).id } == outcome { try sqlite.region(named: name).id }, "\(name)")
        }
        #expect(outcome { try postgres.requireUser(named: "zed") } == outcome { try sqlite.requireUser(named: "zed") })
    }

    @Test("A database without a store, and one another program's schema, are refused with the gallery's errors")
    func refusals() throws {
        let empty = try PostgresTestServer.shared().makeDatabase("reading")
        #expect(throws: GalleryError.self) { try PostgresGallery(location: empty) }
        do { _ = try PostgresGallery(location: empty) } catch let error as GalleryError {
            #expect(error.kind == .noStore && error.message.contains("no store"), "\(error)")
        }
        let connection = try PostgresConnection(empty)
        defer { connection.close() }
        try connection.execute("CREATE TABLE photo (id bigint)")
        do { _ = try PostgresGallery(location: empty); Issue.record("a foreign table was read") } catch let error as GalleryError {
            #expect(error.kind == .storeUnavailable && error.message.contains("photo"), "\(error)")
        }
    }
}

/// What `body` returned, or the error it threw, as text: two stores' answers compared,
/// errors and their suggestions included.
private func outcome<T>(_ body: () throws -> T) -> String {
    do { return "\(try body())" } catch { return "error: \(error)" }
}

/// One change a person makes to their lists, by the ids they see.
enum ListChange: CustomStringConvertible {
    case view(String), add(String), remove(String), move(Int, Int)

    static func random(photos: [String], using random: inout SeededGenerator) -> ListChange {
        let photo = photos[Int.random(in: 0..<photos.count, using: &random)]
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<4: return .view(photo)
        case 4..<6: return .add(photo)
        case 6..<8: return .remove(photo)
        default: return .move(Int.random(in: 1...8, using: &random), Int.random(in: 1...8, using: &random))
        }
    }

    /// Applies the change to `gallery` for `user`; what it returned or threw, as text.
    func apply(to gallery: any GalleryWriting, for user: GalleryUser, at date: Date) -> String {
        outcome {
            switch self {
            case .view(let id): return "\(try gallery.view(flickrID: id, at: date, for: user))"
            case .add(let id): return "\(try gallery.addFavorite(flickrID: id, for: user))"
            case .remove(let id): return "\(try gallery.removeFavorite(flickrID: id, for: user))"
            case .move(let from, let to): return "\(try gallery.moveFavorite(fromPosition: from, toPosition: to, for: user))"
            }
        }
    }

    var description: String {
        switch self {
        case .view(let id): return "view \(id)"
        case .add(let id): return "favorites add \(id)"
        case .remove(let id): return "favorites remove \(id)"
        case .move(let from, let to): return "favorites move \(from) \(to)"
        }
    }
}

/// Whether a user's lists keep their rules: at most 20 Recents, each photo once; Favorites
/// each photo once, in places 0, 1, 2 … with none shared. Problems, as text.
private func listRuleBreaks(in store: any StoreReading, userID: Int64) throws -> [String] {
    try store.read { context in
        var problems: [String] = []
        let recents = try context.fetch(RecentRecord.self, where: Key("user") == userID)
        if recents.count > Gallery.recentsLimit { problems.append("\(recents.count) Recents") }
        if Set(recents.compactMap(\.photoID)).count != recents.count { problems.append("a photo twice in Recents") }
        let favorites = try context.fetch(FavoriteRecord.self, where: Key("user") == userID, sortedBy: [SortKey("displayOrder")])
        if Set(favorites.compactMap(\.photoID)).count != favorites.count { problems.append("a photo twice in Favorites") }
        if favorites.map(\.displayOrder) != Array(0..<Int64(favorites.count)) {
            problems.append("Favorites' places are \(favorites.map(\.displayOrder))")
        }
        return problems
    }
}

extension PostgresReadingTests {
    @Test("The same views and Favorites changes on both stores leave the same lists and give the same errors (seed printed)")
    func sameChangesAgree() async throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresReadingTests.sameChangesAgree")
        var random = SeededGenerator(seed: seed)
        let fixture = try await CopyFixture.copied()
        let sqlite = fixture.test.gallery
        let postgres = try PostgresGallery(location: fixture.database)
        defer { postgres.close() }
        let shown = try sqlite.readableStore.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.map(\.flickrID)
        let photos = Array(shown.prefix(30)) + ["1"]
        let users = ["local", "ada"]
        let start = Date(timeIntervalSince1970: 1_900_000_000)
        for round in 0..<200 {
            let change = ListChange.random(photos: photos, using: &random)
            let name = users[Int.random(in: 0..<users.count, using: &random)]
            let date = start.addingTimeInterval(Double(round))
            let expected = change.apply(to: sqlite, for: try sqlite.user(named: name), at: date)
            let actual = change.apply(to: postgres, for: try postgres.user(named: name), at: date)
            #expect(actual == expected, "round \(round), seed \(seed): \(change) for \(name)")
            let user = try postgres.user(named: name)
            #expect(try postgres.recentRows(for: user) == sqlite.recentRows(for: try sqlite.user(named: name)), "round \(round), seed \(seed): \(change)")
            #expect(try postgres.favoriteRows(for: user) == sqlite.favoriteRows(for: try sqlite.user(named: name)), "round \(round), seed \(seed): \(change)")
        }
        #expect(try Gallery.checkPostgres(fixture.database) == [])
    }

    @Test("Views and Favorites changes from many connections at once keep the lists' rules (seed printed)")
    func concurrentChangesKeepRules() async throws {
        let seed = testSeed("TOPREGIONS_TEST_SEED", test: "PostgresReadingTests.concurrentChangesKeepRules")
        let fixture = try await CopyFixture.copied()
        let shown = try fixture.test.gallery.readableStore.read { try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull) }.map(\.flickrID)
        let photos = Array(shown.prefix(40))
        let workers = 6
        let database = fixture.database
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var random = SeededGenerator(seed: seed &+ UInt64(worker))
            do {
                let gallery = try PostgresGallery(location: database)
                defer { gallery.close() }
                let user = try gallery.user(named: "local")
                for round in 0..<40 {
                    let change = ListChange.random(photos: photos, using: &random)
                    let result = change.apply(to: gallery, for: user, at: Date())
                    // Errors a person may meet (not a favorite, no such place) are fine; a
                    // store error is not.
                    if result.hasPrefix("error:"), !result.contains("not a favorite"), !result.contains("cannot move"), !result.contains("is empty") {
                        failures.withLock { $0.append("worker \(worker) round \(round): \(change): \(result)") }
                    }
                }
            } catch {
                failures.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [], "seed \(seed)")
        let postgres = try PostgresGallery(location: fixture.database)
        defer { postgres.close() }
        let local = try postgres.user(named: "local")
        #expect(try listRuleBreaks(in: postgres.readableStore, userID: local.id) == [], "seed \(seed)")
        #expect(try postgres.recentRows(for: local).count == Gallery.recentsLimit, "seed \(seed)")
        #expect(try Gallery.checkPostgres(fixture.database) == [])
    }
}

extension PostgresReadingTests {
    @Test("A row inserted with its id given moves PostgreSQL's identity past it: the next row given none gets a new id")
    func givenIDsMoveTheIdentity() async throws {
        let fixture = try await CopyFixture.copied()
        let postgres = try PostgresGallery(location: fixture.database)
        defer { postgres.close() }
        let given = try postgres.writableStore.write { transaction in
            try transaction.inserted(UserRecord(id: 10_000, name: "given", tokenHash: nil, createdAt: Date())).id
        }
        #expect(given == 10_000)
        let next = try postgres.writableStore.write { transaction in
            try transaction.execute("INSERT INTO \(transaction.dialect.identifier("User")) (name, createdAt) VALUES ('next', 0)")
            return try transaction.scalar("SELECT id FROM \(transaction.dialect.identifier("User")) WHERE name = 'next'")?.int64
        }
        #expect(next ?? 0 > 10_000)
    }
}
