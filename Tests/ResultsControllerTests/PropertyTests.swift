import Foundation
import ResultsController
import Store
import TestSupport
import Testing

/// A request a controller can be switched to.
private struct Variant {
    var request: FetchRequest
    var sectionKeyPath: String?
}

/// One controller under test, with the table a client would keep from its batches alone.
private final class Watched<R: Record>: @unchecked Sendable {
    let name: String
    let variants: [Variant]
    private(set) var current: Variant
    let controller: ResultsController<R>
    let log = DelegateLog()
    /// The table as a client holds it: the first snapshot, then every batch applied.
    var table: TableModel

    init(_ name: String, store: any ObservableStore, _ variants: [Variant]) throws {
        self.name = name
        // PostgreSQL has no caseInsensitive order (the store refuses it): those variants are SQLite's.
        let variants = store is Store ? variants : variants.filter { variant in
            !variant.request.sortDescriptors.contains { $0.collation == .caseInsensitive }
        }
        self.variants = variants
        current = variants[0]
        controller = try ResultsController<R>(store: store, request: current.request, sectionKeyPath: current.sectionKeyPath)
        controller.delegate = log
        try controller.performFetch()
        table = TableModel(controller.snapshot)
    }

    /// Switches to another of the variants (the property test's request changes).
    func switchRequest(using random: inout RandomTransactions) throws {
        current = random.pick(variants)
        try controller.setRequest(current.request, sectionKeyPath: current.sectionKeyPath)
    }

    /// Checks the batches since the last check; returns failures.
    func check(store: any ObservableStore, context: String) throws -> [String] {
        var failures: [String] = []
        let truth = try oracleSnapshot(store: store, request: current.request, sectionKeyPath: current.sectionKeyPath)
        for change in log.changes {
            var next = table
            do {
                try next.apply(change.batch)
            } catch {
                failures.append("\(name): table model refused the batch: \(error)\nbefore \(table.snapshot)\nbatch \(change.batch)")
                break
            }
            var edited = table
            do {
                try edited.apply(change.edits)
                if edited.sections.map(\.ids) != next.sections.map(\.ids) {
                    failures.append("\(name): array edits end at \(edited.snapshot) instead of \(next.snapshot)")
                }
            } catch {
                failures.append("\(name): array edits failed: \(error)")
            }
            if change.snapshot != next.snapshot { failures.append("\(name): the batch's snapshot is not the table the batch makes") }
            for move in change.batch.moves where move.from == move.to {
                failures.append("\(name): a move onto its own index path \(move.from)")
            }
            table = next
        }
        if !log.inAppleOrder { failures.append("\(name): delegate calls out of order: \(log.calls)") }
        if failures.isEmpty && table.snapshot != truth {
            failures.append("\(name): the table built from the batches is \(table.snapshot), a fresh fetch gives \(truth)")
        }
        if controller.snapshot != truth { failures.append("\(name): controller state \(controller.snapshot) is not the fresh fetch \(truth)") }
        table = TableModel(truth)
        log.reset()
        return failures.map { "\(context): \($0)" }
    }
}

private protocol Checkable: AnyObject {
    var controllerToken: Int64 { get }
    func waitUntilProcessed(through token: Int64) -> Bool
    func switchRequest(using random: inout RandomTransactions) throws
    func check(store: any ObservableStore, context: String) throws -> [String]
}

extension Watched: Checkable {
    var controllerToken: Int64 { controller.processedToken }
    func waitUntilProcessed(through token: Int64) -> Bool { controller.waitUntilProcessed(through: token, timeout: 10) }
}

/// The controllers under test: sections by canonically-equal names, NULL and empty section
/// keys, limits and offsets, relationships, each with requests it is switched between.
private func makeControllers(_ store: any ObservableStore) throws -> [Checkable] {
    let localized = Collation.localizedStandard
    func photos(_ sort: [SortKey], where predicate: FetchPredicate? = nil, limit: Int? = nil, offset: Int = 0, section: String? = nil) -> Variant {
        Variant(request: FetchRequest(Photo.self, predicate: predicate, sortDescriptors: sort, fetchLimit: limit, fetchOffset: offset),
                sectionKeyPath: section)
    }
    func regions(_ sort: [SortKey], limit: Int? = nil, offset: Int = 0, section: String? = nil) -> Variant {
        Variant(request: FetchRequest(Region.self, sortDescriptors: sort, fetchLimit: limit, fetchOffset: offset), sectionKeyPath: section)
    }
    return [
        try Watched<Photo>("by title", store: store, [
            photos([SortKey("title", collation: localized)]),
            photos([SortKey("title", ascending: false, collation: localized)]),
            photos([SortKey("title", collation: localized)], where: Key("views") >= 3),
        ]),
        try Watched<Photo>("by region name", store: store, [
            photos([SortKey("region.name", collation: localized), SortKey("title", collation: localized)], section: "region.name"),
            photos([SortKey("region.name", ascending: false, collation: localized), SortKey("title", collation: localized)], section: "region.name"),
            photos([SortKey("region.country"), SortKey("title", collation: localized)], section: "region.country"),
            photos([SortKey("region.name", collation: localized), SortKey("views")], where: Key("title") != "", section: "region.name"),
        ]),
        try Watched<Photo>("by region name, binary", store: store, [
            photos([SortKey("region.name"), SortKey("flickrID")], section: "region.name"),
            photos([SortKey("region.name", collation: .caseInsensitive), SortKey("flickrID")], section: "region.name"),
            photos([SortKey("region.name", ascending: false), SortKey("flickrID")]),
        ]),
        try Watched<Photo>("top views, limited", store: store, [
            photos([SortKey("views", ascending: false), SortKey("title")], where: Key("views") >= 5, limit: 8),
            photos([SortKey("views"), SortKey("title")], where: Key("views") >= 2, limit: 5, offset: 2),
        ]),
        try Watched<Photo>("recents", store: store, [
            photos([SortKey("recent.lastViewed", ascending: false)], where: Key("recent").isNotNull),
            photos([SortKey("recent.lastViewed", ascending: false)], where: Key("recent").isNotNull, limit: 20),
            photos([SortKey("recent.lastViewed")], where: Key("recent").isNotNull, section: "recent.lastViewed"),
        ]),
        try Watched<Photo>("views sections, filtered", store: store, [
            photos([SortKey("views"), SortKey("flickrID")], where: Key("region.country") == "A" || Key("photographer.name").beginsWith("J"), section: "views"),
            photos([SortKey("views", ascending: false), SortKey("flickrID")], where: nil, section: "views"),
        ]),
        try Watched<Photo>("by photographer", store: store, [
            photos([SortKey("photographer.name"), SortKey("title", collation: localized)], section: "photographer.name"),
            photos([SortKey("photographer.name", ascending: false), SortKey("title", collation: localized)], section: "photographer.name"),
        ]),
        try Watched<Region>("regions by country", store: store, [
            regions([SortKey("country", ascending: false), SortKey("name", collation: .caseInsensitive)], section: "country"),
            regions([SortKey("country"), SortKey("name", collation: .caseInsensitive)], section: "country"),
            regions([SortKey("name", collation: localized)], section: "name"),
        ]),
        try Watched<Region>("regions, a window", store: store, [
            regions([SortKey("name", collation: .caseInsensitive)], limit: 10, offset: 2),
            regions([SortKey("name", ascending: false)], limit: 6),
        ]),
    ]
}

