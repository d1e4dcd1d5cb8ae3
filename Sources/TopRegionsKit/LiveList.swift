import Foundation
import ResultsController
import Store
import Synchronization

/// An event of a live list and its JSON, encoded once for every subscriber.
public final class ListDelivery<Row: Sendable & Encodable>: Sendable {
    /// The event.
    public let event: ListEvent<Row>
    /// `event` as `GalleryJSON` writes it (what `watch --json` prints, an SSE event's data).
    public let json: [UInt8]

    init(_ event: ListEvent<Row>) throws {
        self.event = event
        json = try GalleryJSON.bytes(event)
    }

    /// The history token the event brings its list to.
    public var token: Int64 { event.token }
    /// `snapshot` or `batch`.
    public var kind: String {
        if case .snapshot = event { return "snapshot" }
        return "batch"
    }
}

/// Why a live list ended: no event comes after.
public enum ListEnd: Sendable, Equatable {
    /// What it showed is gone (a region pruned away); the reason says what to do.
    case gone(String)
    /// Its rows could not be read (the store failed): a subscriber must open it again.
    case failed(String)

    /// The reason, as a sentence.
    public var reason: String {
        switch self {
        case .gone(let reason), .failed(let reason): return reason
        }
    }
}

/// What a subscriber of a live list is told: each event, then, if the list ends, why.
public enum ListMessage<Row: Sendable & Encodable>: Sendable {
    case event(ListDelivery<Row>)
    case ended(ListEnd)
}

/// A subscription to a live list; `cancel` stops its messages.
public final class ListSubscription: Sendable {
    private let cancelling: @Sendable () -> Void
    /// A subscription that `cancel` ends.
    public init(_ cancel: @escaping @Sendable () -> Void) { cancelling = cancel }
    /// Stops the messages (one being delivered may still arrive).
    public func cancel() { cancelling() }
}

/// One of the gallery's lists, followed live: a results controller over it, whose state
/// and changes come as `ListEvent`s of typed rows. It is the one place a list's events
/// fan out: however many subscribe, each event's rows are read once and its JSON encoded
/// once (`ListDelivery`).
///
/// Every subscriber first gets the list as it is, then each later batch, in order and none
/// missed; one that resumes after a token (a client's last event id) gets the batches after
/// it while they are kept (`keptBatches`), else a snapshot. Everything happens on the list's
/// own serial queue, the controller's delivery queue; subscribers are called on it, so
/// they must not block.
///
/// Rows are read in one read transaction that also reads the store's history token. When
/// that token is the one the controller's state reflects, the rows are the state's exactly.
/// When another commit has come since, its rows may be missing; the controller hears of
/// that commit next, on the same queue, and the read is made again after it: a snapshot is
/// never sent short of rows, and a batch whose rows a later commit deleted is replaced by a
/// snapshot for every subscriber. Nothing waits by sleeping. A read that fails ends the list
/// (`ListEnd.failed`): a list silently shorter than the store is never sent.
///
/// `@unchecked Sendable`: the mutable state is touched only on `queue`, except the
/// subscriber count (guarded by `count`).
public final class LiveList<Row: Sendable & Encodable>: @unchecked Sendable {
    private typealias Receiver = @Sendable (ListMessage<Row>) -> Void
    private struct Subscriber {
        let receive: Receiver
        /// The newest token the subscriber's view reflects: older batches are not sent.
        var through: Int64
    }

    private let queue: DispatchQueue
    private let source: any LiveListSource<Row>
    private var subscribers: [UUID: Subscriber] = [:]
    /// Subscribers whose first event is a snapshot not read yet.
    private var opening: [UUID: Receiver] = [:]
    private var recent: [ListDelivery<Row>] = []
    /// Every batch after this token was sent and is in `recent`.
    private var keptSince: Int64 = 0
    /// The last snapshot, while no batch has come since.
    private var cachedSnapshot: ListDelivery<Row>?
    private var started = false
    /// A batch could not be sent: every subscriber waits for a fresh snapshot.
    private var resynchronizing = false
    /// Whether a snapshot read waits for the controller to catch up with a later commit.
    private var waitingForController = false
    /// Why the list ended, once it has; set on `queue`, read anywhere.
    private let ending = Mutex<ListEnd?>(nil)
    /// What ends the list when it fires (an observation of the store), kept with it.
    private var endingObservation: StoreObservation?
    private let count = Mutex(0)
    /// Batches kept for subscribers that resume after a token.
    public static var keptBatches: Int { 256 }

    /// A list of `controller`'s results, which delivers on `queue`; `rows` makes the rows
    /// of records, in the read transaction it is given.
    convenience init<R: Record>(controller: ResultsController<R>, queue: DispatchQueue, store: any ObservableStore,
                    rows: @escaping @Sendable (ReadContext, [(path: IndexPath, record: R)]) throws -> [Row]) {
        self.init(source: ControllerSource(controller: controller, reader: RowReader(store: store, rows: rows)), queue: queue)
    }

