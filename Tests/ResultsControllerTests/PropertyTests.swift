import Foundation
import ResultsController
import Store
import StoreTestSupport
import Testing

/// One controller under test, with everything needed to check it after a transaction.
private final class Watched<R: Record>: @unchecked Sendable {
    let name: String
    let request: FetchRequest
    let sectionKeyPath: String?
    let controller: ResultsController<R>
    let log = DelegateLog()
    var before: Snapshot

    init(_ name: String, store: Store, request: FetchRequest, sectionKeyPath: String? = nil) throws {
        self.name = name
        self.request = request
        self.sectionKeyPath = sectionKeyPath
        controller = try ResultsController<R>(store: store, request: request, sectionKeyPath: sectionKeyPath)
        controller.delegate = log
        try controller.performFetch()
        before = controller.snapshot
    }

    /// Checks the batch (if any) of the last transaction; returns failures.
    func check(store: Store, context: String) throws -> [String] {
        var failures: [String] = []
        let truth = try freshSnapshot(R.self, store: store, request: request, sectionKeyPath: sectionKeyPath)
        let changes = log.changes
        if changes.count > 1 { failures.append("\(name): \(changes.count) batches for one commit") }
        if let change = changes.last {
            var model = TableModel(before)
            do {
                try model.apply(change.batch, after: truth)
            } catch {
                failures.append("\(name): table model refused the batch: \(error)\nbefore \(before)\nafter \(truth)\nbatch \(change.batch)")
            }
            var edited = TableModel(before)
            do {
                try edited.apply(change.edits)
                if edited.snapshot.sections.map(\.ids) != truth.sections.map(\.ids) {
                    failures.append("\(name): array edits end at \(edited.snapshot) instead of \(truth)")
                }
            } catch {
                failures.append("\(name): array edits failed: \(error)")
            }
            if change.snapshot != truth { failures.append("\(name): the batch's snapshot is not the fresh fetch") }
            if !log.inAppleOrder { failures.append("\(name): delegate calls out of order: \(log.calls)") }
            for move in change.batch.moves where move.from == move.to {
                failures.append("\(name): a move onto its own index path \(move.from)")
            }
            let ids = change.batch.rowDeletes.map(\.id) + change.batch.moves.map(\.id) + change.batch.updates.map(\.id)
            if Set(ids).count != ids.count { failures.append("\(name): an object is named twice among deletes, moves, updates") }
        } else if truth.sections.map(\.ids) != before.sections.map(\.ids) || truth.sections.map(\.name) != before.sections.map(\.name) {
            failures.append("\(name): no batch, but the results changed: \(before) → \(truth)")
        }
        if controller.snapshot != truth { failures.append("\(name): controller state \(controller.snapshot) is not the fresh fetch \(truth)") }
        before = truth
        log.reset()
        return failures.map { "\(context): \($0)" }
    }
}

private protocol Checkable { func check(store: Store, context: String) throws -> [String] }
extension Watched: Checkable {}

/// Random transactions over a small photo store.
private struct Mutator {
    var random: SeededGenerator
    let titles = ["IMG 2", "IMG 10", "img 1", "Éclair", "eclair", "Zebra", "apple", "東京", "🐱", "", "Apple", "Item 10", "Item 9"]
    let regionNames = ["Limburg", "limburg", "Punjab", "Quebec", "Île-de-France", "Zürich", "Tokyo"]
    let countries = ["A", "B", "C", nil]

    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func transaction(_ transaction: Transaction) throws {
        let operations = Int.random(in: 1...4, using: &random)
        for _ in 0..<operations {
            // Read again each time: an earlier operation may have deleted what was there.
            let photoIDs = try transaction.fetchIDs(FetchRequest(Photo.self, sortDescriptors: [SortKey("id")]))
            let regionIDs = try transaction.fetchIDs(FetchRequest(Region.self, sortDescriptors: [SortKey("id")]))
            let photographerIDs = try transaction.fetchIDs(FetchRequest(Photographer.self, sortDescriptors: [SortKey("id")]))
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25:
                try transaction.inserted(Photo(flickrID: UUID().uuidString, title: pick(titles), subtitle: "s",
                                               views: Int64.random(in: 0...9, using: &random),
                                               regionID: chance(85) && !regionIDs.isEmpty ? pick(regionIDs) : nil,
                                               photographerID: photographerIDs.isEmpty ? nil : pick(photographerIDs)))
            case 25..<35 where !photoIDs.isEmpty:
                try transaction.delete("Photo", ids: [pick(photoIDs)])
            case 35..<65 where !photoIDs.isEmpty:
                guard var photo = try transaction.fetchOne(Photo.self, id: pick(photoIDs)) else { continue }
                switch Int.random(in: 0..<5, using: &random) {
                case 0: photo.title = pick(titles)
                case 1: photo.views = Int64.random(in: 0...9, using: &random)
                case 2: photo.regionID = regionIDs.isEmpty || chance(10) ? nil : pick(regionIDs)
                case 3: photo.subtitle = UUID().uuidString  // a column no request sorts or filters on
                default:
                    // Two photos swap their views.
                    guard var other = try transaction.fetchOne(Photo.self, id: pick(photoIDs)) else { continue }
                    (photo.views, other.views) = (other.views, photo.views)
                    try transaction.update(other)
                }
                try transaction.update(photo)
            case 65..<72 where !regionIDs.isEmpty:
                guard var region = try transaction.fetchOne(Region.self, id: pick(regionIDs)) else { continue }
                region.name = pick(regionNames)
                if chance(30) { region.country = pick(countries) }
                try transaction.update(region)
            case 72..<76:
                try transaction.inserted(Region(name: pick(regionNames), country: pick(countries)))
            case 76..<79 where !regionIDs.isEmpty:
                try transaction.delete("Region", ids: [pick(regionIDs)])
            case 79..<81 where !photographerIDs.isEmpty && photoIDs.count > 30:
                try transaction.delete("Photographer", ids: [pick(photographerIDs)])
            case 81..<83:
                try transaction.inserted(Photographer(name: pick(["Jane", "Omar", "Jo", "Yuki"])))
            case 83..<92 where !photoIDs.isEmpty:
                let photoID = pick(photoIDs)
                let existing = try transaction.fetch(Recent.self, where: Key("photo") == photoID)
                if var recent = existing.first {
                    if chance(25) {
                        try transaction.delete(recent)
                    } else {
                        recent.lastViewed = Double(Int.random(in: 0...20, using: &random))
                        try transaction.update(recent)
                    }
                } else {
                    try transaction.inserted(Recent(lastViewed: Double(Int.random(in: 0...20, using: &random)), photoID: photoID))
                }
            case 92..<95 where !regionIDs.isEmpty:
                // A whole section goes at once.
                let regionID = pick(regionIDs)
                try transaction.deleteAll(FetchRequest(Photo.self, predicate: Key("region") == regionID))
            default:
                try transaction.inserted(Photo(flickrID: UUID().uuidString, title: pick(titles),
                                               views: Int64.random(in: 0...9, using: &random),
                                               regionID: regionIDs.isEmpty ? nil : pick(regionIDs)))
            }
        }
    }
}

