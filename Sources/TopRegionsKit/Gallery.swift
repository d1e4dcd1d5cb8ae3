import Flickr
import Foundation
import Store

/// The product: a store of photos, photographers, places, regions, Recents and Favorites,
/// filled by a Flickr sync and read through plain fetches or results controllers.
public final class Gallery: Sendable {
    public let store: Store
    /// The store file's path, or nil in memory.
    public var path: String? { store.path }

    /// Opens (or creates) the store at `path`.
    public init(path: String, configuration: StoreConfiguration = StoreConfiguration()) throws {
        store = try Store(path: path, schema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator, configuration: configuration)
    }

    /// A gallery in memory, for tests.
    public init(inMemory: Void = ()) throws {
        store = try Store(inMemorySchema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator)
    }

    public func close() { store.close() }

    /// The ledger of API calls kept in this store, for a rate limiter that survives restarts.
    public var callLedger: CallLedger { StoreCallLedger(store: store) }
}

/// Remembers Flickr API calls in the store (table `APICall`), so a restarted daemon does not
/// spend a fresh hour's budget.
struct StoreCallLedger: CallLedger {
    let store: Store

    func calls(since date: Date) async -> [Date] {
        let rows = (try? await store.read { try $0.rows("SELECT at FROM APICall WHERE at >= ? ORDER BY at", [.real(date.timeIntervalSince1970)]) }) ?? []
        return rows.compactMap { $0[0].double.map(Date.init(timeIntervalSince1970:)) }
    }

    func record(_ date: Date) async {
        // Calls older than a day are of no use to any window.
        _ = try? await store.write { transaction in
            try transaction.execute("INSERT INTO APICall (at) VALUES (?)", [.real(date.timeIntervalSince1970)])
            try transaction.execute("DELETE FROM APICall WHERE at < ?", [.real(date.timeIntervalSince1970 - 86_400)])
        }
    }
}
