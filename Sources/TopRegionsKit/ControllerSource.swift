import Foundation
import ResultsController
import Store

/// Reads a live list's rows: the records of the ids at some index paths, and the rows made
/// from them, all in one read transaction; with the store's token when some are missing
/// (a commit the list's controller has not processed yet took them).
struct RowReader<R: Record, Row: Sendable & Encodable>: Sendable {
    let store: any ObservableStore
    let rows: @Sendable (ReadContext, [(path: IndexPath, record: R)]) throws -> [Row]

    /// The rows of `wanted` (index paths and ids), read in `context`; nil when one is gone.
    func read(_ wanted: [(path: IndexPath, id: Int64)], in context: ReadContext) throws -> [Row]? {
        let records = try context.fetch(R.self, ids: wanted.map(\.id))
        let byID = Dictionary(records.compactMap { record in record.id.map { ($0, record) } }, uniquingKeysWith: { first, _ in first })
        var pairs: [(path: IndexPath, record: R)] = []
        pairs.reserveCapacity(wanted.count)
        for (path, id) in wanted {
            guard let record = byID[id] else { return nil }
            pairs.append((path, record))
        }
        let read = try rows(context, pairs)
        return read.count == wanted.count ? read : nil
    }

    /// The list of these sections (value and ids, in order) with their rows, at `token`
    /// (what the controller has processed).
    func snapshot(_ sections: [(value: SectionValue, ids: [Int64])], token: Int64) throws -> RowsRead<ListEvent<Row>> {
        let wanted = sections.enumerated().flatMap { index, section in
            section.ids.enumerated().map { (path: IndexPath(row: $0.offset, section: index), id: $0.element) }
        }
        return try store.read { context -> RowsRead<ListEvent<Row>> in
            if let all = try read(wanted, in: context) {
                var remaining = all[...]
                return .rows(.snapshot(token: token, sections: sections.map { section in
                    let taken = remaining.prefix(section.ids.count)
                    remaining = remaining.dropFirst(taken.count)
                    return ListSection(name: section.value.name, value: section.value, rows: Array(taken))
                }))
            }
            // Rows are missing: a commit the controller has not processed yet took them,
            // unless the store is no further than the controller.
            let storeToken = try context.currentToken()
            var readable: [[Row]] = sections.map { _ in [] }
            if storeToken <= token {
                for one in wanted {
                    if let row = try read([one], in: context)?.first { readable[one.path.section].append(row) }
                }
            }
            return .incomplete(.snapshot(token: token, sections: zip(sections, readable).map { section, rows in
                ListSection(name: section.value.name, value: section.value, rows: rows)
            }), storeToken: storeToken)
        }
    }

    /// The batch with the rows that arrive in it (inserted, moved, redrawn), read in one
    /// transaction; nil when one is gone (a later commit deleted it).
    func batch(_ batch: ChangeBatch, token: Int64) throws -> ListBatch<Row>? {
        let arriving: [(path: IndexPath, id: Int64)] = batch.rowInserts.map { ($0.indexPath, $0.id) } + batch.moves.map { ($0.to, $0.id) }
            + batch.updates.map { ($0.new, $0.id) }
            + batch.sectionInserts.flatMap { insert in insert.section.ids.enumerated().map { (IndexPath(row: $0.offset, section: insert.index), $0.element) } }
        guard let values = try store.read({ try read(arriving, in: $0) }) else { return nil }
        var next = values.makeIterator()
        func take() -> Row? { next.next() }
        let inserts = batch.rowInserts.compactMap { row in take().map { ListBatch.Arrival(section: row.indexPath.section, row: row.indexPath.row, value: $0) } }
        let moves = batch.moves.compactMap { move in take().map { ListBatch.Change(from: move.from, to: move.to, value: $0) } }
        let updates = batch.updates.compactMap { update in take().map { ListBatch.Change(from: update.old, to: update.new, value: $0) } }
        let sectionInserts = batch.sectionInserts.map { insert in
            ListBatch.InsertedSection(index: insert.index, section: ListSection(name: insert.section.name, value: insert.section.value,
                                                                              rows: insert.section.ids.compactMap { _ in take() }))
        }
        return ListBatch(token: token, sectionDeletes: batch.sectionDeletes, sectionInserts: sectionInserts,
                         deletes: batch.rowDeletes.map(\.indexPath), inserts: inserts, moves: moves, updates: updates)
    }
}

/// A controller as a live list's source: its batches turned into batches of rows.
///
/// `@unchecked Sendable`: `deliver` is set once, on the list's queue, before the fetch; the
/// rest is immutable.
final class ControllerSource<R: Record, Row: Sendable & Encodable>: LiveListSource, ResultsControllerDelegate, @unchecked Sendable {
    let controller: ResultsController<R>
    let reader: RowReader<R, Row>
    private var deliver: (@Sendable (PendingBatch<Row>) -> Void)?

    init(controller: ResultsController<R>, reader: RowReader<R, Row>) {
        self.controller = controller
        self.reader = reader
    }

    func start(_ deliver: @escaping @Sendable (PendingBatch<Row>) -> Void) throws {
        self.deliver = deliver
        controller.delegate = self
        try controller.performFetch()
    }

    func stop() {
        controller.delegate = nil
        deliver = nil
    }

    var token: Int64 { controller.processedToken }

    func waitUntilProcessed(through token: Int64, timeout: TimeInterval) -> Bool {
        controller.waitUntilProcessed(through: token, timeout: timeout)
    }

    func whenProcessed(through token: Int64, _ handler: @escaping @Sendable () -> Void) {
        controller.whenProcessed(through: token, handler)
    }

    /// On the list's queue, where the controller's state changes: the sections now.
    func snapshot() throws -> RowsRead<ListEvent<Row>> {
        let processed = controller.processedToken
        let sections = controller.sections.enumerated().map { index, section in
            (value: section.value, ids: (0..<section.numberOfObjects).compactMap { controller.id(at: IndexPath(row: $0, section: index)) })
        }
        return try reader.snapshot(sections, token: processed)
    }

    func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) {
        // Called holding the controller's lock: the rows are read after it, on the queue.
        let token = change.token ?? self.controller.processedToken
        let reader = reader
        deliver?(PendingBatch(token: token) { try reader.batch(change.batch, token: token) })
    }
}
