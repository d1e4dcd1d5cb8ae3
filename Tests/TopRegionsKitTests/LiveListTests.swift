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

/// A live list of the top regions' place ids whose rows can be made unreadable, as rows a
/// commit the controller has not processed yet deleted would be.
private final class HidingList: @unchecked Sendable {
    let test: TestGallery
    let list: LiveList<String>
    let hiding = Shared(false)
    private let received = Shared<[ListEvent<String>]>([])
    private var reader: Task<Void, Never>?

    init(hidingAtStart: Bool) async throws {
        test = try TestGallery()
        _ = try await test.syncSample()
        let queue = DispatchQueue(label: "test.live")
        let controller = try test.gallery.topRegionsController(limit: 5, delivery: queue)
        let hiding = self.hiding
        hiding.update { $0 = hidingAtStart }
        list = LiveList(controller: controller, queue: queue) { paths, controller in
            let ids = paths.compactMap { (try? controller.object(at: $0))?.placeID }
            return hiding.get() ? Array(ids.dropLast()) : ids
        }
        try list.start()
        let events = list.events()
        let received = self.received
        reader = Task { for await event in events { received.update { $0.append(event) } } }
    }

    deinit { reader?.cancel() }

    var events: [ListEvent<String>] { received.get() }

    /// The top five place ids as a fresh query gives them.
    func freshIDs() throws -> [String] { try test.gallery.topRegions(limit: 5).map(\.placeID) }
}

private func rows(_ event: ListEvent<String>?) -> [String]? {
    guard case .snapshot(_, let sections)? = event else { return nil }
    return sections.flatMap(\.rows)
}

@Suite("A live list whose rows a later commit deleted", .serialized)
struct LiveListTests {
    @Test("A snapshot waits until every row can be read; it is never sent short of rows")
    func snapshotWaitsForItsRows() async throws {
        let live = try await HidingList(hidingAtStart: true)
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(live.events.isEmpty, "no snapshot while a row cannot be read")
        live.hiding.update { $0 = false }
        #expect(await waitUntil(timeout: 5) { !live.events.isEmpty })
        #expect(rows(live.events.first) == (try live.freshIDs()))
    }

    @Test("A batch whose rows cannot all be read is replaced by a fresh snapshot for every subscriber")
    func unreadableBatchBecomesASnapshot() async throws {
        let live = try await HidingList(hidingAtStart: false)
        #expect(await waitUntil(timeout: 5) { live.events.count == 1 })
        live.hiding.update { $0 = true }
        // The fifth region rises to the top: a move whose row cannot be read.
        try await live.test.gallery.store.write { transaction in
            let fifth = try #require(try transaction.fetch(Gallery.topRegionsRequest(limit: 5), as: RegionRecord.self).last)
            try transaction.execute("UPDATE Region SET photographerCount = photographerCount + 1000 WHERE id = ?", [.integer(fifth.id ?? -1)])
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(live.events.count == 1, "neither the batch nor a short snapshot is sent")
        live.hiding.update { $0 = false }
        #expect(await waitUntil(timeout: 5) { live.events.count == 2 })
        #expect(rows(live.events.last) == (try live.freshIDs()), "the second event is a snapshot of the list as it is")
        // A subscriber that resumes from before the snapshot starts from a snapshot too.
        let firstToken = try #require(live.events.first?.token)
        var resumed = live.list.events(after: firstToken).makeAsyncIterator()
        #expect(rows(await resumed.next()) == (try live.freshIDs()))
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
