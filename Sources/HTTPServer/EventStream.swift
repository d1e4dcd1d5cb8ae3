import CHTTPServer
import Foundation

/// The body of a response that stays open (Server-Sent Events): bytes written to it are
/// sent as they come, and the connection waits, suspended, without polling, while there are
/// none.
///
/// A write is refused, and the stream ended, when more than `maximumBufferedBytes` are still
/// unsent from earlier writes: a client that reads slower than the stream is written has its
/// stream ended (an event cut short at the end of a stream is discarded by EventSource), and
/// may reconnect to catch up. A client that has caught up takes one write of any size (a
/// snapshot of a long list), so the stream holds at most the limit plus one write.
///
/// `@unchecked Sendable`: every mutable property is guarded by `lock`.
public final class EventStream: @unchecked Sendable {
    private let lock = NSLock()
    /// Bytes written, of which those before `pendingStart` are sent.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var sent = 0
    private var finished = false
    private var closed = false
    private var suspended = false
    private var connection: OpaquePointer?
    private var closeHandlers: [@Sendable () -> Void] = []
    /// Bytes the stream may hold unsent before it is ended.
    public let maximumBufferedBytes: Int

    /// An open stream holding at most `maximumBufferedBytes` unsent.
    public init(maximumBufferedBytes: Int = 1 << 20) {
        self.maximumBufferedBytes = maximumBufferedBytes
    }

    /// Queues bytes to send; false when the stream has ended (or ends now, overflowing).
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !finished, !closed else { return false }
        guard pending.count - pendingStart <= maximumBufferedBytes else {
            pending.removeAll()
            pendingStart = 0
            finished = true
            wakeLocked()
            return false
        }
        // Dropping what was sent only now and then keeps reading a long write linear.
        if pendingStart > 0, pendingStart >= pending.count / 2 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        pending.append(contentsOf: bytes)
        wakeLocked()
        return true
    }

    /// Ends the stream once what was written is sent.
    public func finish() {
        lock.lock()
        defer { lock.unlock() }
        finished = true
        wakeLocked()
    }

    /// Whether the stream has ended or its connection closed.
    public var isEnded: Bool {
        lock.lock()
        defer { lock.unlock() }
        return finished || closed
    }

    /// Calls `handler` once the connection is over (at once if it is).
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        lock.lock()
        if closed {
            lock.unlock()
            handler()
            return
        }
        closeHandlers.append(handler)
        lock.unlock()
    }

    /// Bytes the client has been handed so far.
    var bytesSent: Int {
        lock.lock()
        defer { lock.unlock() }
        return sent
    }

    // MARK: Called by the server

    func attach(to connection: OpaquePointer) {
        lock.lock()
        self.connection = connection
        lock.unlock()
    }

    /// libmicrohttpd asks for up to `capacity` bytes: what is pending, the end, or nothing
    /// yet, in which case the connection is suspended until `write` or `finish` resumes it.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let unsent = pending.count - pendingStart
        if unsent > 0 {
            let count = min(capacity, unsent)
            pending.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return }
                UnsafeMutableRawPointer(buffer).copyMemory(from: base + pendingStart, byteCount: count)
            }
            pendingStart += count
            // An idle stream keeps no buffer: 10,000 subscribers would each hold a snapshot's worth.
            if pendingStart == pending.count {
                pending = []
                pendingStart = 0
            }
            sent += count
            return count
        }
        if finished { return Self.endOfStream }
        if let connection, !suspended {
            suspended = true
            tr_http_suspend(connection)
        }
        return 0
    }

    /// libmicrohttpd's MHD_CONTENT_READER_END_OF_STREAM.
    static let endOfStream = -1

    /// The connection is over: the response was freed.
    func connectionClosed() {
        lock.lock()
        closed = true
        finished = true
        pending.removeAll()
        pendingStart = 0
        connection = nil
        let handlers = closeHandlers
        closeHandlers.removeAll()
        lock.unlock()
        for handler in handlers { handler() }
    }

    private func wakeLocked() {
        guard suspended, let connection else { return }
        suspended = false
        tr_http_resume(connection)
    }
}
