import Foundation
import ResultsController
import Store
import Synchronization
import TestSupport
import Testing
@testable import TopRegionsKit

/// A list kept as a client keeps it: the first snapshot, then each batch applied with
/// UIKit's rules (deletes and move sources at old rows, then inserts and move destinations
/// at new rows, then redrawn rows).
private final class ReplayedList<Row: Sendable & Encodable & Equatable>: @unchecked Sendable {
    private let state = Mutex<(rows: [Row], batches: Int, token: Int64)>(([], 0, 0))
    private var subscription: ListSubscription?
    private let list: LiveList<Row>

    init(_ list: LiveList<Row>) {
        self.list = list
        subscription = list.subscribe { [weak self] message in
            guard let self, case .event(let delivery) = message else { return }
            self.state.withLock { state in
                switch delivery.event {
                case .snapshot(let token, let sections):
                    state.rows = sections.flatMap(\.rows)
                    state.token = token
                case .batch(let batch):
                    var rows = state.rows.enumerated().map { Optional($0.element) }
                    for row in batch.deletes.map(\.row) + batch.moves.map(\.from.row) { rows[row] = nil }
                    var kept = rows.compactMap { $0 }
                    let arriving = (batch.inserts.map { ($0.row, $0.value) } + batch.moves.map { ($0.to.row, $0.value) }).sorted { $0.0 < $1.0 }
                    for (row, value) in arriving { kept.insert(value, at: row) }
                    for update in batch.updates { kept[update.to.row] = update.value }
                    state.rows = kept
                    state.batches += 1
                    state.token = batch.token
                }
            }
        }
    }

    var rows: [Row] { state.withLock { $0.rows } }
    var batches: Int { state.withLock { $0.batches } }
    var token: Int64 { state.withLock { $0.token } }
}

@Suite("Every user's lists from one shared controller", .serialized)
struct UserListsTests {
    @Test("Random views, favorites and moves by several users: each user's shared list replays to what a fresh query and a list of its own show")
    func sharedListsMatchOwnLists() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["TOPREGIONS_TEST_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max))
        print("UserListsTests seed \(seed) (replay: TOPREGIONS_TEST_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let test = try TestGallery()
        _ = try await test.syncSample()
        let gallery = test.gallery
        let photos = try gallery.topRegions(limit: 5).flatMap { region in try gallery.photos(inRegion: region.id).prefix(12).map(\.flickrID) }
        let users = try (0..<4).map { try gallery.addUser(named: "user\($0)").user }
        let shared = UserLists(gallery: gallery)
        defer { shared.close() }
        let recents = try users.map { ReplayedList(try shared.recents(for: $0)) }
        let favorites = try users.map { ReplayedList(try shared.favorites(for: $0)) }
        let ownRecents = try users.map { ReplayedList(try gallery.liveRecents(for: $0)) }
        let ownFavorites = try users.map { ReplayedList(try gallery.liveFavorites(for: $0)) }
        var date = Date(timeIntervalSince1970: 1_700_000_000)
        for _ in 0..<320 {  // past 20 views each: the Recents window slides
            let who = Int.random(in: 0..<users.count, using: &random)
            let user = users[who]
            let photo = photos.randomElement(using: &random) ?? photos[0]
            date += 1
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5: _ = try gallery.view(flickrID: photo, at: date, for: user)
            case 5..<7: try gallery.addFavorite(flickrID: photo, for: user)
            case 7: try? gallery.removeFavorite(flickrID: photo, for: user)
            default:
                let count = try gallery.favoriteRows(for: user).count
                if count >= 2 {
                    try gallery.moveFavorite(fromPosition: Int.random(in: 1...count, using: &random), toPosition: Int.random(in: 1...count, using: &random), for: user)
                }
            }
        }
        let token = try gallery.store.currentToken()
        for (index, user) in users.enumerated() {
            let freshRecents = try gallery.recentRows(for: user)
            // A favorite's position is its row's place, which batches do not redraw when
            // other rows move: compared without it.
            let freshFavorites = try gallery.favoriteRows(for: user).map(\.id)
            #expect(await waitUntil(timeout: 10) { recents[index].rows == freshRecents && favorites[index].rows.map(\.id) == freshFavorites },
                    "seed \(seed): user \(index)'s shared lists")
            #expect(await waitUntil(timeout: 10) { ownRecents[index].rows == freshRecents && ownFavorites[index].rows.map(\.id) == freshFavorites })
            #expect(await waitUntil(timeout: 10) { recents[index].token == ownRecents[index].token || recents[index].token <= token })
        }
    }

    @Test("A view by one user sends a batch to that user's list only")
    func oneUsersCommitReachesOnlyTheirList() async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let gallery = test.gallery
        let photo = try #require(try gallery.photos(inRegion: try gallery.topRegions(limit: 1)[0].id).first?.flickrID)
        let users = try (0..<3).map { try gallery.addUser(named: "user\($0)").user }
        let shared = UserLists(gallery: gallery)
        defer { shared.close() }
        let lists = try users.map { ReplayedList(try shared.recents(for: $0)) }
        _ = try gallery.view(flickrID: photo, for: users[1])
        #expect(await waitUntil(timeout: 5) { lists[1].batches == 1 })
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(lists[0].batches == 0 && lists[2].batches == 0, "the others heard nothing")
        #expect(lists[1].rows.map(\.id) == [photo])
    }
}
