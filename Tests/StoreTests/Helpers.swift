import Foundation
import Store
import TestSupport
import Testing

/// Collects store events from an observer, thread-safely.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [(event: StoreEvent, receivedAt: Date)] = []

    func append(_ event: StoreEvent) {
        lock.lock()
        storage.append((event, Date()))
        lock.unlock()
    }

    var events: [StoreEvent] {
        lock.lock()
        defer { lock.unlock() }
        return storage.map(\.event)
    }

    var timedEvents: [(event: StoreEvent, receivedAt: Date)] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    var committedEntries: [HistoryEntry] {
        events.compactMap { event in
            if case .committed(let entry, _) = event { return entry }
            return nil
        }
    }
}

func makeMemoryStore() throws -> Store {
    try Store(inMemorySchema: TestSchema.schema, migrator: TestSchema.migrator)
}
