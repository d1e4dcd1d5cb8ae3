import Foundation
import PostgresStore
@testable import Store
import TestSupport
import Testing

private struct Abort: Error {}

@Suite("Transactions, change sets and history")
struct TransactionTests {
    @Test("A transaction that throws leaves nothing behind, and no observer hears of it", arguments: StoreKind.available)
    func rollback(on kind: StoreKind) throws {
        let under = try TestStoreOfKind(kind)
        let store = under.store
        let log = EventLog()
        let observation = store.observe { log.append($0) }
        let tokenBefore = try store.currentToken()
        #expect(throws: Abort.self) {
            try store.write { transaction in
                try transaction.inserted(Region(name: "Half"))
                try transaction.inserted(Photo(flickrID: "1", title: "written"))
                throw Abort()
            }
        }
        #expect(try store.read { try $0.count(FetchRequest(Region.self)) } == 0)
        #expect(try store.read { try $0.count(FetchRequest(Photo.self)) } == 0)
        #expect(try store.currentToken() == tokenBefore)
        #expect(log.events.isEmpty)
        // A failing statement rolls back too, and the store is usable afterwards.
        #expect(throws: (any Error).self) {
            try store.write { transaction in
                try transaction.inserted(Photo(flickrID: "dup", title: "a"))
                try transaction.inserted(Photo(flickrID: "dup", title: "b"))
            }
        }
        #expect(try store.read { try $0.count(FetchRequest(Photo.self)) } == 0)
        try store.write { try $0.inserted(Photo(flickrID: "dup", title: "a")) }
        #expect(log.committedEntries.count == 1)
        observation.cancel()
    }

    @Test("Observers are told after commit, with the change set and author, in commit order", arguments: StoreKind.available)
    func observersAfterCommit(on kind: StoreKind) throws {
        let under = try TestStoreOfKind(kind)
        let store = under.store
        let log = EventLog()
        let committedCountSeen = LockedValue<[Int]>([])
        let observation = store.observe { event in
            log.append(event)
            // Called after commit: a read from the handler already sees the data.
            let count = (try? store.read { try $0.count(FetchRequest(Region.self)) }) ?? -1
            committedCountSeen.mutate { $0.append(count) }
        }
        let region = try store.write(author: "tester") { try $0.inserted(Region(name: "A")) }
        try store.write { try $0.inserted(Region(name: "B")) }
        let entries = log.committedEntries
        #expect(entries.count == 2)
        #expect(entries[0].author == "tester")
        #expect(entries[0].changes["Region"].inserted == [region.id ?? -1])
        #expect(entries[0].token < entries[1].token)
        #expect(committedCountSeen.value == [1, 2])
        observation.cancel()
        try store.write { try $0.inserted(Region(name: "C")) }
        #expect(log.events.count == 2, "no event after cancel")
    }

    @Test("Within a transaction, changes fold together as Core Data folds them")
    func folding() throws {
        let store = try makeMemoryStore()
        let kept = try store.write { try $0.inserted(Region(name: "kept")) }
        let changes = try store.write { transaction in
            var born = try transaction.inserted(Region(name: "born"))
            born.name = "renamed at birth"
            try transaction.update(born)
            let gone = try transaction.inserted(Region(name: "gone at once"))
            try transaction.delete(gone)
            var updatedThenDeleted = kept
            updatedThenDeleted.name = "changed"
            try transaction.update(updatedThenDeleted)
            try transaction.delete(updatedThenDeleted)
            return (transaction.changes, born.id)
        }
        #expect(changes.0["Region"].inserted == [changes.1 ?? -1])
        #expect(changes.0["Region"].updated.isEmpty)
        #expect(changes.0["Region"].deleted == [kept.id ?? -1])
    }

    @Test("Each commit that changes something appends one history entry with a growing token", arguments: StoreKind.available)
    func historyAppends(on kind: StoreKind) throws {
        let under = try TestStoreOfKind(kind)
        let store = under.store
        let start = try store.currentToken()
        let photo = try store.write { try $0.inserted(Photo(flickrID: "1", title: "a")) }
        try store.write { _ in }  // changes nothing: no entry
        var renamed = photo
        renamed.title = "b"
        try store.write { try $0.update(renamed) }
        try store.write { try $0.delete(renamed) }
        let entries = try store.history(since: start)
        #expect(entries.count == 3)
        #expect(entries.map(\.token) == entries.map(\.token).sorted())
        #expect(entries[0].changes["Photo"].inserted == [photo.id ?? -1])
        #expect(entries[1].changes["Photo"].updated == [photo.id ?? -1: ["title"]])
        #expect(entries[2].changes["Photo"].deleted == [photo.id ?? -1])
        let origin = (store as? Store)?.origin ?? (store as? PostgresRecordStore)?.origin
        #expect(origin != nil && entries.allSatisfy { $0.origin == origin })
        #expect(try store.history(since: entries[1].token).map(\.token) == [entries[2].token])
        #expect(try store.currentToken() == entries[2].token)
    }

    @Test("A reader whose token predates trimmed history is told to refetch; tokens never go back", arguments: StoreKind.available)
    func trimmedHistory(on kind: StoreKind) throws {
        let under = try TestStoreOfKind(kind)
        let store = under.store
        for index in 0..<5 { try store.write { try $0.inserted(Region(name: "R\(index)")) } }
        let entries = try store.history(since: 0)
        #expect(entries.count == 5)
        let trim = { (date: Date) in try (store as? Store)?.trimHistory(before: date) ?? (store as? PostgresRecordStore)?.trimHistory(before: date) }
        let trimmed = try trim(Date().addingTimeInterval(1))
        #expect(trimmed == 5)
        #expect {
            try store.history(since: entries[2].token)
        } throws: { error in
            (error as? StoreError)?.kind == .historyTrimmed
        }
        // A reader that was up to date is not affected.
        #expect(try store.history(since: entries[4].token).isEmpty)
        try store.write { try $0.inserted(Region(name: "after")) }
        let newer = try store.history(since: entries[4].token)
        #expect(newer.count == 1)
        #expect((newer.first?.token ?? 0) > entries[4].token, "tokens are not reused after trimming")
    }

    @Test("The change set's binary form round-trips through the history")
    func encodingRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let store = try TestSchema.openStore(at: directory.path("store.sqlite"))
        let (changes, token) = try store.write { transaction in
            let region = try transaction.inserted(Region(name: "R"))
            var photos = try (0..<300).map { try transaction.inserted(Photo(flickrID: "\($0)", title: "t", regionID: region.id)) }
            for index in stride(from: 0, to: 300, by: 3) {
                photos[index].views = 5
                try transaction.update(photos[index])
            }
            return (transaction.changes, try transaction.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'store_history'")?.int64 ?? 0)
        }
        let entry = try store.history(since: token).first
        #expect(entry?.changes == changes)
    }

    @Test("Async read and write forms give the same results")
    func asyncForms() async throws {
        let directory = try TemporaryDirectory()
        let store = try TestSchema.openStore(at: directory.path("store.sqlite"))
        let region = try await store.write { try $0.inserted(Region(name: "Async")) }
        let fetched = try await store.read { try $0.fetchOne(Region.self, id: region.id ?? -1) }
        #expect(fetched?.name == "Async")
    }

    @Test("The events sequence delivers commits to a for-await consumer")
    func eventSequence() async throws {
        let directory = try TemporaryDirectory()
        let store = try TestSchema.openStore(at: directory.path("store.sqlite"))
        let events = store.events()
        let consumer = Task {
            var received: [HistoryEntry] = []
            for await event in events {
                if case .committed(let entry, _) = event { received.append(entry) }
                if received.count == 2 { break }
            }
            return received
        }
        try await store.write { try $0.inserted(Region(name: "one")) }
        try await store.write { try $0.inserted(Region(name: "two")) }
        let received = await consumer.value
        #expect(received.count == 2)
        #expect(received.first?.changes["Region"].inserted.count == 1)
    }

    @Test("A disk-full error during a transaction rolls it back, is reported, and the store stays usable")
    func diskFull() throws {
        let directory = try TemporaryDirectory()
        let store = try TestSchema.openStore(at: directory.path("store.sqlite"))
        try store.write { try $0.inserted(Region(name: "before")) }
        let log = EventLog()
        let observation = store.observe { log.append($0) }
        let pages = try store.read { try $0.scalar("PRAGMA page_count")?.int64 ?? 0 }
        #expect {
            try store.write { transaction in
                // The database may not grow past a few more pages: a large write fills it.
                try transaction.execute("PRAGMA max_page_count = \(pages + 3)")
                for index in 0..<2000 {
                    try transaction.inserted(Photo(flickrID: "\(index)", title: String(repeating: "long title ", count: 20)))
                }
            }
        } throws: { error in
            (error as? StoreError)?.resultCode?.primary == .full
        }
        #expect(try store.read { try $0.count(FetchRequest(Photo.self)) } == 0)
        #expect(log.events.isEmpty)
        try store.write { transaction in
            try transaction.execute("PRAGMA max_page_count = 1073741823")
            try transaction.inserted(Region(name: "after"))
        }
        #expect(try store.read { try $0.fetch(Region.self, sortedBy: [SortKey("id")]) }.map(\.name) == ["before", "after"])
        #expect(try store.integrityCheck() == ["ok"])
        observation.cancel()
    }
}

