import CHTTPServer
import CMicroHTTPD
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on libmicrohttpd: its threads poll the connections with epoll; a
/// handler answers each request, now or later; a streamed response waits suspended until
/// it has bytes to send.
///
/// `@unchecked Sendable`: the mutable state is guarded by `lock`; libmicrohttpd calls in
/// on its own threads.
public final class HTTPServer: @unchecked Sendable {
    /// The address the server was asked to listen at.
    public let address: ListenAddress
    /// What the server accepts at most, and how long it waits.
    public let limits: HTTPServerLimits
    private let handler: any HTTPHandler
    private let log: @Sendable (HTTPRequestRecord) -> Void
    private var daemon: OpaquePointer?
    /// The port it listens on (the one chosen when asked for port 0).
    public private(set) var port: UInt16 = 0

    private let lock = NSLock()
    /// Signalled (under `lock`) when a request ends: what a draining `stop` waits for.
    private let requestEnded = NSCondition()
    private var stopping = false
    private var stopped = false
    private var requestsInFlight = 0
    private var streams: [ObjectIdentifier: EventStream] = [:]
    /// Requests whose answer is being worked out while their connection waits suspended:
    /// libmicrohttpd aborts the process if it is stopped while one is.
    private var waiting: [ObjectIdentifier: (state: RequestState, connection: ConnectionBox)] = [:]
    private let watch: ConnectionWatch

