import Foundation
import ResultsController
import Store
import Synchronization
import TestSupport
import Testing
@testable import TopRegionsKit

/// A value shared with closures and tasks.
private final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func get() -> Value { value.withLock { $0 } }
    func update(_ change: (inout Value) -> Void) { value.withLock { change(&$0) } }
}

/// A live list of the top regions' place ids whose queue (the controller's delivery queue)
/// can be held, so that commits land in the store before the controller processes them:
/// rows the list reads then may be gone.
private final class HeldList: @unchecked Sendable {
    let test: TestGallery
    let list: LiveList<String>
    let queue = DispatchQueue(label: "test.live")
    private let received = Shared<[ListEvent<String>]>([])
    private var reader: Task<Void, Never>?

    init() async throws {
        test = try TestGallery()
        _ = try await test.syncSample()
        let controller = try test.gallery.topRegionsController(limit: 5, delivery: queue)
        list = LiveList(controller: controller, queue: queue, store: test.gallery.store) { _, pairs in pairs.map(\.record.placeID) }
        try list.start()
    }

    /// Starts reading the list's events.
    func read() {
        let events = list.events()
        let received = self.received
        reader = Task { for await event in events { received.update { $0.append(event) } } }
    }

    /// Holds the list's queue, once what is queued before it has run, until released.
    struct Hold: Sendable {
        let reachedSignal = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)

        /// Returns once what was queued before the hold has run.
        func reached() async {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    reachedSignal.wait()
                    continuation.resume()
                }
            }
        }

        func release() { gate.signal() }
    }

    func hold() -> Hold {
        let hold = Hold()
        queue.async {
            hold.reachedSignal.signal()
            hold.gate.wait()
        }
        return hold
    }

    deinit { reader?.cancel() }

    var events: [ListEvent<String>] { received.get() }

    /// The top five place ids as a fresh query gives them.
    func freshIDs() throws -> [String] { try test.gallery.topRegions(limit: 5).map(\.placeID) }

    /// Deletes the region with this place id, as pruning would.
    func deleteRegion(_ placeID: String) async throws {
        try await test.gallery.store.write { transaction in
            guard let id = try transaction.fetch(RegionRecord.self, where: Key("placeID") == placeID).first?.id else { return }
            try transaction.execute("UPDATE Photo SET region_id = NULL WHERE region_id = ?", [.integer(id)])
            try transaction.execute("DELETE FROM RegionPhotographer WHERE region_id = ?", [.integer(id)])
            try transaction.execute("UPDATE Place SET region_id = NULL WHERE region_id = ?", [.integer(id)])
            try transaction.execute("DELETE FROM Region WHERE id = ?", [.integer(id)])
        }
    }
}

private func rows(_ event: ListEvent<String>?) -> [String]? {
    guard case .snapshot(_, let sections)? = event else { return nil }
    return sections.flatMap(\.rows)
}

@Suite("A live list whose rows a later commit deleted", .serialized)
struct LiveListTests {
    @Test("A snapshot whose rows a commit the controller has not processed took waits for it; it is never sent short of rows")
    func snapshotWaitsForTheController() async throws {
        let live = try await HeldList()
        let third = try live.freshIDs()[2]
        let hold = live.hold()
        live.read()  // its snapshot is read after the hold, before the controller hears of the deletion
        try await live.deleteRegion(third)
        hold.release()
        #expect(await waitUntil(timeout: 5) { !live.events.isEmpty })
        #expect(rows(live.events.first) == (try live.freshIDs()), "the first snapshot is the list after the deletion, whole")
        #expect(rows(live.events.first)?.contains(third) == false)
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(live.events.count == 1, "the deletion's batch is in the snapshot, not sent again")
    }

    @Test("A batch whose rows a later commit deleted is replaced by a fresh snapshot for every subscriber")
    func unreadableBatchBecomesASnapshot() async throws {
        let live = try await HeldList()
        live.read()
        #expect(await waitUntil(timeout: 5) { live.events.count == 1 })
        // The fifth region rises to the top: a move whose row the list reads after the
        // controller has placed it. Between the two, another commit deletes it.
        let fifth = try #require(try live.freshIDs().last)
        let first = live.hold()
        try await live.test.gallery.store.write { transaction in
            try transaction.execute("UPDATE Region SET photographerCount = photographerCount + 1000 WHERE placeID = ?", [.text(fifth)])
        }
        // Queued after the controller's work on the move, before the list reads its rows.
        let second = live.hold()
        first.release()
        await second.reached()
        try await live.deleteRegion(fifth)
        second.release()
        #expect(await waitUntil(timeout: 5) { live.events.count >= 2 })
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(live.events.count == 2, "the move's batch is not sent, nor the deletion's after the snapshot")
        #expect(rows(live.events.last) == (try live.freshIDs()), "the second event is a snapshot of the list as it is")
        // A subscriber that resumes from before the snapshot starts from a snapshot too.
        let firstToken = try #require(live.events.first?.token)
        var resumed = live.list.events(after: firstToken).makeAsyncIterator()
        #expect(rows(await resumed.next()) == (try live.freshIDs()))
    }

