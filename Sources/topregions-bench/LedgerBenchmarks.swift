import Flickr
import Foundation
import PostgreSQL
import Store
import TestSupport
import TopRegionsKit

/// ledger.sqlite, ledger.postgresql: what counting one API call against a shared budget
/// costs (`CallLedger.reserve`: count the window's calls, then add one, atomically), against
/// the plain insert of one call in the same place. A Flickr call takes a tenth of a second
/// or more; this is what each one pays on top.
enum LedgerBenchmarks {
    static let scenarios = [
        Scenario(name: "ledger.sqlite", summary: "one API call counted against the store's budget vs a plain insert in the store") { quick in
            [try sqlite(calls: quick ? 200 : 2_000)]
        },
        Scenario(name: "ledger.postgresql", summary: "one API call counted in a --rate-ledger database vs a plain libpq insert") { quick in
            [try postgres(calls: quick ? 200 : 2_000)]
        },
    ]

    /// A budget no run reaches, and the hour's window, as the daemon uses it.
    private static let limit = 1_000_000
    private static let window: TimeInterval = 3600

    static func sqlite(calls: Int) throws -> Figure {
        let directory = try TemporaryDirectory("ledger-bench")
        let gallery = try Gallery.open(path: directory.url.appendingPathComponent("ledger.sqlite").path, for: .create)
        let ledger = gallery.callLedger
        let seconds = try reservations(ledger, calls: calls)
        let plain = try measure {
            for _ in 0..<calls { try ProductBenchmarks.blockingAsync { await ledger.record(Date()) } }
        }
        try expectCounted(ledger, 2 * calls)
        return Figure(scenario: "ledger.sqlite", n: calls, seconds: seconds, baseline: "plain insert of each call (the store)",
                      baselineSeconds: plain, extra: ["store": "sqlite", "reserveMicroseconds": seconds / Double(calls) * 1e6])
    }

    static func postgres(calls: Int) throws -> Figure {
        guard PostgresTestServer.programDirectory != nil else {
            throw BenchError("PostgreSQL is not installed: scripts/install-dependencies --test")
        }
        let server = try PostgresTestServer()
        let url = try server.makeDatabase("ledger")
        let ledger = try PostgresCallLedger(location: url, budgetOf: "benchmark-key")
        defer { ledger.close() }
        let seconds = try reservations(ledger, calls: calls)
        let raw = try PostgresConnection(url)
        try raw.execute("CREATE TABLE raw_call (budget text NOT NULL, at timestamptz NOT NULL)")
        let plain = try measure {
            for _ in 0..<calls { try raw.query("INSERT INTO raw_call VALUES ($1, clock_timestamp())", ["benchmark-key"]) }
        }
        try expectCounted(ledger, calls)
        return Figure(scenario: "ledger.postgresql", n: calls, seconds: seconds, baseline: "plain libpq insert of each call (prepared, autocommit)",
                      baselineSeconds: plain, extra: ["store": "postgresql", "reserveMicroseconds": seconds / Double(calls) * 1e6])
    }

    private static func reservations(_ ledger: CallLedger, calls: Int) throws -> Double {
        try measure {
            for _ in 0..<calls {
                let wait = try ProductBenchmarks.blockingAsync { try await ledger.reserve(limit: limit, window: window) }
                guard wait == nil else { throw BenchError("a reservation far below the limit was refused") }
            }
        }
    }

    /// The benchmark checks its own result: every call it made is in the ledger.
    private static func expectCounted(_ ledger: CallLedger, _ count: Int) throws {
        let counted = try ProductBenchmarks.blockingAsync { await ledger.calls(since: .distantPast).count }
        guard counted == count else { throw BenchError("the ledger holds \(counted) calls, not \(count)") }
    }
}
