import Foundation

/// What an observer of the store is told.
public enum StoreEvent: Sendable {
    /// A transaction was committed, by this store object (`isLocal`) or by another
    /// process or store object on the same file.
    case committed(HistoryEntry, isLocal: Bool)
    /// Commits were missed because their history was trimmed before it could be read, or
    /// holds an entry this program cannot decode: whatever the observer derived from the
    /// store must be refetched.
    case historyGap(currentToken: Int64)
}

/// A registration of an observer. Cancelled by `cancel()` or when released; no event is
/// delivered after either.
public final class StoreObservation: Sendable {
    private let notifier: ChangeNotifier
    private let id: Int

    package init(notifier: ChangeNotifier, id: Int) {
        self.notifier = notifier
        self.id = id
    }

    /// Stops the events: none is delivered once it returns (unless it is called from inside
    /// the handler). Calling it again does nothing.
    public func cancel() { notifier.removeObserver(id) }

    deinit { notifier.removeObserver(id) }
}

extension Store {
    /// Calls `handler` once for every commit that changed something, whoever made it, in
    /// token order, with no commit skipped or repeated (a `historyGap` stands for commits
    /// whose history was trimmed before they could be read).
    ///
    /// This store's own commits are delivered at once, on the committing thread, unless an
    /// earlier commit by another process has not been delivered yet: then that one is read
    /// from the history and delivered first. Other processes' commits are noticed within
    /// `observationInterval` and delivered on the store's observation queue. Events are
    /// delivered one at a time; a handler may read from or write to the store (its own
    /// commit is delivered after the handler returns).
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
