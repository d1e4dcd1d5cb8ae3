import Foundation
import HTTPServer
import TopRegionsKit

/// One live list and every client that follows it: the list's events are encoded once, as
/// Server-Sent Events, and written to each subscriber's stream. A subscriber starts with a
/// snapshot, or, when it resumes (`Last-Event-ID`) within the batches kept, with exactly the
/// batches it missed; after that it gets each batch newer than what it started with.
///
/// `@unchecked Sendable`: the mutable state is guarded by `lock`; batches are broadcast by
/// one reader task, in token order.
final class ListHub<Row: Sendable & Encodable>: @unchecked Sendable, ChangeStreamHub {
    private struct Subscriber {
        let stream: EventStream
        /// The newest token the subscriber's view reflects: older batches are not sent.
        var through: Int64
        /// Whether the subscriber may still follow the list (a user's list: the token it
        /// opened with still names that user); asked before every batch and heartbeat.
        let isAuthorised: @Sendable () -> Bool
    }

    private let list: LiveList<Row>
    private let lock = NSLock()
    private var subscribers: [ObjectIdentifier: Subscriber] = [:]
    /// The newest batches broadcast, oldest first, as encoded events.
    private var kept: [(token: Int64, bytes: [UInt8])] = []
    /// Every batch after this token that was broadcast is in `kept` (Int64.max: none yet).
    private var keptSince = Int64.max
    private var cachedSnapshot: (token: Int64, bytes: [UInt8])?
    /// Whether the list's first event (its snapshot) has come.
    private var sawSnapshot = false
    private var hasEnded = false

    /// Whether the list ended: the hub serves no one any more.
    var isEnded: Bool { lock.withLock { hasEnded } }
    private var reader: Task<Void, Never>?

