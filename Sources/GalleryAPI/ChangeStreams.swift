import Foundation
import HTTPServer

/// The change streams a server has open: one live list (one results controller) per
/// distinct list, however many clients follow it; the list fans its events out. A list
/// outlives its last subscriber by `lingerSeconds`, so that a client that reconnects
/// (`Last-Event-ID`) finds the batches it missed. Counts streams per client address, and
/// sends every stream a heartbeat.
///
/// The registry's lock guards only its maps: a new list is made outside it (a fetch),
/// once however many clients open it at the same time, and a subscriber's first events are
/// read on the list's own queue; so a slow list delays no other list's opening, no close
/// and no heartbeat.
///
/// `@unchecked Sendable`: the mutable state is guarded by `lock`.
final class ChangeStreams: @unchecked Sendable {
    /// A list, or the list being made by the first client that opened it.
    private enum Slot {
        case ready(any FollowedList, SSEFrames)
        case making(ListBeingMade)
    }

    private let lock = NSLock()
    private var slots: [String: Slot] = [:]
    private var streamsByAddress: [String: Int] = [:]
    /// Every stream open, for heartbeats and revocations.
    private var subscribers: [ObjectIdentifier: StreamSubscriber] = [:]
    /// Streams between finding their list and subscribing to it, by list: a list
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

    /// Opens a stream on the list `key` (made by `makeList` when none is open) for a client
    /// at `address`; 429 past the client's limit, 503 once closed. The stream ends when
    /// `isAuthorised` no longer holds (asked, of memory, before each event and heartbeat).
    func open(_ key: String, for address: String, lastEventID: Int64?,
              isAuthorised: @escaping @Sendable () -> Bool = { true },
              makeList: () throws -> any FollowedList) throws -> EventStream {
        try reserve(address)
        let (list, frames): (any FollowedList, SSEFrames)
        do {
            (list, frames) = try self.list(key, makeList)
        } catch {
            release(address)
            throw error
        }
        let stream = EventStream()
        stream.write(Self.retryAdvice)
        let subscriber = StreamSubscriber(stream: stream, isAuthorised: isAuthorised)
        lock.withLock { subscribers[ObjectIdentifier(subscriber)] = subscriber }
        subscriber.follow(list, after: lastEventID, frames: frames)
        doneSubscribing(key)
        stream.onClose { [weak self] in self?.closed(subscriber, list: list, key: key, address: address) }
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
        lock.withLock { Self.decrement(&streamsByAddress, address) }
    }

    /// One fewer under `key`; a count that reaches zero leaves the map.
    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        counts[key, default: 1] -= 1
        if counts[key] == 0 { counts.removeValue(forKey: key) }
    }

    /// The open list of `key`; else the one another client is making (waited for); else
    /// one made here, outside the lock.
    private func list(_ key: String, _ makeList: () throws -> any FollowedList) throws -> (any FollowedList, SSEFrames) {
        enum Next { case use(any FollowedList, SSEFrames), wait(ListBeingMade), make(ListBeingMade) }
        let next = lock.withLock { () -> Next in
            subscribing[key, default: 0] += 1
            switch slots[key] {
            case .ready(let list, let frames) where !list.hasEnded: return .use(list, frames)
            case .making(let making): return .wait(making)
            default:
                let making = ListBeingMade()
                slots[key] = .making(making)
                return .make(making)
            }
        }
        switch next {
        case .use(let list, let frames):
            return (list, frames)
        case .wait(let making):
            return try unlessFailed(key) { try making.result().get() }
        case .make(let making):
            let made = Result { (try makeList(), SSEFrames()) }
            lock.withLock {
                if case .success(let (list, frames)) = made, !closed { slots[key] = .ready(list, frames) } else { slots.removeValue(forKey: key) }
            }
            making.finish(made)
            if case .success(let (list, _)) = made, lock.withLock({ closed }) { list.close() }
            return try unlessFailed(key) { try made.get() }
        }
    }

    private func doneSubscribing(_ key: String) {
        lock.withLock { Self.decrement(&subscribing, key) }
    }

    /// `body`'s list; when it throws, the stream is no longer subscribing.
    private func unlessFailed<Made>(_ key: String, _ body: () throws -> Made) throws -> Made {
        do {
            return try body()
        } catch {
            doneSubscribing(key)
            throw error
        }
    }

    /// Subscribers of the list `key` (0 when none is open).
    func subscribers(of key: String) -> Int {
        lock.withLock { () -> Int in
            guard case .ready(let list, _) = slots[key] else { return 0 }
            return list.subscriberCount
        }
    }

    /// Lists open now.
    var listCount: Int { readyLists().count }

    private func readyLists() -> [any FollowedList] {
        lock.withLock {
            slots.values.compactMap { slot in
                if case .ready(let list, _) = slot { return list } else { return nil }
            }
        }
    }

    /// Ends every stream (their clients see the end, and may reconnect elsewhere).
    func close() {
        let (lists, open) = lock.withLock { () -> ([any FollowedList], [StreamSubscriber]) in
            closed = true
            let lists = slots.values.compactMap { slot -> (any FollowedList)? in
                if case .ready(let list, _) = slot { return list } else { return nil }
            }
            slots.removeAll()
            return (lists, Array(subscribers.values))
        }
        heartbeat.cancel()
        for subscriber in open { subscriber.revoke() }
        for list in lists { list.close() }
    }

    private func closed(_ subscriber: StreamSubscriber, list: any FollowedList, key: String, address: String) {
        subscriber.cancel()
        release(address)
        lock.withLock { _ = subscribers.removeValue(forKey: ObjectIdentifier(subscriber)) }
        guard list.subscriberCount == 0 else { return }
        timers.asyncAfter(deadline: .now() + lingerSeconds) { [weak self] in self?.closeIfUnused(list, key: key) }
    }

    private func closeIfUnused(_ list: any FollowedList, key: String) {
        let unused = lock.withLock { () -> Bool in
            guard case .ready(let current, _) = slots[key], current === list, subscribing[key] == nil, list.subscriberCount == 0 else { return false }
            slots.removeValue(forKey: key)
            return true
        }
        if unused { list.close() }
    }

    /// Ends the streams whose token no longer names their user (after users changed), off
    /// the caller's thread.
    func revokeUnauthorised() {
        timers.async { [weak self] in
            guard let self else { return }
            for subscriber in lock.withLock({ Array(subscribers.values) }) where !subscriber.isAuthorised() { subscriber.revoke() }
        }
    }

    private func beat() {
        for subscriber in lock.withLock({ Array(subscribers.values) }) { subscriber.heartbeat(Self.heartbeatComment) }
    }

    /// How long an EventSource waits before reconnecting, sent first on every stream.
    static let retryAdvice = Array("retry: 2000\n\n".utf8)
    static let heartbeatComment = Array(": heartbeat\n\n".utf8)
}

/// A list one client is making while others that opened the same list wait for it.
///
/// `@unchecked Sendable`: `outcome` is guarded by `condition`.
private final class ListBeingMade: @unchecked Sendable {
    private let condition = NSCondition()
    private var outcome: Result<(any FollowedList, SSEFrames), any Error>?

    func finish(_ result: Result<(any FollowedList, SSEFrames), any Error>) {
        condition.withLock {
            outcome = result
            condition.broadcast()
        }
    }

    /// Waits for the maker (on a worker: the store's own timeouts bound the making).
    func result() -> Result<(any FollowedList, SSEFrames), any Error> {
        condition.withLock {
            while true {
                if let outcome { return outcome }
                condition.wait()
            }
        }
    }
}
