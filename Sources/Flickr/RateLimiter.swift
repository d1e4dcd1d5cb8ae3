import Foundation

/// Remembers when calls were made, so that a restarted process does not spend a fresh
/// hour's budget. The caller decides where (TopRegions keeps it in its store).
public protocol CallLedger: Sendable {
    /// The times of the calls made at or after `date`, oldest first.
    func calls(since date: Date) async -> [Date]
    /// Remembers one call.
    func record(_ date: Date) async
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
}

/// Keeps calls within the API key's budget: at most `limit` in any rolling `window`
/// (Flickr: 3,600 an hour), and no more than `burst` at once, then spread evenly
/// (a token bucket refilled at `limit / window` per second). Every call counts, retries
/// included.
public actor RateLimiter {
    /// Calls allowed in any rolling `window`.
    public let limit: Int
    /// The rolling window's length, in seconds.
    public let window: TimeInterval
    /// Calls allowed at once before the rest are spread evenly.
    public let burst: Int
    private let ledger: CallLedger
    private var recent: [Date] = []
    private var tokens: Double = 0
    private var lastRefill = Date()
    private var loaded = false
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

    /// Waits until a call is allowed, then counts it.
    public func acquire() async throws {
        try await loadIfNeeded()
        while true {
            let now = Date()
            forget(before: now.addingTimeInterval(-window))
            refill(now)
            if recent.count < limit && tokens >= 1 {
                tokens -= 1
                recent.append(now)
                await ledger.record(now)
                return
            }
            var wait: TimeInterval = 0
            if recent.count >= limit, let oldest = recent.first { wait = oldest.addingTimeInterval(window).timeIntervalSince(now) }
            if tokens < 1 { wait = max(wait, (1 - tokens) / refillPerSecond) }
            onWait?(wait, limit)
            try await Task.sleep(nanoseconds: UInt64(max(wait, 0.001) * 1_000_000_000))
        }
    }

    /// Calls counted in the current window.
    public func callsInWindow() async throws -> Int {
        try await loadIfNeeded()
        forget(before: Date().addingTimeInterval(-window))
        return recent.count
    }

    private func loadIfNeeded() async throws {
        guard !loaded else { return }
        loaded = true
        let now = Date()
        recent = await ledger.calls(since: now.addingTimeInterval(-window)).sorted()
        // A restarted process keeps what is left of the window's budget, up to a burst.
        tokens = Double(max(0, min(burst, limit - recent.count)))
        if limit >= Self.unlimited { recent = [] }
        lastRefill = now
    }

    private func forget(before cutoff: Date) {
        if let firstKept = recent.firstIndex(where: { $0 >= cutoff }) {
            recent.removeFirst(firstKept)
        } else {
            recent.removeAll()
        }
    }

    private func refill(_ now: Date) {
        tokens = min(Double(burst), tokens + now.timeIntervalSince(lastRefill) * refillPerSecond)
        lastRefill = now
    }
}

/// At most `limit` operations at once; the others wait their turn in order.
actor ConcurrencyLimit {
    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ limit: Int) { self.limit = max(1, limit) }

    func run<T: Sendable>(_ operation: @Sendable () async throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await operation()
    }

    private func acquire() async {
        if running < limit {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
