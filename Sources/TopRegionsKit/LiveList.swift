import Foundation
import ResultsController
import Store

/// A section of a live list: its name, its identity (the section key's value: JSON null
/// for the NULL section), and its rows.
public struct ListSection<Row: Sendable & Encodable>: Sendable, Encodable {
    /// The section's name: its value as text; `""` for the NULL section (an unsectioned list's).
    public var name: String
    /// The section's identity, written as JSON null, a number or text.
    public var value: SectionValue
    /// The section's rows, in list order.
    public var rows: [Row]

    enum CodingKeys: String, CodingKey { case name, value, rows }

    /// Writes `name`, `value` (null for the NULL section) and `rows`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(JSONSectionValue(value), forKey: .value)
        try container.encode(rows, forKey: .rows)
    }
}

/// A section value as JSON writes it: null, a number, or text.
struct JSONSectionValue: Encodable {
    let value: SectionValue
    init(_ value: SectionValue) { self.value = value }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value.value {
        case .null: try container.encodeNil()
        case .integer(let number): try container.encode(number)
        case .real(let number): try container.encode(number)
        case .text, .blob: try container.encode(value.name)
        }
    }
}

/// What a live list says: first the whole list, then each change as a batch.
public enum ListEvent<Row: Sendable & Encodable>: Sendable, Encodable {
    /// The whole list, as of `token`.
    case snapshot(token: Int64, sections: [ListSection<Row>])
    /// One change, with UIKit's index rules in the results controller's canonical form
    /// (see docs/results-controller.md), bringing the list to `token`.
    case batch(ListBatch<Row>)

    /// The history token the event brings its list to.
    public var token: Int64 {
        switch self {
        case .snapshot(let token, _): return token
        case .batch(let batch): return batch.token
        }
    }

    enum CodingKeys: String, CodingKey { case type, token, sections }

    /// Writes a snapshot as `type`, `token` and `sections`; a batch as `ListBatch` does.
    public func encode(to encoder: Encoder) throws {
        switch self {
        case .snapshot(let token, let sections):
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("snapshot", forKey: .type)
            try container.encode(token, forKey: .token)
            try container.encode(sections, forKey: .sections)
        case .batch(let batch):
            try batch.encode(to: encoder)
        }
    }
}

/// One batch of a live list: index paths as `[section, row]`, rows after the batch.
public struct ListBatch<Row: Sendable & Encodable>: Sendable, Encodable {
    /// A row that arrives: where (after the batch) and what it holds.
    public struct Arrival: Sendable, Encodable {
        /// The section index after the batch.
        public var section: Int
        /// The row index within the section after the batch.
        public var row: Int
        /// The row as it arrives.
        public var value: Row

        /// Writes `[section, row, value]`.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(section)
            try container.encode(row)
            try container.encode(value)
        }
    }

    /// A row that moves or is redrawn: from (before), to (after), and what it holds.
    public struct Change: Sendable, Encodable {
        /// Where the row was before the batch.
        public var from: IndexPath
        /// Where the row is after the batch.
        public var to: IndexPath
        /// The row as it is after the batch.
        public var value: Row

        /// Writes `[fromSection, fromRow, toSection, toRow, value]`.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(from.section)
            try container.encode(from.row)
            try container.encode(to.section)
            try container.encode(to.row)
            try container.encode(value)
        }
    }

    /// A section inserted at `index` (after the batch), with its rows.
    public struct InsertedSection: Sendable, Encodable {
        /// The section's index after the batch.
        public var index: Int
        /// The section's name, value and rows.
        public var section: ListSection<Row>

        enum CodingKeys: String, CodingKey { case index, name, value, rows }

        /// Writes `index`, `name`, `value` and `rows`.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(index, forKey: .index)
            try container.encode(section.name, forKey: .name)
            try container.encode(JSONSectionValue(section.value), forKey: .value)
            try container.encode(section.rows, forKey: .rows)
        }
    }

    /// The history token the batch brings the list to.
    public var token: Int64
    /// The indexes, before the batch, of the sections deleted.
    public var sectionDeletes: [Int]
    /// The sections inserted, with their rows, by index after the batch.
    public var sectionInserts: [InsertedSection]
    /// Rows deleted, at their index paths before the batch.
    public var deletes: [IndexPath]
    /// Rows inserted, with where they go after the batch.
    public var inserts: [Arrival]
    /// Rows that move, with their content after the batch.
    public var moves: [Change]
    /// Rows redrawn in place, from their path before the batch to their path after it.
    public var updates: [Change]

    enum CodingKeys: String, CodingKey { case type, token, sectionDeletes, sectionInserts, deletes, inserts, moves, updates }

    /// Writes `type: "batch"`, the token, and each list; index paths as `[section, row]`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("batch", forKey: .type)
        try container.encode(token, forKey: .token)
        try container.encode(sectionDeletes, forKey: .sectionDeletes)
        try container.encode(sectionInserts, forKey: .sectionInserts)
        try container.encode(deletes.map { [$0.section, $0.row] }, forKey: .deletes)
        try container.encode(inserts, forKey: .inserts)
        try container.encode(moves, forKey: .moves)
        try container.encode(updates, forKey: .updates)
    }
}

