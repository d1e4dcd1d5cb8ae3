import CSQLite
import Foundation
import Synchronization

/// How a connection waits for another connection's lock: as `sqlite3_busy_timeout` does
/// (sleeps of 1 ms growing to 100 ms, up to the timeout), except that the wait can be cut
/// short from another thread: a store being closed (a server shutting down) does not wait
/// out a minute-long timeout first.
final class BusyWait: Sendable {
    let milliseconds: Int32
    private let interrupted = Atomic<Bool>(false)

    init(milliseconds: Int32) {
        self.milliseconds = milliseconds
    }

    /// Ends the current wait and every later one: the call that waits fails as busy.
    func interrupt() {
        interrupted.store(true, ordering: .relaxed)
    }

    /// SQLite's own schedule: the sleep before the `count`th retry, and the time slept
    /// before it.
    private static let delays: [Int32] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]
    private static let totals: [Int32] = [0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228]

    /// Whether to try again (after sleeping), the `count`th time SQLite asks.
    func shouldRetry(_ count: Int32) -> Bool {
        guard !interrupted.load(ordering: .relaxed) else { return false }
        let last = Self.delays.count - 1
        let index = Int(min(max(count, 0), Int32(last)))
        let slept = count <= Int32(last) ? Int64(Self.totals[index]) : Int64(Self.totals[last]) + Int64(count - Int32(last)) * Int64(Self.delays[last])
        let left = Int64(milliseconds) - slept
        guard left > 0 else { return false }
        // Sleeping is all a busy handler can do: SQLite's file locks send no event when freed.
        usleep(useconds_t(min(Int64(Self.delays[index]), left)) * 1000)
        return !interrupted.load(ordering: .relaxed)
    }

    /// Installs it as the connection's busy handler; `self` must outlive the connection's
    /// handle (the connection keeps it).
    func install(on handle: OpaquePointer) {
        sqlite3_busy_handler(handle, { context, count in
            guard let context else { return 0 }
            return Unmanaged<BusyWait>.fromOpaque(context).takeUnretainedValue().shouldRetry(count) ? 1 : 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }
}
