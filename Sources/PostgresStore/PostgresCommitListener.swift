import Foundation
import PostgreSQL
import Store

/// Tells a notifier of commits by other sessions of a PostgreSQL store: listens on the
/// history's channel (`PostgresHistorySchema.channel`, sent by each commit) on a
/// connection of its own, on a thread of its own that sleeps in `poll(2)` between
/// notifications, so an idle listener uses no CPU and polls nothing.
///
/// A connection lost (server restart, network cut, terminated session) is made again,
/// waiting longer after each failure (up to `maximumRetryPause`); once listening again it
/// has the notifier read the history after its last token, so nothing committed while it
/// was away is lost, and nothing is delivered twice.
///
/// `@unchecked Sendable`: `isRunning`, `generation` and the wake pipe are guarded by
/// `lock`; the listening connection belongs to the listening thread.
final class PostgresCommitListener: RemoteCommitSource, @unchecked Sendable {
    /// Longest pause between attempts to connect again.
    static let maximumRetryPause: TimeInterval = 2
    /// How soon a catch-up that failed (the store's own connection was lost too) is tried
    /// again while the listener waits.
    static let catchUpRetryPause: TimeInterval = 0.2

    private let location: String
    private let lock = NSLock()
    /// Guarded by `lock`: whether a listening thread should be running, and its wake pipe.
    private var isRunning = false
    private var generation = 0
    private var wakeWriter: Int32 = -1

    init(location: String) {
        self.location = location
    }

    func start(_ notifier: ChangeNotifier) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { return }
        let generation = lock.withLock { () -> Int? in
            guard !isRunning else { return nil }
            isRunning = true
            self.generation += 1
            wakeWriter = descriptors[1]
            return self.generation
        }
        guard let generation else {
            close(descriptors[0])
            close(descriptors[1])
            return
        }
        let wakeReader = descriptors[0]
        let thread = Thread { [weak notifier, self] in
            self.listen(notifier, generation: generation, wakeReader: wakeReader)
            close(wakeReader)
        }
        thread.name = "topregions.store.listener"
        thread.start()
    }

    func stop() {
        lock.withLock {
            guard isRunning else { return }
            isRunning = false
            // The thread closes the read end; this end is closed here, which wakes it too.
            var byte: UInt8 = 1
            _ = write(wakeWriter, &byte, 1)
            close(wakeWriter)
            wakeWriter = -1
        }
    }

    private func shouldRun(_ generation: Int) -> Bool {
        lock.withLock { isRunning && self.generation == generation }
    }

    private func listen(_ notifier: ChangeNotifier?, generation: Int, wakeReader: Int32) {
        weak var notifier = notifier
        var connection: PostgresConnection?
        var retryPause = 0.05
        while shouldRun(generation) {
            guard let listening = connection else {
                do {
                    let fresh = try PostgresConnection(location)
                    try fresh.listen(PostgresHistorySchema.channel)
                    connection = fresh
                    retryPause = 0.05
                    // Commits made while no one listened are in the history.
                    notifier?.requestCatchUp()
                    notifier?.deliverPending()
                } catch {
                    wait(retryPause, wakeReader: wakeReader)
                    retryPause = min(retryPause * 2, Self.maximumRetryPause)
                }
                continue
            }
            let wantsCatchUp = notifier?.wantsCatchUp ?? false
            do {
                let arrived = try listening.notifications(waitingUpTo: wantsCatchUp ? Self.catchUpRetryPause : 3600,
                                                          wakeDescriptor: wakeReader)
                if !arrived.isEmpty { notifier?.requestCatchUp() }
            } catch {
                connection = nil
                continue
            }
            guard shouldRun(generation), let notifier else { break }
            if notifier.wantsCatchUp { notifier.deliverPending() }
        }
        connection?.close()
    }

    /// Sleeps up to `seconds`, or until `stop` wakes the thread.
    private func wait(_ seconds: TimeInterval, wakeReader: Int32) {
        var descriptor = pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(seconds * 1000))
    }
}
