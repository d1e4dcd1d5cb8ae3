import Flickr
import Foundation
import Store

/// Remembers Flickr API calls in the store (table `APICall`), so that a restarted daemon
/// does not spend a fresh hour's budget, and processes syncing one store share one budget:
/// a reservation is a write transaction, which SQLite runs one at a time across processes,
/// and PostgreSQL as if one at a time (serializable: of two that would both take the last
/// call, one is run again and sees the other's).
struct StoreCallLedger: CallLedger {
    let store: any StoreWriting

    /// Calls older than this are of no use to any window, and are deleted.
    static let kept: TimeInterval = 86_400

    func calls(since date: Date) async -> [Date] {
        let rows = (try? await store.reading { context in
            try context.rows("SELECT at FROM APICall WHERE at >= \(context.dialect.parameter(1)) ORDER BY at", [.real(date.timeIntervalSince1970)])
        }) ?? []
        return rows.compactMap { $0[0].double.map(Date.init(timeIntervalSince1970:)) }
    }

    func record(_ date: Date) async {
        _ = try? await store.writing { transaction in try Self.insert(date.timeIntervalSince1970, transaction) }
    }

    func reserve(limit: Int, window: TimeInterval) async throws -> TimeInterval? {
        try await store.writing { transaction in
            // The clock is read holding the write lock, so reservations are in time order.
            let now = Date().timeIntervalSince1970
            let row = try transaction.rows("SELECT count(*), min(at) FROM APICall WHERE at > \(transaction.dialect.parameter(1))",
                                           [.real(now - window)]).first
            if let row, let count = row[0].int64, count >= limit, let oldest = row[1].double {
                return max(0.001, oldest + window - now)
            }
            try Self.insert(now, transaction)
            return nil
        }
    }

    private static func insert(_ time: TimeInterval, _ transaction: Transaction) throws {
        let p = transaction.dialect.parameter
        try transaction.execute("INSERT INTO APICall (at) VALUES (\(p(1)))", [.real(time)])
        try transaction.execute("DELETE FROM APICall WHERE at < \(p(1))", [.real(time - kept)])
    }
}
