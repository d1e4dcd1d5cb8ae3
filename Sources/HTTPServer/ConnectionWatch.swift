import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Closes connections whose client has not sent a whole request (head and body) in time, counted
/// from when it connected or its previous response ended. libmicrohttpd's own timeout only
/// counts idle time, which a client sending one byte every few seconds resets forever.
///
/// A late connection's socket is shut down (not closed: libmicrohttpd owns the descriptor,
/// and closes it once it sees the end). The entry is removed under `lock` when
/// libmicrohttpd reports the connection closed, before it closes the descriptor, so a
/// descriptor number reused by a later connection is never shut down by mistake.
///
/// `@unchecked Sendable`: `clocks` is guarded by `lock`.
final class ConnectionWatch: @unchecked Sendable {
    private struct Clock {
        var socket: Int32
        /// Waiting for a whole request since then; nil once it has arrived, while it is served.
        var waitingSince: UInt64?
    }

    private let requestNanoseconds: UInt64
    private let lock = NSLock()
    private var clocks: [OpaquePointer: Clock] = [:]
    private var timer: DispatchSourceTimer?

    init(requestSeconds: TimeInterval) {
        requestNanoseconds = UInt64(max(0.1, requestSeconds) * 1e9)
    }

    func start() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "topregions.http.watch"))
        let interval = min(1.0, Double(requestNanoseconds) / 1e9 / 4)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.closeLateConnections() }
        timer.resume()
        self.timer = timer
    }

    func stop() {
        timer?.cancel()
        timer = nil
    }

    func opened(_ connection: OpaquePointer, socket: Int32) {
        lock.lock()
        clocks[connection] = Clock(socket: socket, waitingSince: DispatchTime.now().uptimeNanoseconds)
        lock.unlock()
    }

    /// The request's head and body have arrived: serving it (a change stream for hours)
    /// is not a late request.
    func requestReceived(_ connection: OpaquePointer) {
        lock.lock()
        clocks[connection]?.waitingSince = nil
        lock.unlock()
    }

    func requestEnded(_ connection: OpaquePointer) {
        lock.lock()
        clocks[connection]?.waitingSince = DispatchTime.now().uptimeNanoseconds
        lock.unlock()
    }

    func closed(_ connection: OpaquePointer) {
        lock.lock()
        clocks.removeValue(forKey: connection)
        lock.unlock()
    }

    private func closeLateConnections() {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        defer { lock.unlock() }
        for (connection, clock) in clocks {
            guard let since = clock.waitingSince, now - since > requestNanoseconds, clock.socket >= 0 else { continue }
            _ = shutdown(clock.socket, Int32(SHUT_RDWR))
            clocks[connection]?.waitingSince = nil
        }
    }
}
