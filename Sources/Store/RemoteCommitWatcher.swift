import CSQLite
import Foundation

/// Tells a notifier when another process may have committed.
package protocol RemoteCommitSource: Sendable {
    func start(_ notifier: ChangeNotifier)
    func stop()
}

/// How a SQLite store notices commits made by other processes.
public enum ObservationMethod: Sendable, Equatable {
    /// inotify on the database's directory where it sees every writer (a local file
    /// system), else polling at the store's `observationInterval`.
    case automatic
    /// `PRAGMA data_version` asked every `observationInterval`, whatever the file system.
    case polling
}

/// Finds commits made by other processes on a SQLite file. It is woken by inotify when the
/// database or its WAL is written (or, where inotify cannot see every writer, by a timer),
/// and confirms with `PRAGMA data_version` on a connection of its own, which changes when
/// any other connection commits; then the notifier reads the new history entries (never
/// the tables themselves).
///
/// A WAL frame is written before the commit that makes it visible, so an event whose check
/// finds nothing new is checked again a few times over the next quarter second.
///
/// `@unchecked Sendable`: its mutable state is touched only on `queue`.
final class RemoteCommitWatcher: RemoteCommitSource, @unchecked Sendable {
    private let path: String
    private let readOnly: Bool
    private let interval: TimeInterval
    private let busyMilliseconds: Int32
    private let useFileEvents: Bool
    private let queue = DispatchQueue(label: "store.remote-commits")
    private var timer: DispatchSourceTimer?
    private var fileEvents: DirectoryFileEvents?
    private var eventSource: DispatchSourceRead?
    private var connection: Connection?
    private var lastDataVersion: Int64 = -1
    /// Rechecks left after the last file event (each later than the one before).
    private var recheck: DispatchWorkItem?

    /// How long after a file event the version is checked again, when the check at the
    /// event found nothing new (the commit landed just after it), in microseconds: soon
    /// first (a commit is made visible microseconds after its last frame is written).
    static let recheckDelays = [200, 1_000, 4_000, 16_000, 64_000, 250_000]

    init(path: String, readOnly: Bool = false, interval: TimeInterval, busyMilliseconds: Int32, method: ObservationMethod) {
        self.path = path
        self.readOnly = readOnly
        self.interval = interval
        self.busyMilliseconds = busyMilliseconds
        let directory = (path as NSString).deletingLastPathComponent
        useFileEvents = method == .automatic && !FileSystemKind.isShared(directory.isEmpty ? "." : directory)
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    /// How commits are noticed: `inotify`, or `polling every N ms`.
    var methodDescription: String {
        useFileEvents ? "inotify" : "polling every \(Int((interval * 1000).rounded())) ms"
    }

    func start(_ notifier: ChangeNotifier) {
        queue.sync {
            guard timer == nil, eventSource == nil else { return }
            do {
                let connection = try Connection(path: path, flags: readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE)
                connection.setBusyTimeout(milliseconds: busyMilliseconds)
                try connection.execute("PRAGMA query_only = 1")
                lastDataVersion = try connection.scalar("PRAGMA data_version")?.int64 ?? -1
                self.connection = connection
            } catch {
                // Without a connection nothing can be checked; local commits still arrive,
                // and a local commit after a remote one still catches up on it.
                return
            }
            if !useFileEvents || !startFileEvents(notifier) { startPolling(notifier) }
        }
    }

    /// Waits for inotify's events on the database's directory; false when it cannot.
    private func startFileEvents(_ notifier: ChangeNotifier) -> Bool {
        let file = (path as NSString).lastPathComponent
        let directory = (path as NSString).deletingLastPathComponent
        guard let events = DirectoryFileEvents(directory: directory.isEmpty ? "." : directory,
                                               names: [file, file + "-wal", file + "-journal"]) else { return false }
        let source = DispatchSource.makeReadSource(fileDescriptor: events.descriptor, queue: queue)
        source.setEventHandler { [weak self, weak notifier] in
            guard let self, let notifier, let events = self.fileEvents else { return }
            if events.drain() { self.fileChanged(notifier) }
        }
        source.resume()
        fileEvents = events
        eventSource = source
        return true
    }

    private func startPolling(_ notifier: ChangeNotifier) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
        timer.setEventHandler { [weak self, weak notifier] in
            guard let self, let notifier else { return }
            self.check(notifier)
        }
        timer.resume()
        self.timer = timer
    }

    /// On `queue`, after the files were written: checks now, then on `recheckDelays`'
    /// schedule until a check finds a commit (and while a catch-up waits to be retried).
    private func fileChanged(_ notifier: ChangeNotifier) {
        recheck?.cancel()
        recheck = nil
        if !check(notifier) { scheduleRecheck(notifier, step: 0) }
    }

    private func scheduleRecheck(_ notifier: ChangeNotifier, step: Int) {
        let delays = Self.recheckDelays
        let item = DispatchWorkItem { [weak self, weak notifier] in
            guard let self, let notifier else { return }
            self.recheck = nil
            let found = self.check(notifier)
            // A catch-up that failed (the history was busy) is retried on the slowest step.
            if !found || notifier.wantsCatchUp, step + 1 < delays.count || notifier.wantsCatchUp {
                self.scheduleRecheck(notifier, step: min(step + 1, delays.count - 1))
            }
        }
        recheck = item
        queue.asyncAfter(deadline: .now() + .microseconds(delays[step]), execute: item)
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
        eventSource?.cancel()
        eventSource = nil
        fileEvents = nil
        recheck?.cancel()
        recheck = nil
        connection = nil
    }

    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// On `queue`: whether another connection committed since the last check; if so, the
    /// notifier catches up (and delivers).
    @discardableResult
    private func check(_ notifier: ChangeNotifier) -> Bool {
        guard let connection else { return false }
        var changed = false
        if let version = try? connection.scalar("PRAGMA data_version")?.int64, version != lastDataVersion {
            lastDataVersion = version
            changed = true
            notifier.requestCatchUp()
        }
        // Also after a catch-up that failed: it is tried again at every check.
        if notifier.wantsCatchUp { notifier.deliverPending() }
        return changed
    }
}
