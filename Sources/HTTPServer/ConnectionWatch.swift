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
/// It also notices a streaming client that has hung up: a suspended connection is not polled
/// by libmicrohttpd, so without this its stream (and the client's per-address slot) would
/// last until the next heartbeat failed to send.
///
/// `@unchecked Sendable`: `clocks` is guarded by `lock`.
final class ConnectionWatch: @unchecked Sendable {
    private struct Clock {
        var socket: Int32
        /// Waiting for a whole request since then; nil once it has arrived, while it is served.
        var waitingSince: UInt64?
        /// Called once when the client of a streamed response has closed its end.
        var onHangUp: (@Sendable () -> Void)?
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

    /// The connection now streams its response; `onHangUp` is called once if the client
    /// closes its end while it does.
    func streaming(_ connection: OpaquePointer, onHangUp: @escaping @Sendable () -> Void) {
        lock.lock()
        clocks[connection]?.onHangUp = onHangUp
        lock.unlock()
    }

    func requestEnded(_ connection: OpaquePointer) {
        lock.lock()
        clocks[connection]?.waitingSince = DispatchTime.now().uptimeNanoseconds
        clocks[connection]?.onHangUp = nil
        lock.unlock()
    }

    func closed(_ connection: OpaquePointer) {
        lock.lock()
        clocks.removeValue(forKey: connection)
        lock.unlock()
    }

    private func closeLateConnections() {
        let now = DispatchTime.now().uptimeNanoseconds
        var hungUp: [@Sendable () -> Void] = []
        lock.lock()
        for (connection, clock) in clocks where clock.socket >= 0 {
            if let onHangUp = clock.onHangUp, Self.peerClosed(clock.socket) {
                hungUp.append(onHangUp)
                clocks[connection]?.onHangUp = nil
            }
            // A clock set after `now` was read (a request that ended meanwhile) is younger.
            guard let since = clock.waitingSince, since < now, now - since > requestNanoseconds else { continue }
            _ = shutdown(clock.socket, Int32(SHUT_RDWR))
            clocks[connection]?.waitingSince = nil
        }
        lock.unlock()
        for handler in hungUp { handler() }
    }

    /// Whether the peer has closed its end: a stream's client sends nothing after its
    /// request, so a readable socket with no bytes is one at its end (or reset).
    private static func peerClosed(_ socket: Int32) -> Bool {
        var byte: UInt8 = 0
        let received = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return received == 0 || (received < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }
}