    /// Starts listening at once; throws `HTTPServerError` when it cannot.
    public init(address: ListenAddress, limits: HTTPServerLimits = HTTPServerLimits(), handler: any HTTPHandler,
                log: @escaping @Sendable (HTTPRequestRecord) -> Void = { _ in }) throws {
        self.address = address
        self.limits = limits
        self.handler = handler
        self.log = log
        self.watch = ConnectionWatch(requestSeconds: limits.requestSeconds)
        let loadError = String(cString: tr_http_load_error())
        guard loadError.isEmpty else {
            throw HTTPServerError("libmicrohttpd cannot be loaded (\(loadError)); install it: apt-get install libmicrohttpd12")
        }
        guard var socketAddress = address.socketAddress() else {
            throw HTTPServerError("\(address.host) is not a numeric IP address")
        }
        var cLimits = tr_http_limits(connection_limit: UInt32(clamping: limits.connections),
                                     per_address_connection_limit: UInt32(clamping: limits.connectionsPerAddress),
                                     idle_timeout_seconds: UInt32(clamping: limits.idleSeconds),
                                     connection_memory_limit: Self.connectionMemory(for: limits),
                                     threads: UInt32(clamping: limits.threads))
        let context = Unmanaged.passUnretained(self).toOpaque()
        errno = 0
        daemon = socketAddress.withUnsafeMutableBytes { bytes in
            tr_http_start(bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), &cLimits,
                          accessCallback, context, completedCallback, context, connectionCallback, context)
        }
        guard let daemon else {
            let reason = errno == 0 ? "" : ": \(String(cString: strerror(errno)))"
            throw HTTPServerError("cannot listen on \(address)\(reason)")
        }
        port = tr_http_bound_port(daemon)
        watch.start()
    }

    /// libmicrohttpd's memory per connection, which also bounds the request head it can
    /// read: twice the head limit, so a head somewhat over the limit still gets the
    /// handler's 413 (past about 1.7 times the limit, libmicrohttpd answers 431 itself).
    /// Every open connection holds it, so it is what 10,000 change streams cost.
    static func connectionMemory(for limits: HTTPServerLimits) -> Int {
        max(limits.headerBytes * 2, 8 * 1024)
    }

    /// Stops: accepts no more connections, ends every stream, lets the requests in flight
    /// finish for up to `timeout` seconds, then closes every connection.
    public func stop(drainingFor timeout: TimeInterval = 4) {
        lock.lock()
        guard !stopping, let daemon else { lock.unlock(); return }
        stopping = true
        lock.unlock()
        // libmicrohttpd hands the listening socket back: closed now, a new connection is
        // refused at once instead of waiting in the backlog for an answer that never comes.
        let socket = tr_http_quiesce(daemon)
        if socket >= 0 { close(socket) }
        lock.lock()
        let open = Array(streams.values)
        lock.unlock()
        for stream in open { stream.finish() }
        waitForRequestsToEnd(until: Date().addingTimeInterval(timeout))
        answerWaitingRequests(within: 1)
        watch.stop()
        lock.lock()
        stopped = true
        lock.unlock()
        tr_http_stop(daemon, -1)
        self.daemon = nil
    }

    /// Answers every request still waiting for its handler with 503 and wakes its
    /// connection, then gives libmicrohttpd up to `seconds` to send those answers: no
    /// connection may be suspended when the daemon stops.
    private func answerWaitingRequests(within seconds: TimeInterval) {
        lock.lock()
        let left = Array(waiting.values)
        waiting.removeAll()
        lock.unlock()
        let shuttingDown = shuttingDownResponse
        for (state, box) in left where state.deliverIfWaiting(shuttingDown) {
            tr_http_resume(box.connection)
        }
        waitForRequestsToEnd(until: Date().addingTimeInterval(seconds))
    }

    /// Waits until no request is in flight, or `deadline`.
    private func waitForRequestsToEnd(until deadline: Date) {
        requestEnded.lock()
        defer { requestEnded.unlock() }
        while activeRequests > 0 {
            if !requestEnded.wait(until: deadline) { return }
        }
    }

    /// Requests that started and have not ended.
    public var activeRequests: Int {
        lock.lock()
        defer { lock.unlock() }
        return requestsInFlight
    }

    /// Streamed responses open now.
    public var openStreams: Int {
        lock.lock()
        defer { lock.unlock() }
        return streams.count
    }

    deinit { stop(drainingFor: 0) }

    // MARK: Calls from libmicrohttpd

    fileprivate func handle(_ connection: OpaquePointer, url: String, method: String, version: String, upload: UnsafePointer<CChar>?,
                            uploadSize: UnsafeMutablePointer<Int>, state slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        let target = AbsoluteForm.split(url)
        let path = target?.path ?? url
        guard let existing = slot.pointee else {
            let state = RequestState(method: method, path: path, clientAddress: Self.clientAddress(connection))
            slot.pointee = Unmanaged.passRetained(state).toOpaque()
            lock.lock()
            requestsInFlight += 1
            lock.unlock()
            if let refusal = refusal(of: RequestHead(method: method, path: path, version: version, authority: target?.authority,
                                                      arguments: Self.values(connection, .GET_ARGUMENT_KIND),
                                                      headers: Self.values(connection, .HEADER_KIND))) {
                return queue(refusal, on: connection, state: state)
            }
            return .YES
        }
        let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if let upload, !state.bodyTooLarge {
                if state.body.count + uploadSize.pointee > limits.bodyBytes {
                    state.bodyTooLarge = true
                    state.body = []
                } else {
                    state.body.append(contentsOf: UnsafeRawBufferPointer(start: upload, count: uploadSize.pointee))
                }
            }
            uploadSize.pointee = 0
            return .YES
        }
        watch.requestReceived(connection)
        switch state.take() {
        case .ready(let response):
            return queue(response, on: connection, state: state)
        case .waiting, .sent:
            return .YES
        case .new:
            break
        }
        if state.bodyTooLarge {
            return queue(handler.refusal(status: 413, message: "the request's body is larger than \(limits.bodyBytes) bytes"),
                         on: connection, state: state)
        }
        var headers = Self.headers(connection)
        if let authority = target?.authority { headers["host"] = authority }  // the target's authority wins (RFC 9112 §3.2.2)
        let request = HTTPRequest(method: method, path: path, arguments: Self.values(connection, .GET_ARGUMENT_KIND),
                                  headers: headers, body: state.body, clientAddress: state.clientAddress)
        state.arguments = request.arguments
        if isStopping {
            // A request that arrives on a kept-alive connection while the server drains is
            // not begun: a pass or a fetch started now would only be cut off.
            return queue(shuttingDownResponse, on: connection, state: state)
        }
        switch handler.reply(to: request) {
        case .now(let response):
            return queue(response, on: connection, state: state)
        case .later(let work):
            answerLater(work, on: connection, state: state)
            return .YES
        }
    }

    /// The answer to a request the stopping server will not begin or finish.
    private var shuttingDownResponse: HTTPResponse {
        var response = handler.refusal(status: 503, message: "the server is shutting down")
        response.headers.append(("Connection", "close"))
        return response
    }

    private var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    /// Suspends the connection until `work` has the answer (or the server, stopping,
    /// answers 503 first: whichever comes first is sent, once).
    private func answerLater(_ work: @escaping @Sendable () async -> HTTPResponse, on connection: OpaquePointer, state: RequestState) {
        state.wait()
        let box = ConnectionBox(connection)
        let key = ObjectIdentifier(state)
        lock.lock()
        waiting[key] = (state, box)
        lock.unlock()
        tr_http_suspend(connection)
        Task { [self] in
            let response = await work()
            _ = lock.withLock { waiting.removeValue(forKey: key) }
            if state.deliverIfWaiting(response) { resumeUnlessStopped(box) }
        }
    }

    /// The answer to a request refused on its line and headers alone, before any of its body
    /// is read; the connection is closed after it (what follows may not be a request).
    private func refusal(of head: RequestHead) -> HTTPResponse? {
        var response: HTTPResponse
        if head.size > limits.headerBytes {
            response = handler.refusal(status: 413, message: "the request's line and headers are larger than \(limits.headerBytes) bytes")
        } else if let problem = head.framingProblem {
            response = handler.refusal(status: problem.status, message: problem.message)
        } else if let declared = head.headers.first(where: { $0.name.lowercased() == "content-length" })?.value,
                  let length = Int(declared.trimmingCharacters(in: .whitespaces)), length > limits.bodyBytes {
            response = handler.refusal(status: 413, message: "the request's body is larger than \(limits.bodyBytes) bytes")
        } else {
            return nil
        }
        response.headers.append(("Connection", "close"))
        return response
    }

    /// A connection may be resumed only while the daemon runs.
    private func resumeUnlessStopped(_ box: ConnectionBox) {
        lock.lock()
        defer { lock.unlock() }
        if !stopped { tr_http_resume(box.connection) }
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer, state: RequestState) -> MHD_Result {
        state.status = response.status
        let made: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            state.bytes = bytes.count
            made = bytes.withUnsafeBytes { tr_http_buffer_response($0.baseAddress, $0.count) }
        case .stream(let stream):
            state.stream = stream
            stream.attach(to: connection)
            let retained = Unmanaged.passRetained(stream).toOpaque()
            made = tr_http_stream_response(16 * 1024, streamReader, retained, streamFreed)
            if made == nil { Unmanaged<EventStream>.fromOpaque(retained).release() }
            tr_http_set_idle_timeout(connection, 0)
            watch.streaming(connection) { [weak stream] in stream?.finish() }
            register(stream)
        }
        guard let made else { return .NO }
        for header in response.headers { _ = tr_http_add_header(made, header.name, header.value) }
        let queued = tr_http_queue(connection, UInt32(clamping: response.status), made)
        tr_http_destroy_response(made)
        return queued == 0 ? .YES : .NO
    }

    private func register(_ stream: EventStream) {
        let key = ObjectIdentifier(stream)
        lock.lock()
        streams[key] = stream
        let finishing = stopping
        lock.unlock()
        if finishing { stream.finish() }
        stream.onClose { [weak self] in
            guard let self else { return }
            lock.lock()
            streams.removeValue(forKey: key)
            lock.unlock()
        }
    }

    fileprivate func completed(_ connection: OpaquePointer?, state slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                               reason: MHD_RequestTerminationCode) {
        guard let slot, let pointer = slot.pointee else { return }
        slot.pointee = nil
        let state = Unmanaged<RequestState>.fromOpaque(pointer).takeRetainedValue()
        lock.lock()
        requestsInFlight -= 1
        lock.unlock()
        requestEnded.withLock { requestEnded.broadcast() }
        if let connection { watch.requestEnded(connection) }
        let bytes = state.stream?.bytesSent ?? state.bytes
        log(HTTPRequestRecord(method: state.method, path: state.path, arguments: state.arguments, status: state.status, bytes: bytes,
                              seconds: Double(DispatchTime.now().uptimeNanoseconds - state.started) / 1e9,
                              clientAddress: state.clientAddress, interrupted: reason != .REQUEST_TERMINATED_COMPLETED_OK))
    }

    fileprivate func connectionEvent(_ connection: OpaquePointer?, code: MHD_ConnectionNotificationCode) {
        guard let connection else { return }
        if code == .CONNECTION_NOTIFY_STARTED {
            watch.opened(connection, socket: tr_http_socket(connection))
        } else {
            watch.closed(connection)
        }
    }

    // MARK: Reading what libmicrohttpd parsed

    private static func clientAddress(_ connection: OpaquePointer) -> String {
        var text = [CChar](repeating: 0, count: 64)
        guard tr_http_client_address(connection, &text, text.count) == 0 else { return "" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [(name: String, value: String?)] {
        var collected = ValueCollector()
        withUnsafeMutablePointer(to: &collected) { pointer in
            _ = tr_http_values(connection, kind, { context, _, key, value in
                guard let context, let key else { return .YES }
                let collector = context.assumingMemoryBound(to: ValueCollector.self)
                collector.pointee.values.append((String(decoding: UnsafeRawBufferPointer(start: key, count: strlen(key)), as: UTF8.self),
                                                 value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) }))
                return .YES
            }, pointer)
        }
        return collected.values
    }

    private static func headers(_ connection: OpaquePointer) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in values(connection, .HEADER_KIND) where headers[name.lowercased()] == nil {
            headers[name.lowercased()] = value ?? ""
        }
        return headers
    }
}

