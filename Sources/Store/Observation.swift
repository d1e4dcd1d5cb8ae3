import CSQLite
import Foundation

/// What an observer of the store is told.
public enum StoreEvent: Sendable {
    /// A transaction was committed, by this store object (`isLocal`) or by another
    /// process or store object on the same file.
    case committed(HistoryEntry, isLocal: Bool)
    /// Commits were missed because their history was trimmed before it could be read:
    /// whatever the observer derived from the store must be refetched.
    case historyGap(currentToken: Int64)
}

/// A registration of an observer. Cancelled by `cancel()` or when released; no event is
/// delivered after either.
public final class StoreObservation: Sendable {
    private let notifier: ChangeNotifier
    private let id: Int

    init(notifier: ChangeNotifier, id: Int) {
        self.notifier = notifier
        self.id = id
    }

    public func cancel() { notifier.removeObserver(id) }

    deinit { notifier.removeObserver(id) }
}

extension Store {
    /// Calls `handler` after every commit that changed something: at once (on the
    /// committing thread) for this store's own commits, within `observationInterval` for
    /// other processes'. Events arrive one at a time, in commit order per origin.
    public func observe(_ handler: @escaping @Sendable (StoreEvent) -> Void) -> StoreObservation {
        StoreObservation(notifier: notifier, id: notifier.addObserver(handler))
    }

    /// The events of `observe` as an asynchronous sequence; observing ends when the
    /// sequence's consumer stops iterating.
    public func events() -> AsyncStream<StoreEvent> {
        AsyncStream { continuation in
            let observation = observe { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }
}

/// Keeps the observers and hands them events in order.
///
/// `@unchecked Sendable`: `state` is guarded by `lock`; delivery is serialized by
/// `deliveryLock` (recursive, so a handler may write to the store).
final class ChangeNotifier: @unchecked Sendable {
    private let lock = NSLock()
    private let deliveryLock = NSRecursiveLock()
    private var observers: [Int: @Sendable (StoreEvent) -> Void] = [:]
    private var pending: [StoreEvent] = []
    private var nextID = 0
    private var stopped = false
    /// Watches for other processes' commits while anyone observes.
    var remoteSource: RemoteCommitPoller?

    var observerCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return observers.count
    }

    func addObserver(_ handler: @escaping @Sendable (StoreEvent) -> Void) -> Int {
        lock.lock()
        let id = nextID
        nextID += 1
        observers[id] = handler
        let startRemote = observers.count == 1 && !stopped
        lock.unlock()
        if startRemote { remoteSource?.start(self) }
        return id
    }

    func removeObserver(_ id: Int) {
        // Waiting for delivery to finish guarantees no callback runs after cancel returns
        // (unless cancel is called from inside a callback).
        deliveryLock.lock()
        lock.lock()
        observers.removeValue(forKey: id)
        let stopRemote = observers.isEmpty
        lock.unlock()
        deliveryLock.unlock()
        if stopRemote { remoteSource?.stop() }
    }

    func enqueue(_ event: StoreEvent) {
        lock.lock()
        if !observers.isEmpty { pending.append(event) }
        lock.unlock()
    }

    /// Delivers every pending event, oldest first.
    func deliverPending() {
        deliveryLock.lock()
        defer { deliveryLock.unlock() }
        while true {
            lock.lock()
            guard !pending.isEmpty else {
                lock.unlock()
                return
            }
            let event = pending.removeFirst()
            let handlers = observers.sorted { $0.key < $1.key }.map(\.value)
            lock.unlock()
            for handler in handlers { handler(event) }
        }
    }

    func stop() {
        lock.lock()
        stopped = true
        observers.removeAll()
        pending.removeAll()
        lock.unlock()
        remoteSource?.stop()
    }
}

/// Finds commits made by other processes: polls `PRAGMA data_version`, which changes when
/// another connection commits, and then reads only the new history entries, never the
/// tables themselves.
///
/// `@unchecked Sendable`: its mutable state is touched only on `queue`.
final class RemoteCommitPoller: @unchecked Sendable {
    private let path: String
    private let origin: String
    private let interval: TimeInterval
    private let busyMilliseconds: Int32
    private let queue = DispatchQueue(label: "store.remote-commits")
    private var timer: DispatchSourceTimer?
    private var connection: Connection?
    private var lastDataVersion: Int64 = -1
    private var lastToken: Int64 = 0

    init(path: String, origin: String, interval: TimeInterval, busyMilliseconds: Int32) {
        self.path = path
        self.origin = origin
        self.interval = interval
        self.busyMilliseconds = busyMilliseconds
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    func start(_ notifier: ChangeNotifier) {
        queue.sync {
            guard timer == nil else { return }
            do {
                let connection = try Connection(path: path, flags: SQLITE_OPEN_READWRITE)
                connection.setBusyTimeout(milliseconds: busyMilliseconds)
                try connection.execute("PRAGMA query_only = 1")
                lastToken = try History.currentToken(on: connection)
                lastDataVersion = try connection.scalar("PRAGMA data_version")?.int64 ?? -1
                self.connection = connection
            } catch {
                // Without a connection nothing can be polled; local commits still arrive.
                return
            }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
            timer.setEventHandler { [weak self, weak notifier] in
                guard let self, let notifier else { return }
                self.poll(notifier)
            }
            timer.resume()
            self.timer = timer
        }
    }

    func stop() {
        // A handler running on the queue may release the last reference to the store.
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) {
            stopOnQueue()
        } else {
            queue.sync { stopOnQueue() }
        }
    }

    private func stopOnQueue() {
        timer?.cancel()
        timer = nil
        connection = nil
    }

    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    private func poll(_ notifier: ChangeNotifier) {
        guard let connection else { return }
        do {
            let version = try connection.scalar("PRAGMA data_version")?.int64 ?? -1
            guard version != lastDataVersion else { return }
            lastDataVersion = version
            try connection.execute("BEGIN DEFERRED")
            defer { try? connection.execute("COMMIT") }
            do {
                let entries = try History.entries(since: lastToken, on: connection)
                for entry in entries where entry.origin != origin {
                    notifier.enqueue(.committed(entry, isLocal: false))
                }
                if let newest = entries.last?.token { lastToken = newest }
            } catch let error as StoreError where error.kind == .historyTrimmed {
                lastToken = try History.currentToken(on: connection)
                notifier.enqueue(.historyGap(currentToken: lastToken))
            }
        } catch {
            // A failed poll is retried at the next tick: data_version is read again, and
            // forcing a re-read makes sure nothing is skipped.
            lastDataVersion = -1
            return
        }
        notifier.deliverPending()
    }
}
