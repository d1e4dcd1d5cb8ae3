import Foundation
import HTTPServer

/// The change streams a server has open: one hub (one live list, one results controller)
/// per distinct list, however many clients follow it. A hub outlives its last subscriber by
/// `lingerSeconds`, so that a client that reconnects (`Last-Event-ID`) finds the batches it
/// missed. Counts streams per client address, and sends every stream a heartbeat.
///
/// `@unchecked Sendable`: the mutable state is guarded by `lock`.
final class ChangeStreams: @unchecked Sendable {
    private let lock = NSLock()
    private var hubs: [String: any ChangeStreamHub] = [:]
    private var streamsByAddress: [String: Int] = [:]
    private var closed = false
    private let streamsPerAddress: Int
    private let lingerSeconds: TimeInterval
    private let timers = DispatchQueue(label: "topregions.api.heartbeat")
    private let heartbeat: DispatchSourceTimer

    /// A heartbeat (an SSE comment) every `heartbeatSeconds`.
    init(streamsPerAddress: Int, heartbeatSeconds: TimeInterval, lingerSeconds: TimeInterval) {
        self.streamsPerAddress = streamsPerAddress
        self.lingerSeconds = lingerSeconds
        heartbeat = DispatchSource.makeTimerSource(queue: timers)
        heartbeat.schedule(deadline: .now() + heartbeatSeconds, repeating: heartbeatSeconds)
        heartbeat.setEventHandler { [weak self] in self?.beat() }
        heartbeat.resume()
    }

    /// Opens a stream on the list `key` (its hub made by `makeHub` when none is open) for a
    /// client at `address`; 429 past the client's limit, 503 once closed. The stream ends
    /// when `isAuthorised` no longer holds (asked before each batch and heartbeat).
    func open(_ key: String, for address: String, lastEventID: Int64?,
              isAuthorised: @escaping @Sendable () -> Bool = { true },
              makeHub: () throws -> any ChangeStreamHub) throws -> EventStream {
        let stream = EventStream()
        try lock.withLock {
            guard !closed else { throw APIError.shuttingDown }
            guard streamsByAddress[address, default: 0] < streamsPerAddress else {
                throw APIError(429, "too_many_streams", "at most \(streamsPerAddress) change streams per client address",
                               headers: [APIError.Header(name: "Retry-After", value: "10")])
            }
            let hub = try hubs[key].flatMap { $0.isEnded ? nil : $0 } ?? makeHub()
            hubs[key] = hub
            streamsByAddress[address, default: 0] += 1
            stream.write(Self.retryAdvice)
            hub.subscribe(stream, lastEventID: lastEventID, isAuthorised: isAuthorised)
        }
        stream.onClose { [weak self] in self?.closed(stream, key: key, address: address) }
        return stream
    }

    /// Subscribers of the list `key` (0 when no hub is open).
    func subscribers(of key: String) -> Int { lock.withLock { hubs[key]?.subscriberCount ?? 0 } }

    /// Hubs open now.
    var hubCount: Int { lock.withLock { hubs.count } }

    /// Ends every stream (their clients see the end, and may reconnect elsewhere).
    func close() {
        let open = lock.withLock { () -> [any ChangeStreamHub] in
            closed = true
            defer { hubs.removeAll() }
            return Array(hubs.values)
        }
        heartbeat.cancel()
        for hub in open { hub.close() }
    }

    private func closed(_ stream: EventStream, key: String, address: String) {
        let emptied = lock.withLock { () -> (any ChangeStreamHub)? in
            streamsByAddress[address, default: 1] -= 1
            if streamsByAddress[address] == 0 { streamsByAddress.removeValue(forKey: address) }
            guard let hub = hubs[key] else { return nil }
            hub.unsubscribe(stream)
            return hub.subscriberCount == 0 ? hub : nil
        }
        guard let emptied else { return }
        timers.asyncAfter(deadline: .now() + lingerSeconds) { [weak self] in self?.closeIfUnused(emptied, key: key) }
    }

    private func closeIfUnused(_ hub: any ChangeStreamHub, key: String) {
        let unused = lock.withLock { () -> Bool in
            guard let current = hubs[key], current === hub, hub.subscriberCount == 0 else { return false }
            hubs.removeValue(forKey: key)
            return true
        }
        if unused { hub.close() }
    }

    /// Asks every stream again whether its token still names its user (after a user
    /// changed), off the caller's thread.
    func recheckAuthorisation() {
        timers.async { [weak self] in
            guard let self else { return }
            for hub in lock.withLock({ Array(hubs.values) }) { hub.revokeUnauthorised() }
        }
    }

    private func beat() {
        let open = lock.withLock { Array(hubs.values) }
        for hub in open { hub.heartbeat(Self.heartbeatComment) }
    }

    /// How long an EventSource waits before reconnecting, sent first on every stream.
    static let retryAdvice = Array("retry: 2000\n\n".utf8)
    static let heartbeatComment = Array(": heartbeat\n\n".utf8)
}