/// Why a server could not start.
public struct HTTPServerError: Error, CustomStringConvertible {
    /// Why, in a sentence for people.
    public let description: String
    init(_ description: String) { self.description = description }
}

private struct ValueCollector {
    var values: [(name: String, value: String?)] = []
}

/// A connection pointer handed to the task that answers later (libmicrohttpd keeps the
/// connection while it is suspended).
///
/// `@unchecked Sendable`: the pointer is only handed to libmicrohttpd's resume, which may
/// be called from any thread.
private struct ConnectionBox: @unchecked Sendable {
    let connection: OpaquePointer
    init(_ connection: OpaquePointer) { self.connection = connection }
}

/// One request's state between libmicrohttpd's calls.
///
/// `@unchecked Sendable`: `outcome` is guarded by `lock`; the rest is touched only on the
/// connection's polling thread.
private final class RequestState: @unchecked Sendable {
    enum Outcome { case new, waiting, ready(HTTPResponse), sent }

    let method: String
    let path: String
    let clientAddress: String
    let started = DispatchTime.now().uptimeNanoseconds
    var body: [UInt8] = []
    var bodyTooLarge = false
    var arguments: [(name: String, value: String?)] = []
    var status = 0
    var bytes = 0
    var stream: EventStream?
    private let lock = NSLock()
    private var outcome = Outcome.new

