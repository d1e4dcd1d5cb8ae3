import Foundation
import ResultsController
import Store
import TestSupport
import Testing

/// Records every delegate call, in order, and the batches.
final class DelegateLog: ResultsControllerDelegate, @unchecked Sendable {
    enum Call: Equatable {
        case will
        case section(SectionChange, Int)
        case object(ObjectChange, Int64, IndexPath?, IndexPath?)
        case did
    }

    private let lock = NSLock()
    private var storage: [Call] = []
    private var batches: [ResultsChange] = []

    var calls: [Call] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    var changes: [ResultsChange] {
        lock.lock()
        defer { lock.unlock() }
        return batches
    }

    func reset() {
        lock.lock()
        storage = []
        batches = []
        lock.unlock()
    }

    private func append(_ call: Call) {
        lock.lock()
        storage.append(call)
        lock.unlock()
    }

    func controllerWillChangeContent(_ controller: AnyObject) { append(.will) }
    func controller(_ controller: AnyObject, didChangeSection name: String, atIndex index: Int, for change: SectionChange) {
        append(.section(change, index))
    }
    func controller(_ controller: AnyObject, didChangeObject id: Int64, at indexPath: IndexPath?, for change: ObjectChange,
                    newIndexPath: IndexPath?) {
        append(.object(change, id, indexPath, newIndexPath))
    }
    func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) {
        append(.did)
        lock.lock()
        batches.append(change)
        lock.unlock()
    }

    /// Whether the calls came in Apple's order: will-change, section deletes, section
    /// inserts, object deletes, inserts, moves, updates, did-change; once per batch.
    var inAppleOrder: Bool {
        func rank(_ call: Call) -> Int {
            switch call {
            case .will: return 0
            case .section(.delete, _): return 1
            case .section(.insert, _): return 2
            case .object(.delete, _, _, _): return 3
            case .object(.insert, _, _, _): return 4
            case .object(.move, _, _, _): return 5
            case .object(.update, _, _, _): return 6
            case .did: return 7
            }
        }
        var previous = 7
        for call in calls {
            let current = rank(call)
            if current == 0 { guard previous == 7 else { return false } } else if current < previous { return false }
            previous = current
        }
        return previous == 7
    }
}

/// What a fresh fetch shows for the same request: the truth a controller's state is
/// compared with.
func freshSnapshot<R: Record>(_ type: R.Type, store: any ObservableStore, request: FetchRequest, sectionKeyPath: String?) throws -> Snapshot {
    let fresh = try ResultsController<R>(store: store, request: request, sectionKeyPath: sectionKeyPath)
    try fresh.performFetch()
    return fresh.snapshot
}

/// A store with the test schema in a temporary file.
final class TestStore {
    private let temporary: TemporaryDirectory
    var directory: URL { temporary.url }
    let store: Store

    init() throws {
        temporary = try TemporaryDirectory("rc-tests")
        store = try TestSchema.openStore(at: temporary.path("store.sqlite"))
    }

    deinit { store.close() }
}

/// What a controller must show for a request, read with one plain query rather than
/// through a controller: the rows in the request's order (with the binary tie-break that
/// keeps equal-under-collation section values apart), grouped into sections wherever the
/// section key's value changes, text compared by its bytes.
func oracleSnapshot(store: any StoreReading, request: FetchRequest, sectionKeyPath: String?) throws -> Snapshot {
    var ordered = request
    if let sectionKeyPath, let first = request.sortDescriptors.first, first.collation != .binary {
        ordered.sortDescriptors.insert(SortKey(sectionKeyPath, ascending: first.ascending, collation: .binary), at: 1)
    }
    func sameBytes(_ left: SQLValue, _ right: SQLValue) -> Bool {
        switch (left, right) {
        case (.text(let a), .text(let b)): return Array(a.utf8) == Array(b.utf8)
        case (.null, .null): return true
        case (.null, _), (_, .null), (.text, _), (_, .text): return false
        default: return left.double == right.double
        }
    }
    return try store.read { context in
        var sections: [(value: SQLValue, ids: [Int64])] = []
        try context.forEachKeyRow(ordered, keyPaths: sectionKeyPath.map { [$0] } ?? []) { id, values in
            let value = sectionKeyPath == nil ? SQLValue.null : values[0]
            if let last = sections.last, sameBytes(last.value, value) {
                sections[sections.count - 1].ids.append(id)
            } else {
                sections.append((value, [id]))
            }
        }
        if sectionKeyPath == nil && sections.isEmpty { sections = [(.null, [])] }
        return Snapshot(sections: sections.map { Snapshot.Section(value: SectionValue($0.value), ids: $0.ids) })
    }
}