/// One of the gallery's lists, followed live: a results controller over it, whose state
/// and changes come as `ListEvent`s of typed rows.
///
/// Every subscriber (`events()`) first gets the list as it is, then each later batch, in
/// order and none missed: subscribing, fetching and delivering all happen on the list's own
/// serial queue. One list serves any number of subscribers; the last batches are kept so a
/// subscriber that lost its connection can resume after a token (`events(after:)`).
///
/// Rows are read from the store after the controller has placed them, and a commit the
/// controller has not processed yet may have deleted some. A snapshot is sent only with
/// all its rows (it waits for the controller to catch up, `completeRowsWait` at most); a
/// batch whose rows cannot all be read is not sent: every subscriber gets a fresh snapshot
/// instead, once one can be read whole, and the batches in between are not sent.
///
/// `@unchecked Sendable`: the mutable state (subscribers, recent batches) is touched only
/// on `queue`.
public final class LiveList<Row: Sendable & Encodable>: @unchecked Sendable {
    private let queue: DispatchQueue
    private let source: any LiveListSource<Row>
    private var subscribers: [UUID: AsyncStream<ListEvent<Row>>.Continuation] = [:]
    /// Subscribers whose first events wait for a snapshot with all its rows.
    private var opening: [UUID: AsyncStream<ListEvent<Row>>.Continuation] = [:]
    private var recent: [ListBatch<Row>] = []
    /// Every batch after this token is in `recent`.
    private var keptSince: Int64 = 0
    private var started = false
    /// A batch could not be sent: subscribers wait for a fresh snapshot.
    private var resynchronizing = false
    /// Why the list ended (what it shows is gone), once it has: no event comes after.
    private var ending: String?
    /// What ends the list when it fires (an observation of the store), kept with it.
    private var endingObservation: StoreObservation?
    /// Batches kept for subscribers that resume after a token.
    public static var keptBatches: Int { 256 }
    /// How long a snapshot waits for rows a later commit deleted to leave the controller's
    /// list, before it is sent without them.
    static var completeRowsWait: TimeInterval { 5 }
    /// How often a snapshot that lacked rows is tried again.
    static var retryInterval: DispatchTimeInterval { .milliseconds(20) }

    init<R: Record>(controller: ResultsController<R>, queue: DispatchQueue, rows: @escaping @Sendable ([IndexPath], ResultsController<R>) -> [Row]) {
        self.queue = queue
        self.source = ControllerSource(controller: controller, rows: rows)
    }

    /// Runs the fetch; until then the list has no rows. Throws what the fetch throws.
    func start() throws {
        try queue.sync {
            guard !started else { return }
            try source.start { [weak self] change in
                guard let self else { return }
                if let change { self.deliver(change) } else { self.resynchronize() }
            }
            keptSince = source.token
            started = true
        }
    }

    /// The list as it is now (rows a later commit deleted may be missing).
    public var snapshot: ListEvent<Row> {
        queue.sync { source.snapshot().event }
    }