    init(method: String, path: String, clientAddress: String) {
        self.method = method
        self.path = path
        self.clientAddress = clientAddress
    }

    func wait() {
        lock.lock()
        outcome = .waiting
        lock.unlock()
    }

    /// Sets the answer if none is set yet; true when this call set it (and so must wake the
    /// connection).
    func deliverIfWaiting(_ response: HTTPResponse) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard case .waiting = outcome else { return false }
        outcome = .ready(response)
        return true
    }

    /// The outcome; a ready response is taken (queued once).
    func take() -> Outcome {
        lock.lock()
        defer { lock.unlock() }
        let current = outcome
        if case .ready = current { outcome = .sent }
        return current
    }
}

// MARK: C callbacks

private func server(_ context: UnsafeMutableRawPointer?) -> HTTPServer? {
    context.map { Unmanaged<HTTPServer>.fromOpaque($0).takeUnretainedValue() }
}

private let accessCallback: MHD_AccessHandlerCallback = { context, connection, url, method, version, upload, uploadSize, slot in
    guard let server = server(context), let connection, let url, let method, let uploadSize, let slot else { return .NO }
    return server.handle(connection, url: String(cString: url), method: String(cString: method),
                         version: version.map { String(cString: $0) } ?? "", upload: upload,
                         uploadSize: uploadSize, state: slot)
}

private let completedCallback: MHD_RequestCompletedCallback = { context, connection, slot, reason in
    server(context)?.completed(connection, state: slot, reason: reason)
}

private let connectionCallback: MHD_NotifyConnectionCallback = { context, connection, _, code in
    server(context)?.connectionEvent(connection, code: code)
}

private let streamReader: MHD_ContentReaderCallback = { context, _, buffer, capacity in
    guard let context, let buffer else { return -2 }
    return Unmanaged<EventStream>.fromOpaque(context).takeUnretainedValue().read(into: buffer, capacity: capacity)
}

private let streamFreed: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let stream = Unmanaged<EventStream>.fromOpaque(context).takeRetainedValue()
    stream.connectionClosed()
}
