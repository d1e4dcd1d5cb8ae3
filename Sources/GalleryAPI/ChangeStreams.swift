import Foundation
import HTTPServer

/// The change streams a server has open: one hub (one live list, one results controller)
/// per distinct list, however many clients follow it. A hub outlives its last subscriber by
/// `lingerSeconds`, so that a client that reconnects (`Last-Event-ID`) finds the batches it
/// missed. Counts streams per client address, and sends every stream a heartbeat.
///
/// The registry's lock guards only its maps: a new list is made outside it (a fetch and
/// a read of its rows), once however many clients open it at the same time, and
/// subscribing happens under the hub's own lock; so a slow list delays no other list's
/// opening, no close and no heartbeat.
///
/// `@unchecked Sendable`: the mutable state is guarded by `lock`.
final class ChangeStreams: @unchecked Sendable {
    /// A list's hub, or the hub being made for it by the first client that opened it.
    private enum Slot {
        case ready(any ChangeStreamHub)
        case making(HubBeingMade)
    }

    private let lock = NSLock()
    private var slots: [String: Slot] = [:]
    private var streamsByAddress: [String: Int] = [:]
    /// Streams between finding their list's hub and subscribing to it, by list: a hub
    /// with some is not closed for want of subscribers.
    private var subscribing: [String: Int] = [:]
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
    /// when `isAuthorised` no longer holds (asked, of memory, before each batch and heartbeat).
    func open(_ key: String, for address: String, lastEventID: Int64?,
              isAuthorised: @escaping @Sendable () -> Bool = { true },
              makeHub: () throws -> any ChangeStreamHub) throws -> EventStream {
        try reserve(address)
        let hub: any ChangeStreamHub
        do {
            hub = try self.hub(key, makeHub)
        } catch {
            release(address)
            throw error
        }
        let stream = EventStream()
        stream.write(Self.retryAdvice)
        hub.subscribe(stream, lastEventID: lastEventID, isAuthorised: isAuthorised)
        doneSubscribing(key)
        stream.onClose { [weak self] in self?.closed(stream, key: key, address: address) }
        if lock.withLock({ closed }) { stream.finish() }
        return stream
    }

    /// Counts a stream for `address`: 429 past its limit, 503 once closed.
    private func reserve(_ address: String) throws {
        try lock.withLock {
            guard !closed else { throw APIError.shuttingDown }
            guard streamsByAddress[address, default: 0] < streamsPerAddress else {
                throw APIError(429, "too_many_streams", "at most \(streamsPerAddress) change streams per client address",
                               headers: [APIError.Header(name: "Retry-After", value: "10")])
            }
            streamsByAddress[address, default: 0] += 1
        }
    }

    private func release(_ address: String) {
        lock.withLock {
            streamsByAddress[address, default: 1] -= 1
            if streamsByAddress[address] == 0 { streamsByAddress.removeValue(forKey: address) }
        }
    }

    /// The open hub of `key`; else the one another client is making (waited for); else
    /// one made here, outside the lock.
    private func hub(_ key: String, _ makeHub: () throws -> any ChangeStreamHub) throws -> any ChangeStreamHub {
        enum Next { case use(any ChangeStreamHub), wait(HubBeingMade), make(HubBeingMade) }
        let next = lock.withLock { () -> Next in
            subscribing[key, default: 0] += 1
            switch slots[key] {
            case .ready(let hub) where !hub.isEnded: return .use(hub)
            case .making(let making): return .wait(making)
            default:
                let making = HubBeingMade()
                slots[key] = .making(making)
                return .make(making)
            }
        }
        switch next {
        case .use(let hub):
            return hub
        case .wait(let making):
            return try unlessFailed(key) { try making.result().get() }
        case .make(let making):
            let made = Result { try makeHub() }
            lock.withLock {
                if case .success(let hub) = made, !closed { slots[key] = .ready(hub) } else { slots.removeValue(forKey: key) }
            }
            making.finish(made)
            if case .success(let hub) = made, lock.withLock({ closed }) { hub.close() }
            return try unlessFailed(key) { try made.get() }
        }
    }

    private func doneSubscribing(_ key: String) {
        lock.withLock {
            subscribing[key, default: 1] -= 1
            if subscribing[key] == 0 { subscribing.removeValue(forKey: key) }
        }
    }

    /// `body`'s hub; when it throws, the stream is no longer subscribing.
    private func unlessFailed(_ key: String, _ body: () throws -> any ChangeStreamHub) throws -> any ChangeStreamHub {
        do {
            return try body()
        } catch {
            doneSubscribing(key)
            throw error
        }
    }

    /// Subscribers of the list `key` (0 when no hub is open).
    func subscribers(of key: String) -> Int {
        lock.withLock { () -> Int in
            guard case .ready(let hub) = slots[key] else { return 0 }
            return hub.subscriberCount
        }
    }

    /// Hubs open now.
    var hubCount: Int { readyHubs().count }

    private func readyHubs() -> [any ChangeStreamHub] {
        lock.withLock {
            slots.values.compactMap { slot in
                if case .ready(let hub) = slot { return hub } else { return nil }
            }
        }
    }

    /// Ends every stream (their clients see the end, and may reconnect elsewhere).
    func close() {
        let open = readyHubs()
        lock.withLock {
            closed = true
            slots.removeAll()
        }
        heartbeat.cancel()
        for hub in open { hub.close() }
    }

    private func closed(_ stream: EventStream, key: String, address: String) {
        release(address)
        let hub = lock.withLock { () -> (any ChangeStreamHub)? in
            guard case .ready(let hub) = slots[key] else { return nil }
            return hub
        }
        guard let hub else { return }
        hub.unsubscribe(stream)
        guard hub.subscriberCount == 0 else { return }
        timers.asyncAfter(deadline: .now() + lingerSeconds) { [weak self] in self?.closeIfUnused(hub, key: key) }
    }

    private func closeIfUnused(_ hub: any ChangeStreamHub, key: String) {
        let unused = lock.withLock { () -> Bool in
            guard case .ready(let current) = slots[key], current === hub, subscribing[key] == nil, hub.subscriberCount == 0 else { return false }
            slots.removeValue(forKey: key)
            return true
        }
        if unused { hub.close() }
    }

    /// Ends the streams whose token no longer names their user (after users changed), off
    /// the caller's thread.
    func revokeUnauthorised() {
        timers.async { [weak self] in
            guard let self else { return }
            for hub in readyHubs() { hub.revokeUnauthorised() }
        }
    }

    private func beat() {
        for hub in readyHubs() { hub.heartbeat(Self.heartbeatComment) }
    }

    /// How long an EventSource waits before reconnecting, sent first on every stream.
    static let retryAdvice = Array("retry: 2000\n\n".utf8)
    static let heartbeatComment = Array(": heartbeat\n\n".utf8)
}

/// A hub one client is making while others that opened the same list wait for it.
///
/// `@unchecked Sendable`: `outcome` is guarded by `condition`.
private final class HubBeingMade: @unchecked Sendable {
    private let condition = NSCondition()
    private var outcome: Result<any ChangeStreamHub, any Error>?

    func finish(_ result: Result<any ChangeStreamHub, any Error>) {
        condition.withLock {
            outcome = result
            condition.broadcast()
        }
    }

    /// Waits for the maker (on a worker: the store's own timeouts bound the making).
    func result() -> Result<any ChangeStreamHub, any Error> {
        condition.withLock {
            while true {
                if let outcome { return outcome }
                condition.wait()
            }
        }
    }
}