    /// A list of `source`'s, whose state changes on `queue` only.
    init(source: any LiveListSource<Row>, queue: DispatchQueue) {
        self.queue = queue
        self.source = source
    }

    /// Runs the fetch; until then the list has no rows. Throws what the fetch throws.
    func start() throws {
        try queue.sync {
            guard !started else { return }
            try source.start { [weak self] pending in
                guard let self else { return }
                queue.async { self.deliver(pending) }
            }
            keptSince = source.token
            started = true
        }
    }

    /// The list as it is now, with all its rows (waits for the list's queue; throws what
    /// the read throws).
    public var snapshot: ListEvent<Row> {
        get throws {
            try queue.sync {
                switch try source.snapshot() {
                case .rows(let event), .incomplete(let event, _): return event
                }
            }
        }
    }

    /// The newest history token the list reflects.
    public var token: Int64 { source.token }

    /// Waits until the list reflects the commit with `token`; false when `timeout` passed.
    public func waitUntilCurrent(through token: Int64, timeout: TimeInterval) -> Bool {
        guard source.waitUntilProcessed(through: token, timeout: timeout) else { return false }
        queue.sync {}  // the batch of that commit, if any, has been delivered
        return true
    }

    /// Calls `receive` on the list's queue with each message: the list now (or, resuming
    /// after `token`, the batches kept since), then each batch, then, if the list ends, why.
    @discardableResult
    public func subscribe(after token: Int64? = nil, _ receive: @escaping @Sendable (ListMessage<Row>) -> Void) -> ListSubscription {
        let key = UUID()
        count.withLock { $0 += 1 }
        queue.async { [self] in add(key, after: token, receive) }
        return ListSubscription { [weak self] in
            guard let self else { return }
            count.withLock { $0 -= 1 }
            queue.async { [self] in
                subscribers.removeValue(forKey: key)
                opening.removeValue(forKey: key)
            }
        }
    }

    /// The list's events: the snapshot now, then each batch; it finishes when the list ends.
    public func events() -> AsyncStream<ListEvent<Row>> {
        events(resuming: nil)
    }

    /// The events after `token` (a client's last event id): the batches it missed, when the
    /// list still keeps them all, else a fresh snapshot; then each batch.
    public func events(after token: Int64) -> AsyncStream<ListEvent<Row>> {
        events(resuming: token)
    }

    private func events(resuming token: Int64?) -> AsyncStream<ListEvent<Row>> {
        AsyncStream(bufferingPolicy: .unbounded) { continuation in
            let subscription = subscribe(after: token) { message in
                switch message {
                case .event(let delivery): continuation.yield(delivery.event)
                case .ended: continuation.finish()
                }
            }
            continuation.onTermination = { _ in subscription.cancel() }
        }
    }

    /// Why the list ended, if it has.
    public var end: ListEnd? { ending.withLock { $0 } }

    /// Why the list ended, if it has, as a sentence.
    public var endReason: String? { end?.reason }

    /// How many subscribers the list has.
    public var subscriberCount: Int { count.withLock { $0 } }

    /// Whether the list ended (without waiting for its queue).
    public var hasEnded: Bool { end != nil }

    /// Ends the list (on its queue): every subscriber is told why, and a later one at once.
    func end(_ end: ListEnd) {
        queue.async { [self] in finish(end) }
    }

    /// Keeps `observation`, which ends the list, for as long as the list lives.
    func endWhen(_ observation: StoreObservation) {
        queue.sync { endingObservation = observation }
    }

    // MARK: On the queue

    private func add(_ key: UUID, after token: Int64?, _ receive: @escaping Receiver) {
        if let end { return receive(.ended(end)) }
        if let token, !resynchronizing, token >= keptSince, token <= source.token {
            for batch in recent where batch.token > token { receive(.event(batch)) }
            subscribers[key] = Subscriber(receive: receive, through: max(token, recent.last?.token ?? token))
        } else {
            opening[key] = receive
            sendSnapshots()
        }
    }

    /// Sends the subscribers in `opening` the list as it is, once it can be read whole, and
    /// makes them subscribers.
    private func sendSnapshots() {
        guard !opening.isEmpty, end == nil else { return }
        let snapshot: ListDelivery<Row>
        do {
            switch try readSnapshot() {
            case .rows(let delivery): snapshot = delivery
            case .behind(let storeToken): return waitForController(through: storeToken)
            }
        } catch {
            return finish(.failed("the list's rows cannot be read: \(error)"))
        }
        for (key, receive) in opening {
            receive(.event(snapshot))
            subscribers[key] = Subscriber(receive: receive, through: snapshot.token)
        }
        opening.removeAll()
        if resynchronizing {
            resynchronizing = false
            recent.removeAll()
            keptSince = snapshot.token
        }
    }

