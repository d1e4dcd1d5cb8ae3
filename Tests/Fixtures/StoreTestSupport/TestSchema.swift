import Foundation
import Store

/// A small photo-like schema used by the store's tests and its fixture processes.
public enum TestSchema {
    public static let region = Entity("Region", attributes: [
        Attribute("name", .text),
        Attribute("country", .text, optional: true),
    ], relationships: [
        .toMany("photos", "Photo", inverse: "region", deleteRule: .nullify),
    ])

    public static let photographer = Entity("Photographer", attributes: [
        Attribute("name", .text),
    ], relationships: [
        .toMany("photos", "Photo", inverse: "photographer", deleteRule: .cascade),
    ])

    public static let photo = Entity("Photo", attributes: [
        Attribute("flickrID", .text, unique: true),
        Attribute("title", .text),
        Attribute("subtitle", .text, default: .text("")),
        Attribute("uploaded", .real, optional: true),
        Attribute("views", .integer, default: .integer(0)),
    ], relationships: [
        .toOne("region", "Region", inverse: "photos"),
        .toOne("photographer", "Photographer", inverse: "photos"),
        .toOneInverse("recent", "Recent", inverse: "photo", deleteRule: .cascade),
    ], indexes: [
        TableIndex("photo_title", [(column: "title", collation: .localizedStandard)]),
    ])

    public static let recent = Entity("Recent", attributes: [
        Attribute("lastViewed", .real),
    ], relationships: [
        .toOne("photo", "Photo", inverse: "recent"),
    ], indexes: [
        TableIndex("recent_photo", columns: ["photo_id"], unique: true),
    ])

    /// Rows written by the crash and concurrency fixtures: each transaction writes
    /// `partsPerBatch` entries with the same batch number.
    public static let entry = Entity("Entry", attributes: [
        Attribute("batch", .integer),
        Attribute("part", .integer),
        Attribute("payload", .text),
    ], indexes: [
        TableIndex("entry_batch", columns: ["batch"]),
    ])

    public static let partsPerBatch = 5

    public static let schema = Schema([region, photographer, photo, recent, entry])

    public static var migrator: Migrator {
        Migrator.creating([region, photographer, photo, recent, entry], name: "testSchema.v1")
    }

    public static func openStore(at path: String, configuration: StoreConfiguration = StoreConfiguration()) throws -> Store {
        try Store(path: path, schema: schema, migrator: migrator, configuration: configuration)
    }
}

public struct Region: Record, Equatable {
    public static let entity = TestSchema.region
    public var id: Int64?
    public var name: String
    public var country: String?

    public init(id: Int64? = nil, name: String, country: String? = nil) {
        self.id = id
        self.name = name
        self.country = country
    }

    public init(row: Row) throws {
        id = try row.int64("id")
        name = try row.string("name")
        country = row.optionalString("country")
    }

    public func encode(to container: inout RecordContainer) {
        container["name"] = name
        container["country"] = country
    }
}

public struct Photographer: Record, Equatable {
    public static let entity = TestSchema.photographer
    public var id: Int64?
    public var name: String

    public init(id: Int64? = nil, name: String) {
        self.id = id
        self.name = name
    }

    public init(row: Row) throws {
        id = try row.int64("id")
        name = try row.string("name")
    }

    public func encode(to container: inout RecordContainer) {
        container["name"] = name
    }
}

public struct Photo: Record, Equatable {
    public static let entity = TestSchema.photo
    public var id: Int64?
    public var flickrID: String
    public var title: String
    public var subtitle: String
    public var uploaded: Double?
    public var views: Int64
    public var regionID: Int64?
    public var photographerID: Int64?

    public init(id: Int64? = nil, flickrID: String, title: String, subtitle: String = "", uploaded: Double? = nil,
                views: Int64 = 0, regionID: Int64? = nil, photographerID: Int64? = nil) {
        self.id = id
        self.flickrID = flickrID
        self.title = title
        self.subtitle = subtitle
        self.uploaded = uploaded
        self.views = views
        self.regionID = regionID
        self.photographerID = photographerID
    }

    public init(row: Row) throws {
        id = try row.int64("id")
        flickrID = try row.string("flickrID")
        title = try row.string("title")
        subtitle = try row.string("subtitle")
        uploaded = row.optionalDouble("uploaded")
        views = try row.int64("views")
        regionID = row.optionalInt64("region_id")
        photographerID = row.optionalInt64("photographer_id")
    }

    public func encode(to container: inout RecordContainer) {
        container["flickrID"] = flickrID
        container["title"] = title
        container["subtitle"] = subtitle
        container["uploaded"] = uploaded
        container["views"] = views
        container["region_id"] = regionID
        container["photographer_id"] = photographerID
    }
}

public struct Recent: Record, Equatable {
    public static let entity = TestSchema.recent
    public var id: Int64?
    public var lastViewed: Double
    public var photoID: Int64?

    public init(id: Int64? = nil, lastViewed: Double, photoID: Int64?) {
        self.id = id
        self.lastViewed = lastViewed
        self.photoID = photoID
    }

    public init(row: Row) throws {
        id = try row.int64("id")
        lastViewed = try row.double("lastViewed")
        photoID = row.optionalInt64("photo_id")
    }

    public func encode(to container: inout RecordContainer) {
        container["lastViewed"] = lastViewed
        container["photo_id"] = photoID
    }
}

public struct Entry: Record, Equatable {
    public static let entity = TestSchema.entry
    public var id: Int64?
    public var batch: Int64
    public var part: Int64
    public var payload: String

    public init(id: Int64? = nil, batch: Int64, part: Int64, payload: String) {
        self.id = id
        self.batch = batch
        self.part = part
        self.payload = payload
    }

    public init(row: Row) throws {
        id = try row.int64("id")
        batch = try row.int64("batch")
        part = try row.int64("part")
        payload = try row.string("payload")
    }

    public func encode(to container: inout RecordContainer) {
        container["batch"] = batch
        container["part"] = part
        container["payload"] = payload
    }
}
