import Foundation
import ResultsController
import Store

/// `frc.update`: the results controller's incremental update for k changed objects among n
/// results, against a full refetch plus Swift's `CollectionDifference`, in the same run.
enum ControllerBenchmarks {
    static let scenarios = [
        Scenario(name: "frc.update", summary: "incremental controller update (k of n changed) vs refetch + CollectionDifference") { quick in
            try run(sizes: quick ? [20_000] : [100_000, 1_000_000], ks: quick ? [1, 100] : [1, 100, 10_000])
        },
        Scenario(name: "frc.cache", summary: "performFetch from the controller's cache vs from the query (localized title sort)") { quick in
            try cache(n: quick ? 10_000 : 100_000)
        },
    ]

    static var entity: Entity { Item.entity }

    struct Item: TableRecord {
        static let table = RecordTable<Item>("BenchItem", columns: [.column("score", \.score), .column("bucket", \.bucket)],
                                             indexes: [TableIndex("bench_item_order", columns: ["bucket", "score"])])
        var id: Int64?
        var score: Int64 = 0
        var bucket: Int64 = 0
        init() {}
        init(id: Int64? = nil, score: Int64, bucket: Int64) {
            self.id = id
            self.score = score
            self.bucket = bucket
        }
    }

    static func run(sizes: [Int], ks: [Int]) throws -> [Figure] {
        var figures: [Figure] = []
        for n in sizes {
            try withScratchDirectory { directory in
                let store = try Store(path: directory.appendingPathComponent("frc.sqlite").path, schema: Schema([entity]),
                                      migrator: .creating([entity]))
                var random = BenchRandom(state: UInt64(n))
                try store.write { transaction in
                    for _ in 0..<n {
                        let score = Int64.random(in: 0..<1_000_000_000, using: &random)
                        try transaction.inserted(Item(score: score, bucket: score % 100))
                    }
                }
                for sections in [1, 100] {
                    figures += try measureUpdates(store: store, n: n, sections: sections, ks: ks, random: &random)
                }
            }
        }
        return figures
    }

    private static func measureUpdates(store: Store, n: Int, sections: Int, ks: [Int], random: inout BenchRandom) throws -> [Figure] {
        let sortKeys = sections == 1 ? [SortKey("score")] : [SortKey("bucket"), SortKey("score")]
        let request = FetchRequest(Item.self, sortDescriptors: sortKeys)
        let controller = try ResultsController<Item>(store: store, request: request, sectionKeyPath: sections == 1 ? nil : "bucket")
        controller.includesSnapshots = false
        let rssBefore = residentMegabytes()
        try controller.performFetch()
        let rssAfter = residentMegabytes()
        let count = controller.numberOfObjects
        var figures = [Figure(scenario: "frc.memory", n: count, seconds: 0, extra: [
            "sections": sections, "bytesPerResult": Double(controller.approximateBytes) / Double(max(count, 1)),
            "rssDeltaBytesPerResult": (rssAfter - rssBefore) * 1_048_576 / Double(max(count, 1)),
        ])]
        for k in ks {
            // A third inserts, a third deletes, a third sort-key changes.
            let ids = try store.read { try $0.fetchIDs(FetchRequest(Item.self, sortDescriptors: [SortKey("id")], fetchLimit: 3 * k + 10)) }
            let before = controller.fetchedIDs
            try store.write { transaction in
                for index in 0..<k {
                    switch index % 3 {
                    case 0:
                        let score = Int64.random(in: 0..<1_000_000_000, using: &random)
                        try transaction.inserted(Item(score: score, bucket: score % 100))
                    case 1:
                        try transaction.delete("BenchItem", ids: [ids[index]])
                    default:
                        var item = try transaction.fetchOne(Item.self, id: ids[index]) ?? Item(score: 0, bucket: 0)
                        item.score = Int64.random(in: 0..<1_000_000_000, using: &random)
                        item.bucket = item.score % 100
                        try transaction.update(item)
                    }
                }
            }
            let ours = controller.lastUpdateSeconds
            // Baseline: what a controller without change tracking does: refetch everything,
            // then diff with the standard library.
            let estimatedWork = Double(before.count) * Double(2 * k)
            var baselineSeconds: Double?
            if estimatedWork <= 2e9 {
                baselineSeconds = try measure {
                    let after = try store.read { context -> [Int64] in
                        var ids: [Int64] = []
                        try context.forEachKeyRow(request, keyPaths: sortKeys.map(\.keyPath)) { id, _ in ids.append(id) }
                        return ids
                    }
                    let difference = after.difference(from: before)
                    if difference.isEmpty && k > 0 { throw StoreError(.invalidRequest, "the baseline saw no change") }
                }
            }
            var figure = Figure(scenario: "frc.update", n: count, seconds: ours,
                                baseline: baselineSeconds == nil ? nil : "refetch + CollectionDifference",
                                baselineSeconds: baselineSeconds,
                                extra: ["k": k, "sections": sections])
            if baselineSeconds == nil {
                figure.extra["baselineSkipped"] = "CollectionDifference would need about \(Int(estimatedWork / 1e9))e9 steps"
            }
            figures.append(figure)
        }
        return figures
    }
}

extension ControllerBenchmarks {
    static var titled: Entity { Titled.entity }

    struct Titled: TableRecord {
        static let table = RecordTable<Titled>("BenchTitled", columns: [.column("title", \.title)])
        var id: Int64?
        var title = ""
        init() {}
        init(title: String) { self.title = title }
    }

    /// What `cacheName` saves: a fetch sorted by localized-standard title (no index, so
    /// SQLite sorts with the collation) against the same fetch served from the cache.
    static func cache(n: Int) throws -> [Figure] {
        try withScratchDirectory { directory in
            let store = try Store(path: directory.appendingPathComponent("cache.sqlite").path, schema: Schema([titled]),
                                  migrator: .creating([titled]))
            try store.write { transaction in
                for index in 0..<n { try transaction.inserted(Titled(title: "IMG \(index * 7919 % n) été")) }
            }
            let request = FetchRequest(Titled.self, sortDescriptors: [SortKey("title", collation: .localizedStandard)])
            let fromQuery = try medianSeconds(runs: 3) {
                let controller = try ResultsController<Titled>(store: store, request: request)
                try controller.performFetch()
            }
            let warm = try ResultsController<Titled>(store: store, request: request, cacheName: "bench")
            try warm.performFetch()
            var hits = 0
            let fromCache = try medianSeconds(runs: 3) {
                let controller = try ResultsController<Titled>(store: store, request: request, cacheName: "bench")
                try controller.performFetch()
                if controller.lastFetchUsedCache { hits += 1 }
            }
            guard hits == 3 else { throw StoreError(.invalidRequest, "the cache was not used") }
            return [Figure(scenario: "frc.cache", n: n, seconds: fromCache, baseline: "performFetch without cache",
                           baselineSeconds: fromQuery)]
        }
    }
}

/// SplitMix64, for reproducible benchmark data.
struct BenchRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
