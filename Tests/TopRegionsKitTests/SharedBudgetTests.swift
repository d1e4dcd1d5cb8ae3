import Flickr
import Foundation
import PostgreSQL
import TestSupport
import Testing
@testable import TopRegionsKit

@Suite("One API budget shared by the processes that count in one ledger")
struct SharedBudgetTests {
    @Test("Galleries open on one store file (as separate processes have it) share its budget")
    func storeLedgerIsShared() async throws {
        let directory = try TemporaryDirectory("budget")
        let path = directory.url.appendingPathComponent("gallery.sqlite").path
        let galleries = try (0..<3).map { index in try Gallery.open(path: path, for: index == 0 ? .create : .write) }
        let limiters = galleries.map { RateLimiter(limit: 5, window: 3600, burst: 5, ledger: $0.callLedger) }
        #expect(try await grantedWithin(seconds: 1, limiters: limiters, attemptsEach: 4) == 5)
        // A limiter started later (a restarted daemon) finds the budget spent.
        let later = RateLimiter(limit: 5, window: 3600, burst: 5, ledger: try Gallery.open(path: path, for: .write).callLedger)
        #expect(try await later.callsInWindow() == 5)
        #expect(try await grantedWithin(seconds: 0.3, limiters: [later], attemptsEach: 1) == 0)
    }

    @Test("A ledger refuses a call while the window is full and says when the oldest call leaves it")
    func storeLedgerSaysHowLongToWait() async throws {
        let directory = try TemporaryDirectory("budget")
        let gallery = try Gallery.open(path: directory.url.appendingPathComponent("g.sqlite").path, for: .create)
        let started = Date()
        // An hour's window: the suites share two cores, and a test can wait its turn for a
        // thread long enough for a minute's window to pass between two reservations.
        #expect(try await gallery.callLedger.reserve(limit: 2, window: 3_600) == nil)
        #expect(try await gallery.callLedger.reserve(limit: 2, window: 3_600) == nil)
        let wait = try #require(try await gallery.callLedger.reserve(limit: 2, window: 3_600))
        // The oldest call was made after `started`: it leaves the window at most an hour from
        // now, and at least an hour minus the time the three reservations took.
        #expect(wait <= 3_600 && wait >= 3_600 - Date().timeIntervalSince(started) - 0.1, "\(wait)")
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(try await gallery.callLedger.reserve(limit: 1, window: 0.05) == nil, "a shorter window holds no call yet")
    }
}

@Suite("The API budget in PostgreSQL (--rate-ledger)",
       .enabled(if: PostgresTestServer.shouldRun, "PostgreSQL is not installed: \(PostgresTestServer.enablingCommand)"))
struct PostgresBudgetTests {
    @Test("Ledgers on separate connections (as on separate hosts) give one key exactly its limit; another key has its own")
    func oneBudgetPerKey() async throws {
        let url = try PostgresTestServer.shared().makeDatabase("budget")
        let ledgers = try (0..<4).map { _ in try PostgresCallLedger(location: url, budgetOf: "key-one") }
        defer { ledgers.forEach { $0.close() } }
        let limiters = ledgers.map { RateLimiter(limit: 6, window: 3600, burst: 6, ledger: $0) }
        #expect(try await grantedWithin(seconds: 2, limiters: limiters, attemptsEach: 4) == 6)
        #expect(await ledgers[0].calls(since: .distantPast).count == 6)

        let other = try PostgresCallLedger(location: url, budgetOf: "key-two")
        defer { other.close() }
        #expect(try await other.reserve(limit: 6, window: 3600) == nil, "another key's budget is untouched")
        let wait = try #require(try await ledgers[1].reserve(limit: 6, window: 3600))
        #expect(wait > 3000 && wait <= 3600, "the oldest call leaves the hour's window about an hour from now: \(wait)")

        let observer = try PostgresConnection(url)
        let budgets = try observer.query("SELECT DISTINCT budget FROM topregions_api_call")
        let names = try budgets.rows.indices.compactMap { try budgets.text($0, "budget") }
        #expect(names.count == 2)
        #expect(names.allSatisfy { !$0.contains("key") && $0.count == 64 }, "keys are kept only as digests")
    }

