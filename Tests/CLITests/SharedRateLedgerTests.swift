import Foundation
import TestSupport
import Testing

@Suite("Syncs on separate stores that share a key and a --rate-ledger", .serialized,
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct SharedRateLedgerTests {
    @Test("Two syncs, each with its own store, together make no more API calls than the key's limit")
    func twoSyncsShareTheBudget() async throws {
        let server = try FlickrTestServer(apiKey: "shared-key")
        let ledger = try PostgresTestServer.shared().makeDatabase("ledger")
        let arguments = ["sync", "--json", "--endpoint", server.endpoint.absoluteString, "--api-key", "shared-key",
                         "--rate-limit", "5", "--rate-ledger", ledger]
        let tools = try (0..<2).map { _ in try Tool() }
        let processes = try tools.map { try $0.process(arguments).0 }
        defer {
            for process in processes where process.isRunning { process.terminate() }
            processes.forEach { $0.waitUntilExit() }
        }
        func apiCalls() async throws -> Int { try await server.requests().filter { $0.method != nil }.count }
        let deadline = Date().addingTimeInterval(20)
        while try await apiCalls() < 5 && Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
        // Each sync alone would spend a budget of 5 at once; together they must wait for the
        // hour with 5 spent.
        try await Task.sleep(nanoseconds: 1_500_000_000)
        #expect(try await apiCalls() == 5)
        #expect(processes.allSatisfy { $0.isRunning }, "both wait for the budget (a pass needs more than 5 calls)")
        // Each store still counts its own calls, for status.
        let counted = try tools.map { tool -> Int in
            let status = try #require(try tool.run(["status", "--json"]).json as? [String: Any])
            return try #require((status["rateLimit"] as? [String: Any])?["callsLastHour"] as? Int)
        }
        #expect(counted.reduce(0, +) == 5, "\(counted)")
    }

    @Test("A ledger that is not a PostgreSQL URL is a usage error; one that cannot be reached fails the sync as temporary (75), password hidden")
    func badLedgers() throws {
        let tool = try Tool()
        let endpoint = ["--endpoint", "http://127.0.0.1:9/services/rest/", "--api-key", "k"]
        let path = try tool.run(["sync"] + endpoint + ["--rate-ledger", "/tmp/ledger.sqlite"])
        #expect(path.status == 64 && path.stderr.contains("postgresql://"), "\(path.stderr)")
        let unreachable = try tool.run(["sync"] + endpoint, environment: [
            "TOPREGIONS_RATE_LEDGER": "postgresql://ann:hunter2@127.0.0.1:1/gallery?connect_timeout=2"])
        #expect(unreachable.status == 75, "a temporary failure, as an unreachable source is: \(unreachable.stderr)")
        #expect(unreachable.stderr.contains("rate ledger") && unreachable.stderr.contains("ann:***@"), "\(unreachable.stderr)")
        #expect(!(unreachable.stderr + unreachable.stdout).contains("hunter2"))
    }

    @Test("A ledger whose role the server does not know fails the sync for good (1), as such a store does")
    func ledgerRefusingTheRole() throws {
        let tool = try Tool()
        let database = try PostgresTestServer.shared().makeDatabase("ledger")
        let stranger = database.replacingOccurrences(of: "postgres@", with: "nobody_here:hunter2@")
        let run = try tool.run(["sync", "--endpoint", "http://127.0.0.1:9/services/rest/", "--api-key", "k", "--rate-ledger", stranger])
        #expect(run.status == 1, "a wrong role will not pass by waiting: \(run.stderr)")
        #expect(run.stderr.contains("rate ledger") && !run.stderr.contains("hunter2"), "\(run.stderr)")
    }
}
