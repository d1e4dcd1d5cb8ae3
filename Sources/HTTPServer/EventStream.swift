import CHTTPServer
import Foundation

/// The body of a response that stays open (Server-Sent Events): bytes written to it are
/// sent as they come, and the connection waits, suspended, without polling, while there are
/// none.
///
/// A stream holds at most `maximumBufferedBytes` unsent: a client that reads slower than
/// the stream is written has its stream ended (an event cut short at the end of a stream is
/// discarded by EventSource), and may reconnect to catch up.
///
/// `@unchecked Sendable`: every mutable property is guarded by `lock`.
public final class EventStream: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [UInt8] = []
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
        guard pending.count + bytes.count <= maximumBufferedBytes else {
            pending.removeAll()
            finished = true
            wakeLocked()
            return false
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
        if !pending.isEmpty {
            let count = min(capacity, pending.count)
            pending.withUnsafeBytes { bytes in
                UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress!, byteCount: count)
            }
            // An idle stream keeps no buffer: 10,000 subscribers would each hold a snapshot's worth.
            if count == pending.count { pending = [] } else { pending.removeFirst(count) }
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
