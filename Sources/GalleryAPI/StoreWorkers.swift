import Foundation

/// The threads that do the API's store reads, so that the server's polling threads never
/// wait on the store: a fixed number (`serve --workers`), taking jobs in arrival order.
///
/// A job carries a deadline (`serve --store-wait` after its request arrived): one that has
/// not started by then is not run but told it expired, and the request is answered 503.
/// So a stalled store costs at most `count` threads, and the queue drains at once when it
/// is back.
///
/// `@unchecked Sendable`: the queue and `stopped` are guarded by `condition`.
public final class StoreWorkers: @unchecked Sendable {
    private struct Job {
        let deadline: DispatchTime
        let run: () -> Void
        let expired: () -> Void
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var head = 0
    private var stopped = false
    /// The number of worker threads.
    let count: Int

    /// Starts `count` threads (at least one).
    init(count: Int) {
        self.count = max(1, count)
        for index in 0..<self.count {
            let thread = Thread { [self] in work() }
            thread.name = "topregions.api.worker.\(index)"
            thread.start()
        }
    }

    /// Two per core: a worker waiting on the store (a lock, the network) leaves the cores
    /// to the others.
    public static var defaultCount: Int { max(2, ProcessInfo.processInfo.activeProcessorCount * 2) }

    /// Runs `run` on a worker, or `expired` (on a worker, at once) when none could start it
    /// before `deadline`, or when the workers have stopped.
    func submit(deadline: DispatchTime, _ run: @escaping () -> Void, expired: @escaping () -> Void) {
        condition.lock()
        if stopped {
            condition.unlock()
            expired()
            return
        }
        jobs.append(Job(deadline: deadline, run: run, expired: expired))
        condition.signal()
        condition.unlock()
    }

    /// Ends the threads once the jobs queued have run or expired.
    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }

    private func work() {
        while let job = next() {
            if DispatchTime.now() > job.deadline { job.expired() } else { job.run() }
        }
    }

    private func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count {
            if stopped { return nil }
            condition.wait()
        }
        let job = jobs[head]
        head += 1
        if head > 1_024 && head * 2 > jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }
}

/// Whether the code answering a request may read the store. On the server's polling
/// threads it may not (`memoryOnly`): an answer that needs the store throws `NeedsStore`,
/// and the request is answered again on a worker (`workers`).
enum StoreAccess {
    case memoryOnly
    case workers

    /// Throws `NeedsStore` unless the store may be read here.
    func require() throws {
        if self == .memoryOnly { throw NeedsStore() }
    }
}

/// The answer needs the store: on a worker, please.
struct NeedsStore: Error {}

/// Resumes a continuation once, whichever of its callers comes first.
///
/// `@unchecked Sendable`: `continuation` is guarded by `lock`.
final class FirstAnswer<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, Never>?

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = continuation
    }

    /// Resumes with `value` unless an answer was given already.
    func give(_ value: Value) {
        let waiting = lock.withLock { () -> CheckedContinuation<Value, Never>? in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: value)
    }
}
