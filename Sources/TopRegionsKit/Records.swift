import Foundation
import Store

// The product's records: each declares its columns once (`TableRecord`), and its entity
// comes from that declaration.

/// A photographer (a Flickr owner) and the name Flickr last gave.
public struct PhotographerRecord: TableRecord, Equatable {
    public var id: Int64?
    public var ownerID = ""
    public var name = ""

    public static let table = RecordTable<PhotographerRecord>("Photographer", columns: [
        .column("ownerID", \.ownerID, unique: true),
        .column("name", \.name),
    ], relationships: [
        .toMany("photos", "Photo", inverse: "photographer", deleteRule: .nullify),
        .toMany("regionLinks", "RegionPhotographer", inverse: "photographer", deleteRule: .cascade),
    ])

    public init() {}

    public init(id: Int64? = nil, ownerID: String, name: String) {
        self.id = id
        self.ownerID = ownerID
        self.name = name
    }
}

/// A region: its Flickr place id is its identity (two regions can share a name).
public struct RegionRecord: TableRecord, Equatable {
    public var id: Int64?
    public var placeID = ""
    public var name = ""
    public var country: String?
    public var photographerCount: Int64 = 0
    public var photoCount: Int64 = 0

    public static let table = RecordTable<RegionRecord>("Region", columns: [
        .column("placeID", \.placeID, unique: true),
        .column("name", \.name),
        .column("country", \.country),
        .column("photographerCount", \.photographerCount, default: 0),
        .column("photoCount", \.photoCount, default: 0),
    ], relationships: [
        .toMany("photos", "Photo", inverse: "region", deleteRule: .nullify),
        .toMany("places", "Place", inverse: "region", deleteRule: .nullify),
        .toMany("photographerLinks", "RegionPhotographer", inverse: "region", deleteRule: .cascade),
    ], indexes: [
        // The top-regions query reads this index in order and stops after the limit.
        TableIndex("region_top", [(column: "photographerCount", collation: nil), (column: "name", collation: .localizedStandard),
                                  (column: "placeID", collation: nil)], descending: ["photographerCount"]),
    ])

    public init() {}

    public init(id: Int64? = nil, placeID: String, name: String, country: String?, photographerCount: Int64 = 0, photoCount: Int64 = 0) {
        self.id = id
        self.placeID = placeID
        self.name = name
        self.country = country
        self.photographerCount = photographerCount
        self.photoCount = photoCount
    }
}

extension PlaceStatus: ColumnValue {}

/// A Flickr place: what `places.getInfo` said of it, once asked.
public struct PlaceRecord: TableRecord, Equatable {
    public var id: Int64?
    public var placeID = ""
    public var status = PlaceStatus.pending
    public var askedAt: Date?
    public var regionID: Int64?

    public static let table = RecordTable<PlaceRecord>("Place", columns: [
        .column("placeID", \.placeID, unique: true),
        .column("status", \.status, default: .pending),
        .column("askedAt", \.askedAt),
        .toOne("region", "Region", \.regionID, inverse: "places"),
    ], relationships: [
        .toMany("photos", "Photo", inverse: "place", deleteRule: .nullify),
    ], indexes: [TableIndex("place_status", columns: ["status"])])

    public init() {}

    public init(id: Int64? = nil, placeID: String, status: PlaceStatus = .pending, askedAt: Date? = nil, regionID: Int64? = nil) {
        self.id = id
        self.placeID = placeID
        self.status = status
        self.askedAt = askedAt
        self.regionID = regionID
    }
}

/// A stored photo. `title`/`subtitle` follow the course's rules (see `PhotoText`).
public struct PhotoRecord: TableRecord, Equatable {
    public var id: Int64?
    public var flickrID = ""
    /// The Flickr id as a number, for "then by photo id as a number".
    public var flickrNumber: Int64 = 0
    public var title = ""
    public var subtitle = ""
    public var photoDescription = ""
    public var uploaded: Date?
    public var downloaded = Date(timeIntervalSince1970: 0)
    public var latitude: Double?
    public var longitude: Double?
    public var secret: String?
    public var server: String?
    public var farm: Int64?
    public var originalSecret: String?
    public var originalFormat: String?
    public var photographerID: Int64?
    public var placeID: Int64?
    public var regionID: Int64?