    init(list: LiveList<Row>) {
        self.list = list
        let events = list.events()
        reader = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.broadcast(event)
            }
            // The list ended (what it showed is gone): so do its streams.
            guard let self, !Task.isCancelled else { return }
            self.lock.withLock { self.hasEnded = true }
            self.close()
        }
    }

    var subscriberCount: Int { lock.withLock { subscribers.count } }

    /// Starts a subscriber: writes its first events (a snapshot, or the batches after
    /// `lastEventID` when all of them are kept) and registers it for the next batches.
    func subscribe(_ stream: EventStream, lastEventID: Int64?, isAuthorised: @escaping @Sendable () -> Bool) {
        lock.withLock {
            var through: Int64
            // Every batch after `keptSince` is kept or not broadcast yet (and will be, past
            // `through`); a token past the list's own is from elsewhere: a snapshot.
            if let lastEventID, lastEventID >= keptSince, lastEventID <= list.token {
                for batch in kept where batch.token > lastEventID { stream.write(batch.bytes) }
                through = max(lastEventID, kept.last?.token ?? keptSince)
            } else {
                let snapshot = snapshotLocked()
                stream.write(snapshot.bytes)
                through = snapshot.token
            }
            subscribers[ObjectIdentifier(stream)] = Subscriber(stream: stream, through: through, isAuthorised: isAuthorised)
        }
    }

    func unsubscribe(_ stream: EventStream) {
        _ = lock.withLock { subscribers.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    /// Writes `bytes` (a comment) to every subscriber: keeps idle connections open through
    /// proxies, and finds clients that went away.
    /// Subscribers no longer authorised are ended instead.
    func heartbeat(_ bytes: [UInt8]) {
        for subscriber in lock.withLock({ Array(subscribers.values) }) {
            if subscriber.isAuthorised() { subscriber.stream.write(bytes) } else { revoke(subscriber) }
        }
    }

    /// Ends the subscribers no longer authorised (a user changed), now rather than at the
    /// next event or heartbeat.
    func revokeUnauthorised() {
        for subscriber in lock.withLock({ Array(subscribers.values) }) where !subscriber.isAuthorised() { revoke(subscriber) }
    }

    /// Ends a subscriber whose token no longer names its user (rotated, or the user
    /// removed): it hears nothing more of the list.
    private func revoke(_ subscriber: Subscriber) {
        _ = lock.withLock { subscribers.removeValue(forKey: ObjectIdentifier(subscriber.stream)) }
        subscriber.stream.finish()
    }

    func close() {
        reader?.cancel()
        reader = nil
        for stream in lock.withLock({ subscribers.values.map(\.stream) }) { stream.finish() }
    }

    // MARK: Events

    private func broadcast(_ event: ListEvent<Row>) {
        guard case .batch(let batch) = event else { return broadcastSnapshot(event) }
        guard let bytes = Self.encode(event, name: "batch") else { return }
        let revoked = lock.withLock { () -> [Subscriber] in
            if keptSince == .max { keptSince = batch.token - 1 }
            kept.append((batch.token, bytes))
            if kept.count > LiveList<Row>.keptBatches {
                keptSince = kept[kept.count - LiveList<Row>.keptBatches - 1].token
                kept.removeFirst(kept.count - LiveList<Row>.keptBatches)
            }
            cachedSnapshot = nil
            var revoked: [Subscriber] = []
            for (key, subscriber) in subscribers where subscriber.through < batch.token {
                guard subscriber.isAuthorised() else {
                    revoked.append(subscriber)
                    continue
                }
                subscribers[key]?.through = batch.token
                subscriber.stream.write(bytes)
            }
            return revoked
        }
        // Ended outside the lock: ending a stream calls back into `unsubscribe`.
        revoked.forEach(revoke)
    }

    /// The list's first snapshot starts the history kept; a later one replaces the list
    /// after a change the list could not send as a batch (`LiveList`): every subscriber
    /// gets it, and resuming starts over from it.
    private func broadcastSnapshot(_ event: ListEvent<Row>) {
        let isFirst = lock.withLock { () -> Bool in
            defer { sawSnapshot = true }
            if !sawSnapshot && keptSince == .max { keptSince = event.token }
            return !sawSnapshot
        }
        guard !isFirst, let bytes = Self.encode(event, name: "snapshot") else { return }
        let revoked = lock.withLock { () -> [Subscriber] in
            kept.removeAll()
            keptSince = event.token
            cachedSnapshot = (event.token, bytes)
            var revoked: [Subscriber] = []
            for (key, subscriber) in subscribers {
                guard subscriber.isAuthorised() else {
                    revoked.append(subscriber)
                    continue
                }
                subscribers[key]?.through = max(subscriber.through, event.token)
                subscriber.stream.write(bytes)
            }
            return revoked
        }
        revoked.forEach(revoke)
    }

    /// The list now, with all its rows, encoded; cached until the next batch.
    private func snapshotLocked() -> (token: Int64, bytes: [UInt8]) {
        if let cachedSnapshot { return cachedSnapshot }
        let snapshot = list.completeSnapshot
        let encoded = (snapshot.token, Self.encode(snapshot, name: "snapshot") ?? [])
        cachedSnapshot = encoded
        return encoded
    }

    /// `id:`, `event:` and one `data:` line (JSON has no raw newline), then a blank line.
    static func encode(_ event: ListEvent<Row>, name: String) -> [UInt8]? {
        guard let json = try? GalleryJSON.bytes(event) else { return nil }
        var bytes = Array("id: \(event.token)\nevent: \(name)\ndata: ".utf8)
        bytes.append(contentsOf: json)
        bytes.append(contentsOf: Array("\n\n".utf8))
        return bytes
    }
}

/// What the registry needs of a hub, whatever its rows.
protocol ChangeStreamHub: AnyObject, Sendable {
    var subscriberCount: Int { get }
    /// Whether its list ended (a new stream needs a new hub).
    var isEnded: Bool { get }
    func subscribe(_ stream: EventStream, lastEventID: Int64?, isAuthorised: @escaping @Sendable () -> Bool)
    func unsubscribe(_ stream: EventStream)
    func heartbeat(_ bytes: [UInt8])
    func revokeUnauthorised()
    func close()
}