    /// The list as it is now with all its rows: while a commit the controller has not
    /// processed yet has deleted some, waits for it (`completeRowsWait` at most, then as it is).
    public var completeSnapshot: ListEvent<Row> {
        let deadline = Date().addingTimeInterval(Self.completeRowsWait)
        while true {
            let (event, isComplete) = queue.sync { source.snapshot() }
            if isComplete || Date() >= deadline { return event }
            Thread.sleep(forTimeInterval: 0.02)
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

    /// The list's events: the snapshot now, then each batch.
    public func events() -> AsyncStream<ListEvent<Row>> {
        subscribe(resuming: nil)
    }

    /// The events after `token` (a client's last event id): the batches it missed, when the
    /// list still keeps them all, else a fresh snapshot; then each batch.
    public func events(after token: Int64) -> AsyncStream<ListEvent<Row>> {
        subscribe(resuming: token)
    }

    /// Why the list ended, if it has: what it showed is gone (a region pruned away), and
    /// its subscribers' streams ended.
    public var endReason: String? { queue.sync { ending } }

    /// Ends the list: every subscriber's stream ends, and a later subscriber's at once.
    func end(_ reason: String) {
        queue.async { [self] in
            guard ending == nil else { return }
            ending = reason
            for continuation in subscribers.values { continuation.finish() }
            for continuation in opening.values { continuation.finish() }
            subscribers.removeAll()
            opening.removeAll()
            endingObservation?.cancel()
        }
    }

    /// Keeps `observation`, which ends the list, for as long as the list lives.
    func endWhen(_ observation: StoreObservation) {
        queue.sync { endingObservation = observation }
    }

    /// How many subscribers the list has.
    public var subscriberCount: Int { queue.sync { subscribers.count + opening.count } }

    private func subscribe(resuming token: Int64?) -> AsyncStream<ListEvent<Row>> {
        AsyncStream(bufferingPolicy: .unbounded) { continuation in
            let key = UUID()
            queue.sync {
                if ending != nil {
                    continuation.finish()
                } else if let token, !resynchronizing, token <= source.token, token >= keptSince {
                    for batch in recent where batch.token > token { continuation.yield(.batch(batch)) }
                    subscribers[key] = continuation
                } else {
                    opening[key] = continuation
                    sendSnapshots(giveUpAt: Date().addingTimeInterval(Self.completeRowsWait))
                }
            }
            continuation.onTermination = { [weak self] _ in
                guard let list = self else { return }
                list.queue.async {
                    list.subscribers.removeValue(forKey: key)
                    list.opening.removeValue(forKey: key)
                }
            }
        }
    }

    /// On `queue`: sends the subscribers in `opening` a snapshot, once it has all its rows
    /// (or at `giveUpAt`, as it is), and makes them subscribers.
    private func sendSnapshots(giveUpAt deadline: Date) {
        guard !opening.isEmpty else { return }
        let (snapshot, isComplete) = source.snapshot()
        guard isComplete || Date() >= deadline else {
            queue.asyncAfter(deadline: .now() + Self.retryInterval) { [weak self] in self?.sendSnapshots(giveUpAt: deadline) }
            return
        }
        for (key, continuation) in opening {
            continuation.yield(snapshot)
            subscribers[key] = continuation
        }
        opening.removeAll()
        if resynchronizing {
            resynchronizing = false
            recent.removeAll()
            keptSince = snapshot.token
        }
    }

    /// On `queue`, when a batch could not be sent: every subscriber gets a fresh snapshot
    /// next, and a client resuming from before it gets one too.
    private func resynchronize() {
        if !resynchronizing {
            resynchronizing = true
            recent.removeAll()
            keptSince = .max
            opening.merge(subscribers) { first, _ in first }
            subscribers.removeAll()
        }
        sendSnapshots(giveUpAt: Date().addingTimeInterval(Self.completeRowsWait))
    }

    /// Called on `queue` with each batch the controller reports.
    private func deliver(_ batch: ListBatch<Row>) {
        // Subscribers waiting for a snapshot get the list as it is then: this is in it.
        if resynchronizing { return }
        recent.append(batch)
        if recent.count > Self.keptBatches {
            keptSince = recent[recent.count - Self.keptBatches - 1].token
            recent.removeFirst(recent.count - Self.keptBatches)
        }
        for continuation in subscribers.values { continuation.yield(.batch(batch)) }
    }

    deinit {
        for continuation in subscribers.values { continuation.finish() }
        for continuation in opening.values { continuation.finish() }
    }
}

/// What a live list reads its rows and changes from (a results controller of some record
/// type), with the record type hidden.
protocol LiveListSource<Row>: Sendable {
    associatedtype Row: Sendable & Encodable
    /// Starts following; `deliver` gets each batch, or nil for one whose rows could not all
    /// be read.
    func start(_ deliver: @escaping (ListBatch<Row>?) -> Void) throws
    /// The list now, and whether every row could be read.
    func snapshot() -> (event: ListEvent<Row>, isComplete: Bool)
    var token: Int64 { get }
    func waitUntilProcessed(through token: Int64, timeout: TimeInterval) -> Bool
}

/// A controller as a live list's source: its batches turned into batches of rows.
///
/// `@unchecked Sendable`: `delegate` is set once, on the list's queue, before the fetch.
private final class ControllerSource<R: Record, Row: Sendable & Encodable>: LiveListSource, ResultsControllerDelegate, @unchecked Sendable {
    let controller: ResultsController<R>
    let rows: @Sendable ([IndexPath], ResultsController<R>) -> [Row]
    private var deliver: ((ListBatch<Row>?) -> Void)?

    init(controller: ResultsController<R>, rows: @escaping @Sendable ([IndexPath], ResultsController<R>) -> [Row]) {
        self.controller = controller
        self.rows = rows
    }

    func start(_ deliver: @escaping (ListBatch<Row>?) -> Void) throws {
        self.deliver = deliver
        controller.delegate = self
        try controller.performFetch()
    }

    var token: Int64 { controller.processedToken }

    func waitUntilProcessed(through token: Int64, timeout: TimeInterval) -> Bool {
        controller.waitUntilProcessed(through: token, timeout: timeout)
    }

    func snapshot() -> (event: ListEvent<Row>, isComplete: Bool) {
        var isComplete = true
        let sections = controller.sections.enumerated().map { index, section in
            let read = rows((0..<section.numberOfObjects).map { IndexPath(row: $0, section: index) }, controller)
            if read.count != section.numberOfObjects { isComplete = false }
            return ListSection(name: section.name, value: section.value, rows: read)
        }
        return (.snapshot(token: controller.processedToken, sections: sections), isComplete)
    }

    func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) {
        let batch = change.batch
        let arriving = batch.rowInserts.map(\.indexPath) + batch.moves.map(\.to) + batch.updates.map(\.new)
            + batch.sectionInserts.flatMap { insert in insert.section.ids.indices.map { IndexPath(row: $0, section: insert.index) } }
        let values = rows(arriving, self.controller)
        // A later commit deleted some: this batch cannot be sent as it is.
        guard values.count == arriving.count else { return deliver?(nil) ?? () }
        var next = values.makeIterator()
        func take() -> Row? { next.next() }
        let inserts = batch.rowInserts.compactMap { row in take().map { ListBatch.Arrival(section: row.indexPath.section, row: row.indexPath.row, value: $0) } }
        let moves = batch.moves.compactMap { move in take().map { ListBatch.Change(from: move.from, to: move.to, value: $0) } }
        let updates = batch.updates.compactMap { update in take().map { ListBatch.Change(from: update.old, to: update.new, value: $0) } }
        let sectionInserts = batch.sectionInserts.map { insert in
            ListBatch.InsertedSection(index: insert.index, section: ListSection(name: insert.section.name, value: insert.section.value,
                                                                              rows: insert.section.ids.compactMap { _ in take() }))
        }
        deliver?(ListBatch(token: change.token ?? self.controller.processedToken, sectionDeletes: batch.sectionDeletes,
                           sectionInserts: sectionInserts, deletes: batch.rowDeletes.map(\.indexPath), inserts: inserts, moves: moves,
                           updates: updates))
    }
}