/// A process that commits random transactions on the same file when told to.
private final class RemoteWriter {
    let process: FixtureProcess
    private var replies = 0

    init(path: String, seed: UInt64, name: String) throws {
        process = try FixtureProcess(["random", path, String(seed), name])
    }

    /// Commits `count` transactions in the other process and waits for it to finish.
    func commit(_ count: Int) throws -> Int {
        process.send("commit \(count)")
        guard let reply = process.line(after: replies), reply.hasPrefix("done ") else {
            throw StoreError(.recordNotFound, "the remote writer did not answer: \(process.standardError)")
        }
        replies += 1
        return count
    }

    func stop() {
        process.closeInput()
        _ = process.wait()
    }
}

@Suite("Property tests: random transactions", .serialized)
struct PropertyTests {
    /// Transactions committed at least, here and in other processes. They come in steps:
    /// one or more commits (here, in other processes, or both) or a request change, each
    /// step followed by a check of every controller.
    static let transactions = 5_000
    static let seed: UInt64 = {
        if let text = ProcessInfo.processInfo.environment["RC_SEED"], let seed = UInt64(text) { return seed }
        return UInt64(Date().timeIntervalSince1970)
    }()

    @Test("Every batch turns the table before it into the table after, whoever commits, and the state equals a fresh fetch",
          arguments: StoreKind.available)
    func randomTransactions(on kind: StoreKind) throws {
        print("PropertyTests (\(kind)): seed \(Self.seed) (replay with RC_SEED=\(Self.seed))")
        let testStore = try TestStoreOfKind(kind)
        let store = testStore.store
        let path = testStore.location
        var local = RandomTransactions(seed: Self.seed)
        try store.write { transaction in
            for name in ["Limburg", "Limburg", "Punjab", "Li\u{E8}ge", "Lie\u{300}ge", ""] {
                try transaction.inserted(Region(name: name, country: "A"))
            }
            for name in ["Jane", "Omar"] { try transaction.inserted(Photographer(name: name)) }
        }
        for _ in 0..<5 { try store.write { try local.transaction($0) } }
        let writers = [try RemoteWriter(path: path, seed: Self.seed &+ 1, name: "p1"),
                       try RemoteWriter(path: path, seed: Self.seed &+ 2, name: "p2")]
        defer { for writer in writers { writer.stop() } }
        let watched = try makeControllers(store)
        var failures: [String] = []
        var committed = 0, step = 0
        while committed < Self.transactions && failures.isEmpty {
            step += 1
            let context = "seed \(Self.seed) (replay with RC_SEED=\(Self.seed)), step \(step)"
            switch Int.random(in: 0..<100, using: &local.random) {
            case 0..<68:
                try store.write { try local.transaction($0) }
                committed += 1
            case 68..<88:
                // Other processes commit, and this one commits before the poller notices.
                for writer in writers where local.chance(70) { committed += try writer.commit(Int.random(in: 1...2, using: &local.random)) }
                try store.write { try local.transaction($0) }
                committed += 1
            case 88..<91:
                committed += try local.pick(writers).commit(1)
            default:
                try local.pick(watched).switchRequest(using: &local)
            }
            let token = try store.currentToken()
            for controller in watched where !controller.waitUntilProcessed(through: token) {
                failures.append("\(context): a controller stopped at token \(controller.controllerToken) of \(token)")
            }
            for controller in watched { failures += try controller.check(store: store, context: context) }
        }
        print("PropertyTests (\(kind)): \(committed) transactions in \(step) steps")
        #expect(failures.isEmpty, "\(failures.prefix(3).joined(separator: "\n"))")
        let photos = try store.read { try $0.count(FetchRequest(Photo.self)) }
        #expect(photos > 20, "the store should not have emptied itself")
    }
}
