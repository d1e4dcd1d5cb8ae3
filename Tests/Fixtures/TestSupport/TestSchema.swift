import Foundation
import Store

/// A small photo-like schema used by the store's tests and its fixture processes.
public enum TestSchema {
    public static let region = Region.entity
    public static let photographer = Photographer.entity
    public static let photo = Photo.entity
    public static let recent = Recent.entity
    /// Rows written by the crash and concurrency fixtures: each transaction writes
    /// `partsPerBatch` entries with the same batch number.
    public static let entry = Entry.entity

    public static let partsPerBatch = 5

    public static let schema = Schema([region, photographer, photo, recent, entry])

    public static var migrator: Migrator {
        Migrator.creating([region, photographer, photo, recent, entry], name: "testSchema.v1")
    }

    public static func openStore(at path: String, configuration: StoreConfiguration = StoreConfiguration()) throws -> Store {
        try Store(path: path, schema: schema, migrator: migrator, configuration: configuration)
    }
}

public struct Region: TableRecord, Equatable {
    public var id: Int64?
    public var name = ""
    public var country: String?

    public static let table = RecordTable<Region>("Region", columns: [
        .column("name", \.name),
        .column("country", \.country),
    ], relationships: [.toMany("photos", "Photo", inverse: "region", deleteRule: .nullify)])

    public init() {}

    public init(id: Int64? = nil, name: String, country: String? = nil) {
        self.id = id
        self.name = name
        self.country = country
    }
}

public struct Photographer: TableRecord, Equatable {
    public var id: Int64?
    public var name = ""

    public static let table = RecordTable<Photographer>("Photographer", columns: [
        .column("name", \.name),
    ], relationships: [.toMany("photos", "Photo", inverse: "photographer", deleteRule: .cascade)])

    public init() {}

    public init(id: Int64? = nil, name: String) {
        self.id = id
        self.name = name
    }
}

public struct Photo: TableRecord, Equatable {
    public var id: Int64?
    public var flickrID = ""
    public var title = ""
    public var subtitle = ""
    public var uploaded: Double?
    public var views: Int64 = 0
    public var regionID: Int64?
    public var photographerID: Int64?

    public static let table = RecordTable<Photo>("Photo", columns: [
        .column("flickrID", \.flickrID, unique: true),
        .column("title", \.title),
        .column("subtitle", \.subtitle, default: ""),
        .column("uploaded", \.uploaded),
        .column("views", \.views, default: 0),
        .toOne("region", "Region", \.regionID, inverse: "photos"),
        .toOne("photographer", "Photographer", \.photographerID, inverse: "photos"),
    ], relationships: [
        .toOneInverse("recent", "Recent", inverse: "photo", deleteRule: .cascade),
    ], indexes: [
        TableIndex("photo_title", [(column: "title", collation: .localizedStandard)]),
    ])

    public init() {}

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
}

public struct Recent: TableRecord, Equatable {
    public var id: Int64?
    public var lastViewed: Double = 0
    public var photoID: Int64?

    public static let table = RecordTable<Recent>("Recent", columns: [
        .column("lastViewed", \.lastViewed),
        .toOne("photo", "Photo", \.photoID, inverse: "recent"),
    ], indexes: [TableIndex("recent_photo", columns: ["photo_id"], unique: true)])

    public init() {}

    public init(id: Int64? = nil, lastViewed: Double, photoID: Int64?) {
        self.id = id
        self.lastViewed = lastViewed
        self.photoID = photoID
    }
}

public struct Entry: TableRecord, Equatable {
    public var id: Int64?
    public var batch: Int64 = 0
    public var part: Int64 = 0
    public var payload = ""

    public static let table = RecordTable<Entry>("Entry", columns: [
        .column("batch", \.batch),
        .column("part", \.part),
        .column("payload", \.payload),
    ], indexes: [TableIndex("entry_batch", columns: ["batch"])])

    public init() {}

    public init(id: Int64? = nil, batch: Int64, part: Int64, payload: String) {
        self.id = id
        self.batch = batch
        self.part = part
        self.payload = payload
    }
}
