import Foundation
import Store

/// Random transactions over the test schema, from a seed: the same seed makes the same
/// transactions on the same store. Used by the results controller's property test and by
/// the fixture process that commits from another process.
public struct RandomTransactions: Sendable {
    public var random: SeededGenerator
    /// Distinguishes the Flickr ids this generator makes from another generator's.
    public let writer: String
    private var serial = 0

    public init(seed: UInt64, writer: String = "local") {
        random = SeededGenerator(seed: seed)
        self.writer = writer
    }

    /// Titles sort with the localized-standard collation: numbers, case, accents, and
    /// canonically equal strings in different bytes (composed and decomposed accents).
    public static let titles = ["IMG 2", "IMG 10", "img 1", "\u{C9}clair", "E\u{301}clair", "eclair", "Zebra", "apple", "東京", "🐱",
                                "", "Apple", "Item 10", "Item 9", "\u{C5}ngstr\u{F6}m", "A\u{30A}ngstro\u{308}m"]
    /// Region names: shared by several regions, case variants, canonically equal forms
    /// (Liège composed and decomposed; Å as a letter, as A and a ring, as the Ångström sign),
    /// and the empty name (a section apart from the NULL section of photos without a region).
    public static let regionNames = ["Limburg", "limburg", "Punjab", "Quebec", "\u{CE}le-de-France", "Zu\u{308}rich", "Tokyo",
                                     "Li\u{E8}ge", "Lie\u{300}ge", "\u{C5}land", "A\u{30A}land", "\u{212B}land", ""]
    public static let countries: [String?] = ["A", "B", "C", nil]
    /// Above this many photos, half of the operations delete one.
    public static let photoCeiling = 150

    public mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
    public mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    private mutating func newFlickrID() -> String {
        serial += 1
        return "\(writer)-\(serial)-\(random.next() % 1_000)"
    }

    /// One to four random operations in one transaction.
    public mutating func transaction(_ transaction: Transaction) throws {
        let operations = Int.random(in: 1...4, using: &random)
        for _ in 0..<operations { try operation(transaction) }
    }

    private mutating func operation(_ transaction: Transaction) throws {
        // Read again each time: an earlier operation may have deleted what was there.
        let photoIDs = try transaction.fetchIDs(FetchRequest(Photo.self, sortDescriptors: [SortKey("id")]))
        let regionIDs = try transaction.fetchIDs(FetchRequest(Region.self, sortDescriptors: [SortKey("id")]))
        let photographerIDs = try transaction.fetchIDs(FetchRequest(Photographer.self, sortDescriptors: [SortKey("id")]))
        // Keep the store small, where sections come and go most often.
        if photoIDs.count > Self.photoCeiling && chance(50) {
            try transaction.delete("Photo", ids: [pick(photoIDs)])
            return
        }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<25:
            try transaction.inserted(Photo(flickrID: newFlickrID(), title: pick(Self.titles), subtitle: "s",
                                           views: Int64.random(in: 0...9, using: &random),
                                           regionID: chance(85) && !regionIDs.isEmpty ? pick(regionIDs) : nil,
                                           photographerID: photographerIDs.isEmpty ? nil : pick(photographerIDs)))
        case 25..<35 where !photoIDs.isEmpty:
            try transaction.delete("Photo", ids: [pick(photoIDs)])
        case 35..<65 where !photoIDs.isEmpty:
            try updatePhoto(transaction, photoIDs: photoIDs, regionIDs: regionIDs)
        case 65..<72 where !regionIDs.isEmpty:
            guard var region = try transaction.fetchOne(Region.self, id: pick(regionIDs)) else { return }
            region.name = pick(Self.regionNames)
            if chance(30) { region.country = pick(Self.countries) }
            try transaction.update(region)
        case 72..<76:
            try transaction.inserted(Region(name: pick(Self.regionNames), country: pick(Self.countries)))
        case 76..<79 where !regionIDs.isEmpty:
            try transaction.delete("Region", ids: [pick(regionIDs)])
        case 79..<81 where !photographerIDs.isEmpty && photoIDs.count > 30:
            try transaction.delete("Photographer", ids: [pick(photographerIDs)])
        case 81..<83:
            try transaction.inserted(Photographer(name: pick(["Jane", "Omar", "Jo", "Yuki"])))
        case 83..<92 where !photoIDs.isEmpty:
            try viewPhoto(transaction, pick(photoIDs))
        case 92..<95 where !regionIDs.isEmpty:
            // A whole section goes at once.
            let regionID = pick(regionIDs)
            try transaction.deleteAll(FetchRequest(Photo.self, predicate: Key("region") == regionID))
        default:
            try transaction.inserted(Photo(flickrID: newFlickrID(), title: pick(Self.titles),
                                           views: Int64.random(in: 0...9, using: &random),
                                           regionID: regionIDs.isEmpty ? nil : pick(regionIDs)))
        }
    }

    private mutating func updatePhoto(_ transaction: Transaction, photoIDs: [Int64], regionIDs: [Int64]) throws {
        guard var photo = try transaction.fetchOne(Photo.self, id: pick(photoIDs)) else { return }
        switch Int.random(in: 0..<5, using: &random) {
        case 0: photo.title = pick(Self.titles)
        case 1: photo.views = Int64.random(in: 0...9, using: &random)
        case 2: photo.regionID = regionIDs.isEmpty || chance(10) ? nil : pick(regionIDs)
        case 3: photo.subtitle = newFlickrID()  // a column no request sorts or filters on
        default:
            // Two photos swap their views.
            guard var other = try transaction.fetchOne(Photo.self, id: pick(photoIDs)) else { return }
            (photo.views, other.views) = (other.views, photo.views)
            try transaction.update(other)
        }
        try transaction.update(photo)
    }

    private mutating func viewPhoto(_ transaction: Transaction, _ photoID: Int64) throws {
        let existing = try transaction.fetch(Recent.self, where: Key("photo") == photoID)
        if var recent = existing.first {
            if chance(25) {
                try transaction.delete(recent)
            } else {
                recent.lastViewed = Double(Int.random(in: 0...20, using: &random))
                try transaction.update(recent)
            }
        } else {
            try transaction.inserted(Recent(lastViewed: Double(Int.random(in: 0...20, using: &random)), photoID: photoID))
        }
    }
}