    @Test("A row read that fails ends the list, saying why, for every subscriber, rather than sending it short")
    func failedReadEndsTheList() async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let queue = DispatchQueue(label: "test.failing")
        let failing = Shared(false)
        struct Unreadable: Error, CustomStringConvertible { var description: String { "the disk is gone" } }
        let controller = try test.gallery.topRegionsController(limit: 5, delivery: queue)
        let list = LiveList(controller: controller, queue: queue, store: test.gallery.store) { _, pairs in
            if failing.get() { throw Unreadable() }
            return pairs.map(\.record.placeID)
        }
        try list.start()
        let messages = Shared<[String]>([])
        let subscription = list.subscribe { message in
            switch message {
            case .event(let delivery): messages.update { $0.append(delivery.kind) }
            case .ended(let end): messages.update { $0.append("ended: \(end.reason)") }
            }
        }
        defer { subscription.cancel() }
        #expect(await waitUntil(timeout: 5) { messages.get() == ["snapshot"] })
        failing.update { $0 = true }
        try await test.gallery.store.write { transaction in
            try transaction.execute("UPDATE Region SET photographerCount = photographerCount + 1000 WHERE id = (SELECT max(id) FROM Region)")
        }
        #expect(await waitUntil(timeout: 5) { messages.get().count == 2 })
        #expect(messages.get().last?.contains("the disk is gone") == true, "\(messages.get())")
        #expect(list.hasEnded)
        let late = Shared<[String]>([])
        _ = list.subscribe { message in if case .ended = message { late.update { $0.append("ended") } } }
        #expect(await waitUntil(timeout: 5) { late.get() == ["ended"] }, "a later subscriber is told at once")
    }

    @Test("A region's live photos end when the region is deleted (its row id may go to another region), with the reason")
    func regionListEndsWithItsRegion() async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let (region, regionID) = try await test.topRegion()
        let list = try test.gallery.liveRegionPhotos(regionID: regionID)
        let ended = Shared(false)
        let reader = Task {
            for await _ in list.events() {}
            ended.update { $0 = true }
        }
        defer { reader.cancel() }
        try await test.gallery.store.write { transaction in
            try transaction.execute("UPDATE Photo SET region_id = NULL WHERE region_id = ?", [.integer(regionID)])
            try transaction.execute("DELETE FROM RegionPhotographer WHERE region_id = ?", [.integer(regionID)])
            try transaction.execute("UPDATE Place SET region_id = NULL WHERE region_id = ?", [.integer(regionID)])
            try transaction.execute("DELETE FROM Region WHERE id = ?", [.integer(regionID)])
        }
        #expect(await waitUntil(timeout: 5) { ended.get() })
        #expect(list.endReason?.contains(region.name) == true)
        var late = list.events().makeAsyncIterator()
        #expect(await late.next() == nil, "a subscriber after the end gets nothing")
    }

    @Test("A region's live photos whose region is given another row id (by SQL from outside) end saying so, not that it was pruned")
    func regionListEndsWhenRenumbered() async throws {
        let test = try TestGallery()
        _ = try await test.syncSample()
        let (_, regionID) = try await test.topRegion()
        let list = try test.gallery.liveRegionPhotos(regionID: regionID)
        let reader = Task { for await _ in list.events() {} }
        defer { reader.cancel() }
        let renumbered: Int64 = 999_999
        try await test.gallery.store.write { transaction in
            try transaction.execute("UPDATE Region SET id = ? WHERE id = ?", [.integer(renumbered), .integer(regionID)])
            for table in ["Photo", "RegionPhotographer", "Place"] {
                try transaction.execute("UPDATE \(table) SET region_id = ? WHERE region_id = ?", [.integer(renumbered), .integer(regionID)])
            }
        }
        #expect(await waitUntil(timeout: 5) { list.endReason != nil })
        #expect(list.endReason?.contains("now has row id \(renumbered)") == true, "\(list.endReason ?? "")")
    }
}