@Suite("Property tests: random transactions", .serialized)
struct PropertyTests {
    static let transactions = 1_700  // × 6 controllers: over 10,000 checked batches
    static let seed: UInt64 = {
        if let text = ProcessInfo.processInfo.environment["RC_SEED"], let seed = UInt64(text) { return seed }
        return UInt64(Date().timeIntervalSince1970)
    }()

    @Test("Every batch is valid for UIKit, its edits and snapshot agree, and the state equals a fresh fetch")
    func randomTransactions() throws {
        let testStore = try TestStore()
        let store = testStore.store
        var mutator = Mutator(random: SeededGenerator(seed: Self.seed))
        // Some data to start from.
        try store.write { transaction in
            for name in ["Limburg", "Punjab", "Quebec"] { try transaction.inserted(Region(name: name, country: "A")) }
            for name in ["Jane", "Omar"] { try transaction.inserted(Photographer(name: name)) }
        }
        for _ in 0..<5 { try store.write { try mutator.transaction($0) } }
        let localized = Collation.localizedStandard
        let watched: [Checkable] = [
            try Watched<Photo>("by title", store: store,
                               request: FetchRequest(Photo.self, sortDescriptors: [SortKey("title", collation: localized)])),
            try Watched<Photo>("by region name", store: store,
                               request: FetchRequest(Photo.self, sortDescriptors: [SortKey("region.name", collation: localized),
                                                                                    SortKey("title", collation: localized)]),
                               sectionKeyPath: "region.name"),
            try Watched<Photo>("top views, limited", store: store,
                               request: FetchRequest(Photo.self, predicate: Key("views") >= 5,
                                                     sortDescriptors: [SortKey("views", ascending: false), SortKey("title")], fetchLimit: 8)),
            try Watched<Photo>("recents", store: store,
                               request: FetchRequest(Photo.self, predicate: Key("recent").isNotNull,
                                                     sortDescriptors: [SortKey("recent.lastViewed", ascending: false)])),
            try Watched<Photo>("views sections, filtered", store: store,
                               request: FetchRequest(Photo.self, predicate: Key("region.country") == "A" || Key("photographer.name").beginsWith("J"),
                                                     sortDescriptors: [SortKey("views"), SortKey("flickrID")]),
                               sectionKeyPath: "views"),
            try Watched<Region>("regions by country", store: store,
                                request: FetchRequest(Region.self, sortDescriptors: [SortKey("country", ascending: false),
                                                                                      SortKey("name", collation: .caseInsensitive)]),
                                sectionKeyPath: "country"),
        ]
        var failures: [String] = []
        for step in 0..<Self.transactions where failures.isEmpty {
            try store.write { try mutator.transaction($0) }
            for controller in watched {
                failures += try controller.check(store: store, context: "seed \(Self.seed) (replay with RC_SEED=\(Self.seed)), transaction \(step)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3).joined(separator: "\n"))")
        let photos = try store.read { try $0.count(FetchRequest(Photo.self)) }
        #expect(photos > 20, "the store should not have emptied itself")
    }
}
