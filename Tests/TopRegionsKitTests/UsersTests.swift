import CSQLite
import Foundation
import SampleDataSupport
import Store
import TestSupport
import Testing
@testable import TopRegionsKit

@Suite("Users: their own Recents and Favorites, API tokens, and the migration of a store's single lists")
struct UsersTests {
    @Test("Two users' Recents and Favorites are independent: 20 each, and removing one leaves the other's", arguments: StoreKind.available)
    func independentLists(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample(SyncOptions(pages: 1, perPage: 100))
        let store = try GalleryOnStore(test, on: kind)
        let gallery = store.gallery
        let ids = try gallery.readableStore.read {
            try $0.fetchIDs(FetchRequest(PhotoRecord.self, predicate: Key("region").isNotNull, sortDescriptors: [SortKey("id")], fetchLimit: 30))
        }
        let alice = try gallery.addUser(named: "alice").user
        let bob = try gallery.addUser(named: "bob").user
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for (offset, id) in ids.prefix(25).enumerated() {
            try gallery.recordView(photoID: id, at: start.addingTimeInterval(Double(offset)), for: alice)
        }
        for (offset, id) in ids.suffix(5).enumerated() {
            try gallery.recordView(photoID: id, at: start.addingTimeInterval(Double(offset)), for: bob)
        }
        try gallery.addFavorite(photoID: ids[0], for: bob)
        #expect(try gallery.recents(for: alice).compactMap(\.photo.id) == ids[5..<25].reversed())
        #expect(try gallery.recents(for: bob).compactMap(\.photo.id) == ids.suffix(5).reversed())
        #expect(try gallery.favorites(for: alice).isEmpty)
        #expect(try gallery.favorites(for: bob).compactMap(\.id) == [ids[0]])
        try gallery.removeUser(named: "alice")
        #expect(try gallery.recents(for: bob).count == 5)
        let aliceRows = try store.rows("SELECT count(*) FROM Recent WHERE user_id = ?", [.integer(alice.id)]).first?[0].int64
        #expect(aliceRows == 0, "a removed user's Recents go with them")
        #expect { try gallery.recordView(photoID: ids[0], for: alice) } throws: { ($0 as? GalleryError)?.kind == .notFound }
    }

    @Test("A token authenticates its user only; a rotated token stops working; names are checked and unique", arguments: StoreKind.available)
    func tokens(on kind: StoreKind) throws {
        let test = try TestGallery()
        let store = try GalleryOnStore(test, on: kind)
        let gallery = store.gallery
        let (alice, token) = try gallery.addUser(named: "alice")
        let (_, bobToken) = try gallery.addUser(named: "bob")
        #expect(token.hasPrefix("trk_") && token.count == 47)
        #expect(try gallery.authenticate(token: token)?.id == alice.id)
        #expect(try gallery.authenticate(token: bobToken)?.name == "bob")
        var wrong = Array(token)
        wrong[10] = wrong[10] == "A" ? "B" : "A"
        #expect(try gallery.authenticate(token: String(wrong)) == nil)
        #expect(try gallery.authenticate(token: "") == nil)
        #expect(try gallery.authenticate(token: "trk_") == nil)
        let stored = try gallery.readableStore.read { try $0.scalar("SELECT tokenHash FROM \($0.dialect.identifier("User")) WHERE name = 'alice'")?.string }
        #expect(stored?.count == 64 && stored != token, "only the token's hash is kept")
        let rotated = try gallery.rotateToken(forUserNamed: "alice")
        #expect(try gallery.authenticate(token: token) == nil)
        #expect(try gallery.authenticate(token: rotated)?.id == alice.id)
        #expect { try gallery.addUser(named: "alice") } throws: { ($0 as? GalleryError)?.kind == .alreadyExists }
        for bad in ["", "Alice", "-x", "a b", "é", String(repeating: "a", count: 65), "../x"] {
            #expect(throws: GalleryError.self, "\(bad)") { try gallery.addUser(named: bad) }
        }
        #expect(try gallery.users().map(\.name) == ["alice", "bob", GalleryUser.localName], "local exists from the start")
    }

    @Test("A store written before users keeps its Recents and Favorites, in order, as the local user's")
    func migrationKeepsLists() throws {
        let directory = try TemporaryDirectory("v3-store")
        let path = directory.path("store.sqlite")
        let script = try String(contentsOf: Repository.root.appendingPathComponent("Tests/Fixtures/Stores/v3-with-lists.sql"), encoding: .utf8)
        try executeScript(script, at: path)
        let recentsBefore = try flickrIDs("SELECT p.flickrID FROM Recent r JOIN Photo p ON p.id = r.photo_id ORDER BY r.lastViewed DESC, r.id", at: path)
        let favoritesBefore = try flickrIDs("SELECT p.flickrID FROM Favorite f JOIN Photo p ON p.id = f.photo_id ORDER BY f.displayOrder", at: path)
        #expect(recentsBefore.count == 4 && favoritesBefore.count == 4)

        let gallery = try Gallery(path: path)
        defer { gallery.close() }
        let local = try gallery.user(named: GalleryUser.localName)
        #expect(try gallery.recentRows(for: local).map(\.id) == recentsBefore)
        #expect(try gallery.favoriteRows(for: local).map(\.id) == favoritesBefore)
        #expect(try gallery.users().map(\.name) == [GalleryUser.localName])
        #expect(try gallery.check().isEmpty)
        // The lists keep working: a new view goes to the top, once.
        let other = try #require(try gallery.store.read { try $0.scalar("SELECT flickrID FROM Photo WHERE id NOT IN (SELECT photo_id FROM Recent) LIMIT 1")?.string })
        _ = try gallery.view(flickrID: other, for: local)
        #expect(try gallery.recentRows(for: local).map(\.id) == [other] + recentsBefore)
    }

    private func executeScript(_ script: String, at path: String) throws {
        var database: OpaquePointer?
        guard sqlite3_open(path, &database) == SQLITE_OK, let database else { throw StoreTestError("cannot open \(path)") }
        defer { sqlite3_close(database) }
        // The store's own collation, so that the fixture's indexes are in the store's order.
        sqlite3_create_collation_v2(database, "localizedStandard", SQLITE_UTF8, nil, { _, leftCount, left, rightCount, right in
            let text = { (bytes: UnsafeRawPointer?, count: Int32) in
                String(decoding: UnsafeRawBufferPointer(start: bytes, count: Int(count)), as: UTF8.self)
            }
            switch Collation.localizedStandard.compare(text(left, leftCount), text(right, rightCount)) {
            case .orderedAscending: return -1
            case .orderedSame: return 0
            case .orderedDescending: return 1
            }
        }, nil)
        guard sqlite3_exec(database, script, nil, nil, nil) == SQLITE_OK else {
            throw StoreTestError("the fixture's SQL failed: \(String(cString: sqlite3_errmsg(database)))")
        }
    }

    private func flickrIDs(_ sql: String, at path: String) throws -> [String] {
        var database: OpaquePointer?
        guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let database else { throw StoreTestError("cannot open \(path)") }
        defer { sqlite3_close(database) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK else { throw StoreTestError("cannot prepare \(sql)") }
        defer { sqlite3_finalize(statement) }
        var ids: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            if let text = sqlite3_column_text(statement, 0) { ids.append(String(cString: text)) }
        }
        return ids
    }
}

struct StoreTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