    private enum SnapshotRead {
        case rows(ListDelivery<Row>)
        /// Rows are missing and the store is at `storeToken`, past the controller.
        case behind(storeToken: Int64)
    }

    /// The list now, read whole and encoded (cached until the next batch), or how far the
    /// controller must get before it can be.
    private func readSnapshot() throws -> SnapshotRead {
        if let cachedSnapshot, cachedSnapshot.token == source.token { return .rows(cachedSnapshot) }
        let event: ListEvent<Row>
        switch try source.snapshot() {
        case .rows(let complete):
            event = complete
        case .incomplete(let partial, let storeToken):
            // The store is past the controller: the next commits took the missing rows.
            guard storeToken <= partial.token else { return .behind(storeToken: storeToken) }
            // Not past it: what cannot be read is not in the list (a row whose own rows
            // are gone), and waiting would not bring it.
            event = partial
        }
        let delivery = try ListDelivery(event)
        cachedSnapshot = delivery
        return .rows(delivery)
    }

    /// Reads the snapshot again once the controller has processed the commit with
    /// `token`, which took some of its rows.
    private func waitForController(through token: Int64) {
        guard !waitingForController else { return }
        waitingForController = true
        source.whenProcessed(through: token) { [weak self] in
            guard let self else { return }
            queue.async {
                self.waitingForController = false
                self.sendSnapshots()
            }
        }
    }

    /// A batch could not be sent: every subscriber gets a fresh snapshot next, and a client
    /// resuming from before it gets one too.
    private func resynchronize() {
        if !resynchronizing {
            resynchronizing = true
            recent.removeAll()
            keptSince = .max
            cachedSnapshot = nil
            for (key, subscriber) in subscribers { opening[key] = subscriber.receive }
            subscribers.removeAll()
        }
        sendSnapshots()
    }

    /// Each batch the controller reports, in order.
    private func deliver(_ pending: PendingBatch<Row>) {
        guard end == nil else { return }
        cachedSnapshot = nil
        // Subscribers waiting for a snapshot get the list as it is then: this is in it.
        if resynchronizing { return sendSnapshots() }
        let batch: ListDelivery<Row>
        do {
            guard let read = try pending.read() else { return resynchronize() }
            batch = try ListDelivery(.batch(read))
        } catch {
            return finish(.failed("the list's rows cannot be read: \(error)"))
        }
        recent.append(batch)
        if recent.count > Self.keptBatches {
            keptSince = recent[recent.count - Self.keptBatches - 1].token
            recent.removeFirst(recent.count - Self.keptBatches)
        }
        for (key, subscriber) in subscribers where subscriber.through < batch.token {
            subscribers[key]?.through = batch.token
            subscriber.receive(.event(batch))
        }
        sendSnapshots()
    }

    private func finish(_ end: ListEnd) {
        guard self.end == nil else { return }
        ending.withLock { $0 = end }
        for subscriber in subscribers.values { subscriber.receive(.ended(end)) }
        for receive in opening.values { receive(.ended(end)) }
        subscribers.removeAll()
        opening.removeAll()
        endingObservation?.cancel()
        source.stop()
    }

    /// Stops following the store; subscribers hear nothing more.
    public func close() {
        queue.async { [self] in
            subscribers.removeAll()
            opening.removeAll()
            endingObservation?.cancel()
            source.stop()
        }
    }
}

/// A read of a live list's rows.
enum RowsRead<Value> {
    /// Every row.
    case rows(Value)
    /// Some rows were missing (what was read is given), the store being at `storeToken`.
    case incomplete(Value, storeToken: Int64)
}

/// What a live list reads its rows and changes from (a results controller, or a section of
/// one shared by many lists), with the record type hidden. Called on the list's queue only.
protocol LiveListSource<Row>: Sendable {
    associatedtype Row: Sendable & Encodable
    /// Starts following; `deliver` gets each change, its rows to be read when it is sent.
    func start(_ deliver: @escaping @Sendable (PendingBatch<Row>) -> Void) throws
    /// The list now, its rows read in one transaction (with the store's token).
    func snapshot() throws -> RowsRead<ListEvent<Row>>
    var token: Int64 { get }
    func waitUntilProcessed(through token: Int64, timeout: TimeInterval) -> Bool
    /// Calls `handler` once the controller has processed the commit with `token`.
    func whenProcessed(through token: Int64, _ handler: @escaping @Sendable () -> Void)
    func stop()
}

/// A change of a live list whose rows are read when it is sent (nil: one is gone).
struct PendingBatch<Row: Sendable & Encodable>: Sendable {
    let token: Int64
    let read: @Sendable () throws -> ListBatch<Row>?
}
