import Foundation

/// Where the notifier reads commits it has not been handed: the store's history.
package struct HistorySource: Sendable {
    /// The entries after a token, oldest first; throws `historyTrimmed` when some are gone.
    package var entries: @Sendable (_ since: Int64) throws -> [HistoryEntry]
    /// The newest token.
    package var currentToken: @Sendable () throws -> Int64

    package init(entries: @escaping @Sendable (_ since: Int64) throws -> [HistoryEntry],
                 currentToken: @escaping @Sendable () throws -> Int64) {
        self.entries = entries
        self.currentToken = currentToken
    }
}

/// Keeps the observers and hands each of them every commit exactly once, in token order.
///
/// Tokens are consecutive: each commit's token is the previous commit's plus one (the
/// history's token is allocated under the store's write lock, and a rolled-back commit
/// gives its token back). So a local commit whose token follows the last one delivered is
/// delivered at once, and one that does not reveals commits by others not noticed yet:
/// those are read from the history first ("catching up"). A remote source (a poller, or
/// a notification channel) only says that something may have been committed.
///
/// `@unchecked Sendable`: the mutable state is guarded by `lock`; delivery is serialized by
/// `deliveryLock` (recursive, so that a handler's own commit does not deadlock: the
/// nested call returns at once and the outer delivery loop delivers that commit next).
package final class ChangeNotifier: @unchecked Sendable {
    private let lock = NSLock()
    private let deliveryLock = NSRecursiveLock()
    private var observers: [Int: @Sendable (StoreEvent) -> Void] = [:]
    /// Commits known to be in the history, oldest first, not delivered yet.
    private var pending: [HistoryEntry] = []
    /// Pending entries up to this token were read from the history: none is missing
    /// among them, so they are delivered without waiting for consecutive tokens.
    private var completeThrough: Int64 = 0
    private var catchUpRequested = false
    /// How many times a remote source said something may have been committed.
    private var remoteNotices: UInt64 = 0
    /// The newest token handed to the observers (or older than every observer's interest).
    private var deliveredThrough: Int64 = 0
    private var nextID = 0
    private var stopped = false
    /// Touched only while holding `deliveryLock`.
    private var isDelivering = false
    private let origin: String
    private let history: HistorySource
    /// Watches for other processes' commits while anyone observes.
    package var remoteSource: RemoteCommitSource?

    package init(origin: String, history: HistorySource) {
        self.origin = origin
        self.history = history
    }

    package var observerCount: Int {
        lock.withLock { observers.count }
    }

    package func addObserver(_ handler: @escaping @Sendable (StoreEvent) -> Void) -> Int {
        // Read before registering: a commit after this read and before the registration is
        // found by the catch-up that the next commit's token gap (or the poller) causes.
        let isFirst = lock.withLock { observers.isEmpty }
        let current = isFirst ? ((try? history.currentToken()) ?? 0) : 0
        let (id, startRemote) = lock.withLock { () -> (Int, Bool) in
            if observers.isEmpty {
                deliveredThrough = current
                pending.removeAll()
            }
            let id = nextID
            nextID += 1
            observers[id] = handler
            return (id, observers.count == 1 && !stopped)
        }
        if startRemote { remoteSource?.start(self) }
        return id
    }

    package func removeObserver(_ id: Int) {
        // Waiting for delivery to finish guarantees no callback runs after cancel returns
        // (unless cancel is called from inside a callback).
        deliveryLock.lock()
        let stopRemote = lock.withLock { () -> Bool in
            observers.removeValue(forKey: id)
            return observers.isEmpty
        }
        deliveryLock.unlock()
        if stopRemote { remoteSource?.stop() }
    }

    /// A commit of this store object, called after it committed, in commit order.
    package func enqueueLocal(_ entry: HistoryEntry) {
        lock.withLock {
            guard !observers.isEmpty else { return }
            pending.append(entry)
        }
    }

    /// Something may have been committed by another process: read the history next time.
    package func requestCatchUp() {
        lock.withLock {
            catchUpRequested = true
            remoteNotices &+= 1
        }
    }

    /// Commits this store object made (delivered before they return) and notices of
    /// others' (`requestCatchUp`), counted: `ObservableStore.commitCounter` where no cheaper
    /// exact number exists.
    package var noticesAndLocalCommits: UInt64 {
        lock.withLock { remoteNotices &+ deliveredThrough.magnitude }
    }

    /// A catch-up was asked for (or failed and waits to be tried again).
    package var wantsCatchUp: Bool {
        lock.withLock { catchUpRequested && !observers.isEmpty }
    }

    /// Delivers every pending event, oldest first.
    package func deliverPending() {
        deliveryLock.lock()
        defer { deliveryLock.unlock() }
        guard !isDelivering else { return }
        isDelivering = true
        defer { isDelivering = false }
        while let event = nextEvent() {
            let handlers = lock.withLock { observers.sorted { $0.key < $1.key }.map(\.value) }
            for handler in handlers { handler(event) }
        }
    }

    private enum Step {
        case deliver(StoreEvent)
        case catchUp(since: Int64)
        case done
    }

    private func nextEvent() -> StoreEvent? {
        // A catch-up that makes no progress twice running gives up until the next trigger.
        var fruitlessCatchUps = 0
        while true {
            switch nextStep() {
            case .deliver(let event): return event
            case .done: return nil
            case .catchUp(let since):
                switch catchUp(since: since) {
                case .gap(let event): return event
                case .read(let progressed):
                    fruitlessCatchUps = progressed ? 0 : fruitlessCatchUps + 1
                    if fruitlessCatchUps >= 2 { return nil }
                case .failed:
                    return nil
                }
            }
        }
    }

    private func nextStep() -> Step {
        lock.withLock {
            guard !observers.isEmpty, !stopped else {
                pending.removeAll()
                catchUpRequested = false
                return .done
            }
            pending.removeAll { $0.token <= deliveredThrough }
            if let first = pending.first, first.token <= completeThrough || first.token == deliveredThrough + 1 {
                pending.removeFirst()
                deliveredThrough = first.token
                return .deliver(.committed(first, isLocal: first.origin == origin))
            }
            guard !pending.isEmpty || catchUpRequested else { return .done }
            catchUpRequested = false
            return .catchUp(since: deliveredThrough)
        }
    }

    private enum CatchUp {
        case gap(StoreEvent)
        /// The history was read; `progressed` when it held something not pending before.
        case read(progressed: Bool)
        case failed
    }

    /// Reads the history after `since` into `pending`. When the history cannot be read now,
    /// the pending commits wait for the next commit or poll: delivering them would skip the
    /// unread ones.
    private func catchUp(since: Int64) -> CatchUp {
        do {
            let entries = try history.entries(since)
            return lock.withLock {
                guard deliveredThrough == since, let newest = entries.last?.token else { return .read(progressed: false) }
                pending = entries + pending.filter { $0.token > newest }
                let before = completeThrough
                completeThrough = max(completeThrough, newest)
                return .read(progressed: completeThrough > before)
            }
        } catch let error as StoreError where error.kind == .historyTrimmed || error.kind == .decoding {
            // An entry this program cannot read (written by another program, or damaged)
            // is as good as trimmed: the observers refetch, and the entries after it are
            // read as they come. Waiting for it to become readable would stall them all.
            let current = (try? history.currentToken()) ?? since
            lock.withLock {
                deliveredThrough = max(deliveredThrough, current)
                completeThrough = max(completeThrough, current)
                pending.removeAll { $0.token <= current }
            }
            return .gap(.historyGap(currentToken: current))
        } catch {
            lock.withLock { catchUpRequested = true }
            return .failed
        }
    }

    package func stop() {
        lock.withLock {
            stopped = true
            observers.removeAll()
            pending.removeAll()
        }
        remoteSource?.stop()
    }
}