    @Test("Reservations of one budget take turns: one waits while another session holds the budget's lock")
    func reservationsTakeTurns() async throws {
        let url = try PostgresTestServer.shared().makeDatabase("budget")
        let ledger = try PostgresCallLedger(location: url, budgetOf: "k")
        defer { ledger.close() }
        #expect(try await ledger.reserve(limit: 10, window: 3600) == nil)  // creates the table and function
        let holder = try PostgresConnection(url)
        try holder.query("SELECT pg_advisory_lock(hashtext('topregions.api_call:' || $1))", [.text(ledger.budget)])
        let reservation = Task { try await ledger.reserve(limit: 10, window: 3600) }
        try await Task.sleep(nanoseconds: 500_000_000)
        let counted = try PostgresConnection(url).query("SELECT count(*) AS n FROM topregions_api_call").integer(0, "n")
        #expect(counted == 1, "the second reservation waits for the lock")
        try holder.query("SELECT pg_advisory_unlock(hashtext('topregions.api_call:' || $1))", [.text(ledger.budget)])
        #expect(try await reservation.value == nil)
        #expect(await ledger.calls(since: .distantPast).count == 2)
    }

    @Test("A ledger whose connection was cut reconnects for the next reservation")
    func reconnectsAfterACut() async throws {
        let url = try PostgresTestServer.shared().makeDatabase("budget")
        let ledger = try PostgresCallLedger(location: url + "?application_name=ledger_under_test", budgetOf: "k")
        defer { ledger.close() }
        #expect(try await ledger.reserve(limit: 10, window: 3600) == nil)
        let observer = try PostgresConnection(url)
        let cut = try observer.query("""
            SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
            WHERE application_name = 'ledger_under_test' AND datname = current_database()
            """)
        #expect(try cut.integer(0, "n") == 1)
        #expect(try await ledger.reserve(limit: 10, window: 3600) == nil)
        #expect(await ledger.calls(since: .distantPast).count == 2)
    }

    @Test("A role that may not create the ledger's table fails the call, as a failure that will not pass by itself")
    func roleWithoutRights() async throws {
        let url = try PostgresTestServer.shared().makeDatabase("budget")
        let role = "ledger_reader_\(UInt32.random(in: 0...UInt32.max))"
        let owner = try PostgresConnection(url)
        try owner.execute("CREATE ROLE \(role) LOGIN; REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        let ledger = try PostgresCallLedger(location: url.replacingOccurrences(of: "postgres@", with: "\(role)@"), budgetOf: "k")
        defer { ledger.close() }
        let error = try await #require(throws: RateLedgerError.self) { try await ledger.reserve(limit: 5, window: 3600) }
        #expect(!error.isTemporary)
        #expect(error.underlying.sqlState == "42501", "insufficient privilege: \(error)")
        #expect("\(error)".contains("rate ledger") && !"\(error)".contains("CREATE TABLE"), "the server's words, not our SQL")

        // Once a role that may create them has, this one needs only to use the table.
        let creator = try PostgresCallLedger(location: url, budgetOf: "k")
        defer { creator.close() }
        #expect(try await creator.reserve(limit: 5, window: 3600) == nil)
        try owner.execute("GRANT SELECT, INSERT, DELETE ON topregions_api_call TO \(role)")
        let user = try PostgresCallLedger(location: url.replacingOccurrences(of: "postgres@", with: "\(role)@"), budgetOf: "k")
        defer { user.close() }
        #expect(try await user.reserve(limit: 5, window: 3600) == nil)
        #expect(await creator.calls(since: .distantPast).count == 2)
    }

    @Test("Rows dated in the future (no ledger writes them) do not block a budget; old rows of every key go")
    func oddRows() async throws {
        let url = try PostgresTestServer.shared().makeDatabase("budget")
        let ledger = try PostgresCallLedger(location: url, budgetOf: "k")
        defer { ledger.close() }
        #expect(try await ledger.reserve(limit: 1, window: 3600) == nil)
        let observer = try PostgresConnection(url)
        try observer.execute("DELETE FROM topregions_api_call")
        try observer.query("INSERT INTO topregions_api_call VALUES ($1, 'infinity'), ($1, now() + interval '100 years'), ('other', now() - interval '2 days')",
                           [.text(ledger.budget)])
        #expect(try await ledger.reserve(limit: 1, window: 3600) == nil)
        #expect(try observer.query("SELECT count(*) AS n FROM topregions_api_call WHERE budget = 'other'").integer(0, "n") == 0)
    }

    @Test("A database that cannot be reached is told at once, its password hidden")
    func unreachable() throws {
        var source = try GallerySource.resolve(endpoint: "http://127.0.0.1:9/rest", apiKey: "k", imageBase: nil, environment: [:])
        try source.countCalls(in: "postgresql://ann:hunter2@127.0.0.1:1/gallery?connect_timeout=2")
        let error = try #require(throws: GalleryError.self) { try source.ledger(orElse: InMemoryCallLedger()) }
        #expect("\(error)".contains("rate ledger") && "\(error)".contains("ann:***@"))
        #expect(!"\(error)".contains("hunter2"))
        #expect(throws: GalleryError.self) { try source.countCalls(in: "/tmp/ledger.sqlite") }
    }
}