/// A value guarded by a lock, for handlers that run on other threads.
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value
    init(_ value: Value) { storage = value }
    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
    func mutate(_ body: (inout Value) -> Void) {
        lock.lock()
        body(&storage)
        lock.unlock()
    }
}

@Suite("Store errors")
struct StoreErrorTests {
    @Test("A failed statement's error carries SQLite's code and the SQL, but not the values bound to it")
    func errorsOmitBoundValues() throws {
        let store = try makeMemoryStore()
        let secret = "secret-value-8c1f"
        try store.write { try $0.inserted(Photo(flickrID: secret, title: "first")) }
        let caught = #expect(throws: StoreError.self) {
            try store.write { try $0.inserted(Photo(flickrID: secret, title: "second")) }
        }
        #expect(caught?.resultCode?.primary == .constraint)
        #expect(caught?.sql?.contains("INSERT INTO \"Photo\"") == true)
        #expect(caught.map { !"\($0)".contains(secret) } == true)
    }

    @Test("400 IN-list lengths give exact results from about ten statements: padded to a few lengths, the cache stays bounded")
    func inListsReuseStatements() throws {
        let store = try makeMemoryStore()
        let regions = try store.write { transaction in
            try (0..<400).map { try transaction.inserted(Region(name: "R\($0)")) }
        }
        let ids = regions.compactMap(\.id)
        try store.read { context in
            let connection = try #require(context.runner as? Connection)
            let before = connection.cachedStatementCount
            for length in 1...400 {
                let fetched = try context.fetch(Region.self, ids: ids.prefix(length))
                #expect(fetched.count == length)
                #expect(Set(fetched.compactMap(\.id)) == Set(ids.prefix(length)))
            }
            // Lengths 1, 2, 4, …, 256, 500: ten statements.
            #expect(connection.cachedStatementCount - before == 10)
            #expect(connection.cachedStatementCount <= Connection.statementCacheLimit)
            // More distinct statements than the cache keeps: it is emptied, not grown.
            for offset in 0..<(Connection.statementCacheLimit + 44) {
                #expect(try context.rows("SELECT \(offset) + ?", [.integer(1)]).first?[0] == .integer(Int64(offset) + 1))
            }
            #expect(connection.cachedStatementCount <= Connection.statementCacheLimit)
        }
    }

    @Test("Padded lengths are powers of two up to the limit, never shorter than the list")
    func paddedLengths() {
        #expect((0...9).map { InList.paddedCount($0, limit: 500) } == [0, 1, 2, 4, 4, 8, 8, 8, 8, 16])
        #expect(InList.paddedCount(257, limit: 500) == 500)
        #expect(InList.paddedCount(500, limit: 500) == 500)
        #expect(InList.paddedCount(600, limit: 500) == 600)
        #expect(InList.padded([3, 1, 2], limit: 500) == [3, 1, 2, 2])
        #expect(InList.padded([Int](), limit: 500).isEmpty)
    }
}
