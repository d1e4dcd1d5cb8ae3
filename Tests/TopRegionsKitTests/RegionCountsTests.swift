import Foundation
import Store
import Testing
@testable import TopRegionsKit

/// `RegionCounts` directly: the counts and links it keeps, and the changes observers hear
/// of (which the store learns from SQLite), as photos join and leave regions.
@Suite("Region counts")
struct RegionCountsTests {
    /// Two regions and three photographers, no photos: the ids of each.
    private static func seeded(_ test: TestGallery) throws -> (regions: [Int64], photographers: [Int64]) {
        try test.gallery.store.write { transaction in
            let regions = try ["north", "south"].map { name in
                try transaction.inserted(RegionRecord(placeID: name, name: name, country: nil)).id ?? -1
            }
            let photographers = try ["a", "b", "c"].map { owner in
                try transaction.inserted(PhotographerRecord(ownerID: owner, name: owner)).id ?? -1
            }
            return (regions, photographers)
        }
    }

    /// Each region's (photoCount, photographerCount), and each link's photo count by pair.
    private static func counts(_ test: TestGallery) throws -> (regions: [Int64: [Int64]], links: [[Int64]: Int64]) {
        try test.gallery.store.read { context in
            var regions: [Int64: [Int64]] = [:]
            for row in try context.rows("SELECT id, photoCount, photographerCount FROM Region") {
                regions[row[0].int64 ?? -1] = [row[1].int64 ?? -1, row[2].int64 ?? -1]
            }
            var links: [[Int64]: Int64] = [:]
            for row in try context.rows("SELECT region_id, photographer_id, photoCount FROM RegionPhotographer") {
                links[[row[0].int64 ?? -1, row[1].int64 ?? -1]] = row[2].int64 ?? -1
            }
            return (regions, links)
        }
    }

    @Test("Photos joining count once per photo and once per new photographer; photos without a photographer count photos only")
    func attach() throws {
        let test = try TestGallery()
        let (regions, people) = try Self.seeded(test)
        let (north, south) = (regions[0], regions[1])
        let changes = try test.gallery.store.write { transaction in
            try RegionCounts.attach([.init(region: north, photographer: people[0]), .init(region: north, photographer: people[0]),
                                     .init(region: north, photographer: people[1]), .init(region: south, photographer: nil)], in: transaction)
            return transaction.changes
        }
        let after = try Self.counts(test)
        #expect(after.regions[north] == [3, 2])
        #expect(after.regions[south] == [1, 0])
        #expect(after.links == [[north, people[0]]: 2, [north, people[1]]: 1])
        #expect(changes["RegionPhotographer"].inserted.count == 2)
        // The counts that changed, and the links (a relationship) of the region that got some.
        #expect(changes["Region"].updated[north] == ["photoCount", "photographerCount", "photographerLinks"])
        #expect(changes["Region"].updated[south] == ["photoCount"])
    }

    @Test("A second page adds to existing links; leaving removes a photographer only with their last photo, and deletes the link")
    func attachThenDetach() throws {
        let test = try TestGallery()
        let (regions, people) = try Self.seeded(test)
        let north = regions[0]
        try test.gallery.store.write { transaction in
            try RegionCounts.attach([.init(region: north, photographer: people[0]), .init(region: north, photographer: people[1])], in: transaction)
        }
        let (second, linkA) = try test.gallery.store.write { transaction in
            try RegionCounts.attach([.init(region: north, photographer: people[0]), .init(region: north, photographer: people[2])], in: transaction)
            let linkA = try transaction.scalar("SELECT id FROM RegionPhotographer WHERE photographer_id = ?", [.integer(people[0])])?.int64
            return (transaction.changes, linkA)
        }
        #expect(try Self.counts(test).regions[north] == [4, 3])
        #expect(second["RegionPhotographer"].inserted.count == 1)
        #expect(second["RegionPhotographer"].updated.keys.sorted() == [linkA].compactMap { $0 })

        let (third, linkB) = try test.gallery.store.write { transaction in
            let linkB = try transaction.scalar("SELECT id FROM RegionPhotographer WHERE photographer_id = ?", [.integer(people[1])])?.int64
            try RegionCounts.detach([.init(region: north, photographer: people[0]), .init(region: north, photographer: people[1])], in: transaction)
            return (transaction.changes, linkB)
        }
        let after = try Self.counts(test)
        #expect(after.regions[north] == [2, 2], "a keeps one photo, b leaves")
        #expect(after.links == [[north, people[0]]: 1, [north, people[2]]: 1])
        #expect(third["RegionPhotographer"].deleted == Set([linkB].compactMap { $0 }))
        #expect(third["Region"].updated[north] == ["photoCount", "photographerCount", "photographerLinks"])
    }

    @Test("Joining and leaving within one transaction leaves no link and records no link change")
    func attachAndDetachTogether() throws {
        let test = try TestGallery()
        let (regions, people) = try Self.seeded(test)
        let south = regions[1]
        let changes = try test.gallery.store.write { transaction in
            try RegionCounts.attach([.init(region: south, photographer: people[2])], in: transaction)
            try RegionCounts.detach([.init(region: south, photographer: people[2])], in: transaction)
            return transaction.changes
        }
        let after = try Self.counts(test)
        #expect(after.regions[south] == [0, 0])
        #expect(after.links.isEmpty)
        #expect(changes["RegionPhotographer"].isEmpty)
        #expect(try test.gallery.check().isEmpty)
    }
}
