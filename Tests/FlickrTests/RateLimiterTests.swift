import Flickr
import Foundation
import TestSupport
import Testing

@Suite("The rate limiter")
struct RateLimiterTests {
    /// The most acquisitions inside any span of `window` seconds.
    func busiestWindow(_ times: [Date], window: TimeInterval) -> Int {
        let sorted = times.sorted()
        var best = 0
        var start = 0
        for end in sorted.indices {
            while sorted[end].timeIntervalSince(sorted[start]) >= window { start += 1 }
            best = max(best, end - start + 1)
        }
        return best
    }

    @Test("No window ever holds more calls than the limit")
    func windowRespected() async throws {
        let limiter = RateLimiter(limit: 4, window: 0.5, burst: 4)
        var times: [Date] = []
        for _ in 0..<10 {
            try await limiter.acquire()
            times.append(Date())
        }
        // Times are read just after each call returns, a little after the limiter counted it:
        // check a slightly shorter window so scheduling delays cannot fake a violation.
        #expect(busiestWindow(times, window: 0.45) <= 4)
    }

    @Test("After a burst, calls are spread at the refill rate")
    func burstThenSpread() async throws {
        let limiter = RateLimiter(limit: 20, window: 1, burst: 2)
        var times: [Date] = []
        for _ in 0..<6 {
            try await limiter.acquire()
            times.append(Date())
        }
        // A token bucket's promise: between any two calls, no more calls than the burst plus
        // what the rate refills in the time between them (a late wake-up may let the next
        // call come sooner, never more calls overall).
        for first in times.indices {
            for last in times.indices where last > first {
                let allowed = 2 + 20 * times[last].timeIntervalSince(times[first])
                #expect(Double(last - first + 1) <= allowed + 0.05, "calls \(first)...\(last)")
            }
        }
        #expect(times[5].timeIntervalSince(times[0]) >= 0.19, "six calls need four refills of 1/20 s")
    }

    @Test("Calls remembered by the ledger count after a restart")
    func ledgerSurvivesRestart() async throws {
        let ledger = InMemoryCallLedger()
        let first = RateLimiter(limit: 3, window: 0.6, burst: 3, ledger: ledger)
        var times: [Date] = []
        for _ in 0..<3 {
            try await first.acquire()
            times.append(Date())
        }
        // A new limiter (as after a restart) on the same ledger sees the budget spent.
        let second = RateLimiter(limit: 3, window: 0.6, burst: 3, ledger: ledger)
        #expect(try await second.callsInWindow() == 3)
        try await second.acquire()
        times.append(Date())
        #expect(busiestWindow(times, window: 0.55) <= 3)
        #expect(await ledger.calls(since: .distantPast).count == 4)
    }

    @Test("Limiters sharing a ledger (processes sharing a key) stay within the limit together")
    func sharedLedgerSharesTheBudget() async throws {
        let ledger = InMemoryCallLedger()
        let limiters = (0..<3).map { _ in RateLimiter(limit: 5, window: 3600, burst: 5, ledger: ledger) }
        let granted = try await grantedWithin(seconds: 0.5, limiters: limiters, attemptsEach: 4)
        #expect(granted == 5, "three limiters with a burst of 5 each, one budget of 5 an hour")
        #expect(await ledger.calls(since: .distantPast).count == 5)
    }
}