    public static let table = RecordTable<PhotoRecord>("Photo", columns: [
        .column("flickrID", \.flickrID, unique: true),
        .column("flickrNumber", \.flickrNumber),
        .column("title", \.title),
        .column("subtitle", \.subtitle),
        .column("photoDescription", \.photoDescription),
        .column("uploaded", \.uploaded),
        .column("downloaded", \.downloaded),
        .column("latitude", \.latitude),
        .column("longitude", \.longitude),
        .column("secret", \.secret),
        .column("server", \.server),
        .column("farm", \.farm),
        .column("originalSecret", \.originalSecret),
        .column("originalFormat", \.originalFormat),
        .toOne("photographer", "Photographer", \.photographerID, inverse: "photos"),
        .toOne("place", "Place", \.placeID, inverse: "photos"),
        .toOne("region", "Region", \.regionID, inverse: "photos"),
    ], relationships: [
        .toOneInverse("recent", "Recent", inverse: "photo", deleteRule: .cascade),
        .toOneInverse("favorite", "Favorite", inverse: "photo", deleteRule: .cascade),
        .toOneInverse("thumbnail", "Thumbnail", inverse: "photo", deleteRule: .cascade),
    ], indexes: [
        TableIndex("photo_region_title", [(column: "region_id", collation: nil), (column: "title", collation: .localizedStandard),
                                          (column: "flickrNumber", collation: nil)]),
        TableIndex("photo_downloaded", columns: ["downloaded"]),
    ])

    public init() {}

    public init(flickrID: String, title: String, subtitle: String, photoDescription: String, uploaded: Date?, downloaded: Date,
                latitude: Double?, longitude: Double?, secret: String?, server: String?, farm: Int64?, originalSecret: String?,
                originalFormat: String?, photographerID: Int64?, placeID: Int64?, regionID: Int64?) {
        self.flickrID = flickrID
        self.flickrNumber = Int64(flickrID) ?? 0
        self.title = title
        self.subtitle = subtitle
        self.photoDescription = photoDescription
        self.uploaded = uploaded
        self.downloaded = downloaded
        self.latitude = latitude
        self.longitude = longitude
        self.secret = secret
        self.server = server
        self.farm = farm
        self.originalSecret = originalSecret
        self.originalFormat = originalFormat
        self.photographerID = photographerID
        self.placeID = placeID
        self.regionID = regionID
    }
}

/// A photo in Recents, with when it was viewed.
public struct RecentRecord: TableRecord, Equatable {
    public var id: Int64?
    public var lastViewed = Date(timeIntervalSince1970: 0)
    public var photoID: Int64?

    public static let table = RecordTable<RecentRecord>("Recent", columns: [
        .column("lastViewed", \.lastViewed),
        .toOne("photo", "Photo", \.photoID, inverse: "recent"),
    ], indexes: [TableIndex("recent_photo", columns: ["photo_id"], unique: true),
                 TableIndex("recent_last_viewed", columns: ["lastViewed"])])

    public init() {}

    public init(id: Int64? = nil, lastViewed: Date, photoID: Int64?) {
        self.id = id
        self.lastViewed = lastViewed
        self.photoID = photoID
    }
}

/// A photo in Favorites, at its place in the user's order.
public struct FavoriteRecord: TableRecord, Equatable {
    public var id: Int64?
    public var displayOrder: Int64 = 0
    public var photoID: Int64?

    public static let table = RecordTable<FavoriteRecord>("Favorite", columns: [
        .column("displayOrder", \.displayOrder),
        .toOne("photo", "Photo", \.photoID, inverse: "favorite"),
    ], indexes: [TableIndex("favorite_photo", columns: ["photo_id"], unique: true),
                 TableIndex("favorite_order", columns: ["displayOrder"])])

    public init() {}

    public init(id: Int64? = nil, displayOrder: Int64, photoID: Int64?) {
        self.id = id
        self.displayOrder = displayOrder
        self.photoID = photoID
    }
}
