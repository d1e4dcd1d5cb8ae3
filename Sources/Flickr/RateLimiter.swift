import Foundation

/// Remembers when calls were made, so that a restarted process does not spend a fresh
/// hour's budget, and so that processes sharing a ledger share one budget. The caller
/// decides where (TopRegions keeps it in its store, or in a PostgreSQL database that
/// several hosts share).
public protocol CallLedger: Sendable {
    /// The times of the calls made at or after `date`, oldest first.
    func calls(since date: Date) async -> [Date]
    /// Remembers one call.
    func record(_ date: Date) async
    /// Counts one call now if fewer than `limit` calls were counted in the `window` seconds
    /// before now, and returns nil; otherwise counts nothing and returns the seconds until
    /// the oldest of them leaves the window. A ledger that several processes share must do
    /// this atomically, so that together they never count more than `limit`.
    func reserve(limit: Int, window: TimeInterval) async throws -> TimeInterval?
}

/// A ledger that lives as long as the process.
public actor InMemoryCallLedger: CallLedger {
    private var dates: [Date] = []

    /// A ledger holding these call times.
    public init(_ dates: [Date] = []) { self.dates = dates.sorted() }

    /// The times of the calls made at or after `date`, oldest first.
    public func calls(since date: Date) -> [Date] { dates.filter { $0 >= date } }

    /// Remembers one call; only the newest 100,000 are kept.
    public func record(_ date: Date) {
        dates.append(date)
        // Old entries are of no use to any window; keep the list small.
        if dates.count > 100_000 { dates.removeFirst(dates.count - 100_000) }
    }

    /// `CallLedger.reserve`, atomic: the actor runs one reservation at a time.
    public func reserve(limit: Int, window: TimeInterval) -> TimeInterval? {
        let now = Date()
        let start = now.addingTimeInterval(-window)
        let counted = dates.filter { $0 > start }
        if counted.count >= limit, let oldest = counted.min() {
            return max(0.001, oldest.addingTimeInterval(window).timeIntervalSince(now))
        }
        record(now)
        return nil
    }
}

/// Keeps calls within the API key's budget: at most `limit` in any rolling `window`
/// (Flickr: 3,600 an hour), and no more than `burst` at once, then spread evenly
/// (a token bucket refilled at `limit / window` per second). Every call counts, retries
/// included.
///
/// The window's count is the ledger's (`CallLedger.reserve`): limiters in several
/// processes that share a ledger stay within `limit` together. The burst is each
/// limiter's own.
public actor RateLimiter {
    /// Calls allowed in any rolling `window`.
    public let limit: Int
    /// The rolling window's length, in seconds.
    public let window: TimeInterval
    /// Calls allowed at once before the rest are spread evenly.
    public let burst: Int
    private let ledger: CallLedger
    private var tokens: Double = 0
    private var lastRefill = Date()
    private var loading: Task<Void, Never>?
    private let onWait: (@Sendable (TimeInterval, Int) -> Void)?

    /// A limit so high no caller reaches it: calls are counted (in the ledger), never held.
    public static let unlimited = 1_000_000_000

    /// `onWait` hears, before each wait, how long the limit holds a call back and the limit.
    public init(limit: Int = 3600, window: TimeInterval = 3600, burst: Int = 60, ledger: CallLedger = InMemoryCallLedger(),
                onWait: (@Sendable (TimeInterval, Int) -> Void)? = nil) {
        self.limit = max(1, limit)
        self.window = window
        self.burst = limit >= Self.unlimited ? Self.unlimited : max(1, min(burst, limit))
        self.ledger = ledger
        self.onWait = onWait
        if limit >= Self.unlimited { tokens = Double(Self.unlimited) }
    }

    private var refillPerSecond: Double { Double(limit) / window }
    private var isUnlimited: Bool { limit >= Self.unlimited }

    /// Waits until a call is allowed, then counts it. Throws what the ledger throws when it
    /// cannot be asked (a call is not made uncounted).
    public func acquire() async throws {
        await loadIfNeeded()
        while true {
            refill(Date())
            let wait: TimeInterval
            if tokens >= 1 {
                // Taken before the ledger is asked: another acquire may run while it answers.
                tokens -= 1
                if isUnlimited {
                    await ledger.record(Date())
                    return
                }
                let windowWait: TimeInterval?
                do {
                    windowWait = try await ledger.reserve(limit: limit, window: window)
                } catch {
                    tokens += 1
                    throw error
                }
                guard let windowWait else { return }
                tokens += 1
                wait = windowWait
            } else {
                wait = (1 - tokens) / refillPerSecond
            }
            onWait?(wait, limit)
            try await Task.sleep(nanoseconds: UInt64(max(wait, 0.001) * 1_000_000_000))
        }
    }

    /// Calls counted in the current window (by every limiter sharing the ledger).
    public func callsInWindow() async throws -> Int {
        await countedInWindow()
    }

    private func countedInWindow() async -> Int {
        let start = Date().addingTimeInterval(-window)
        return await ledger.calls(since: start).filter { $0 > start }.count
    }

    /// Reads the ledger once, before the first call; calls that arrive meanwhile wait for
    /// the same reading (not for an empty bucket's refill).
    private func loadIfNeeded() async {
        guard !isUnlimited else { return }
        let load = loading ?? Task { await self.loadBudget() }
        loading = load
        await load.value
    }

    private func loadBudget() async {
        let counted = await countedInWindow()
        // A restarted process keeps what is left of the window's budget, up to a burst.
        tokens = Double(max(0, min(burst, limit - counted)))
        lastRefill = Date()
    }

    private func refill(_ now: Date) {
        guard !isUnlimited else { return }
        tokens = min(Double(burst), tokens + now.timeIntervalSince(lastRefill) * refillPerSecond)
        lastRefill = now
    }
}

/// At most `limit` operations at once; the others wait their turn in order. A waiter whose
/// task is cancelled stops waiting (with `CancellationError`): a pass told to stop must not
/// wait for a slot that a call sleeping on the rate limit holds.
actor ConcurrencyLimit {
    private let limit: Int
    private var running = 0
    private var waiting: [(id: UInt64, continuation: CheckedContinuation<Void, Error>)] = []
    private var nextWaiter: UInt64 = 0

    init(_ limit: Int) { self.limit = max(1, limit) }

    func run<T: Sendable>(_ operation: @Sendable () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await operation()
    }

    private func acquire() async throws {
        if running < limit {
            running += 1
            return
        }
        nextWaiter += 1
        let id = nextWaiter
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiting.append((id, continuation))
                }
            }
        } onCancel: {
            Task { await self.stopWaiting(id) }
        }
    }

    private func stopWaiting(_ id: UInt64) {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return }  // already given a slot
        waiting.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    /// Hands the slot to the first waiter, if any.
    private func release() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().continuation.resume()
        }
    }
}
