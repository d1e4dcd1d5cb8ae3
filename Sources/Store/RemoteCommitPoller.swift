import CSQLite
import Foundation

/// Tells a notifier when another process may have committed.
package protocol RemoteCommitSource: Sendable {
    func start(_ notifier: ChangeNotifier)
    func stop()
}

/// Finds commits made by other processes on a SQLite file: polls `PRAGMA data_version` on
/// a connection of its own, which changes when any other connection commits, and then has
/// the notifier read the new history entries (never the tables themselves).
///
/// `@unchecked Sendable`: its mutable state is touched only on `queue`.
final class RemoteCommitPoller: RemoteCommitSource, @unchecked Sendable {
    private let path: String
    private let readOnly: Bool
    private let interval: TimeInterval
    private let busyMilliseconds: Int32
    private let queue = DispatchQueue(label: "store.remote-commits")
    private var timer: DispatchSourceTimer?
    private var connection: Connection?
    private var lastDataVersion: Int64 = -1

    init(path: String, readOnly: Bool = false, interval: TimeInterval, busyMilliseconds: Int32) {
        self.path = path
        self.readOnly = readOnly
        self.interval = interval
        self.busyMilliseconds = busyMilliseconds
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    func start(_ notifier: ChangeNotifier) {
        queue.sync {
            guard timer == nil else { return }
            do {
                let connection = try Connection(path: path, flags: readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE)
                connection.setBusyTimeout(milliseconds: busyMilliseconds)
                try connection.execute("PRAGMA query_only = 1")
                lastDataVersion = try connection.scalar("PRAGMA data_version")?.int64 ?? -1
                self.connection = connection
            } catch {
                // Without a connection nothing can be polled; local commits still arrive,
                // and a local commit after a remote one still catches up on it.
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
        if let version = try? connection.scalar("PRAGMA data_version")?.int64, version != lastDataVersion {
            lastDataVersion = version
            notifier.requestCatchUp()
        }
        // Also after a catch-up that failed: it is tried again at every tick.
        if notifier.wantsCatchUp { notifier.deliverPending() }
    }
}
