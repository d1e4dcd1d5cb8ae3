import Foundation
import Store
import StoreTestSupport
import Testing

/// A fresh directory under the system's temporary directory, removed when the test ends.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("store-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

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
