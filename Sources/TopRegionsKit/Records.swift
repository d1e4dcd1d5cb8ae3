import Foundation
import Store

/// A photographer (a Flickr owner) and the name Flickr last gave.
public struct PhotographerRecord: Record, Equatable {
    public static let entity = TopRegionsSchema.photographer
    public var id: Int64?
    public var ownerID: String
    public var name: String

    public init(id: Int64? = nil, ownerID: String, name: String) {
        self.id = id
        self.ownerID = ownerID
        self.name = name
    }

    public init(row: Row) throws {
        id = try row.int64("id")
        ownerID = try row.string("ownerID")
        name = try row.string("name")
    }

    public func encode(to container: inout RecordContainer) {
        container["ownerID"] = ownerID
        container["name"] = name
    }
}

/// A region: its Flickr place id is its identity (two regions can share a name).
public struct RegionRecord: Record, Equatable {
    public static let entity = TopRegionsSchema.region
    public var id: Int64?
    public var placeID: String
    public var name: String
    public var country: String?
    public var photographerCount: Int64 = 0
    public var photoCount: Int64 = 0

    public init(id: Int64? = nil, placeID: String, name: String, country: String?, photographerCount: Int64 = 0, photoCount: Int64 = 0) {
        self.id = id
        self.placeID = placeID
        self.name = name
        self.country = country
        self.photographerCount = photographerCount
        self.photoCount = photoCount
    }

    public init(row: Row) throws {
        id = try row.int64("id")
        placeID = try row.string("placeID")
        name = try row.string("name")
        country = row.optionalString("country")
        photographerCount = try row.int64("photographerCount")
        photoCount = try row.int64("photoCount")
    }

    public func encode(to container: inout RecordContainer) {
        container["placeID"] = placeID
        container["name"] = name
        container["country"] = country
        container["photographerCount"] = photographerCount
        container["photoCount"] = photoCount
    }
}

public struct PlaceRecord: Record, Equatable {
    public static let entity = TopRegionsSchema.place
    public var id: Int64?
    public var placeID: String
    public var status: PlaceStatus
    public var askedAt: Date?
    public var regionID: Int64?

    public init(id: Int64? = nil, placeID: String, status: PlaceStatus = .pending, askedAt: Date? = nil, regionID: Int64? = nil) {
        self.id = id
        self.placeID = placeID
        self.status = status
        self.askedAt = askedAt
        self.regionID = regionID
    }

    public init(row: Row) throws {
        id = try row.int64("id")
        placeID = try row.string("placeID")
        let text = try row.string("status")
        guard let status = PlaceStatus(rawValue: text) else {
            throw StoreError(.decoding, "Place \(placeID) has an unknown status \"\(text)\"")
        }
        self.status = status
        askedAt = row.optionalDouble("askedAt").map(Date.init(timeIntervalSince1970:))
        regionID = row.optionalInt64("region_id")
    }

    public func encode(to container: inout RecordContainer) {
        container["placeID"] = placeID
        container["status"] = status.rawValue
        container["askedAt"] = askedAt
        container["region_id"] = regionID
    }
}

/// A stored photo. `title`/`subtitle` follow the course's rules (see `PhotoText`).
public struct PhotoRecord: Record, Equatable {
    public static let entity = TopRegionsSchema.photo
    public var id: Int64?
    public var flickrID: String
    public var flickrNumber: Int64
    public var title: String
    public var subtitle: String
    public var photoDescription: String
    public var uploaded: Date?
    public var downloaded: Date
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

    public init(row: Row) throws {
        id = try row.int64("id")
        flickrID = try row.string("flickrID")
        flickrNumber = try row.int64("flickrNumber")
        title = try row.string("title")
        subtitle = try row.string("subtitle")
        photoDescription = try row.string("photoDescription")
        uploaded = row.optionalDouble("uploaded").map(Date.init(timeIntervalSince1970:))
        downloaded = Date(timeIntervalSince1970: try row.double("downloaded"))
        latitude = row.optionalDouble("latitude")
        longitude = row.optionalDouble("longitude")
        secret = row.optionalString("secret")
        server = row.optionalString("server")
        farm = row.optionalInt64("farm")
        originalSecret = row.optionalString("originalSecret")
        originalFormat = row.optionalString("originalFormat")
        photographerID = row.optionalInt64("photographer_id")
        placeID = row.optionalInt64("place_id")
        regionID = row.optionalInt64("region_id")
    }

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

    public func encode(to container: inout RecordContainer) {
        container["flickrID"] = flickrID
        container["flickrNumber"] = flickrNumber
        container["title"] = title
        container["subtitle"] = subtitle
        container["photoDescription"] = photoDescription
        container["uploaded"] = uploaded
        container["downloaded"] = downloaded
        container["latitude"] = latitude
        container["longitude"] = longitude
        container["secret"] = secret
        container["server"] = server
        container["farm"] = farm
        container["originalSecret"] = originalSecret
        container["originalFormat"] = originalFormat
        container["photographer_id"] = photographerID
        container["place_id"] = placeID
        container["region_id"] = regionID
    }
}

public struct RecentRecord: Record, Equatable {
    public static let entity = TopRegionsSchema.recent
    public var id: Int64?
    public var lastViewed: Date
    public var photoID: Int64?

    public init(id: Int64? = nil, lastViewed: Date, photoID: Int64?) {
        self.id = id
        self.lastViewed = lastViewed
        self.photoID = photoID
    }

    public init(row: Row) throws {
        id = try row.int64("id")
        lastViewed = Date(timeIntervalSince1970: try row.double("lastViewed"))
        photoID = row.optionalInt64("photo_id")
    }

    public func encode(to container: inout RecordContainer) {
        container["lastViewed"] = lastViewed
        container["photo_id"] = photoID
    }
}

public struct FavoriteRecord: Record, Equatable {
    public static let entity = TopRegionsSchema.favorite
    public var id: Int64?
    public var displayOrder: Int64
    public var photoID: Int64?

    public init(id: Int64? = nil, displayOrder: Int64, photoID: Int64?) {
        self.id = id
        self.displayOrder = displayOrder
        self.photoID = photoID
    }

    public init(row: Row) throws {
        id = try row.int64("id")
        displayOrder = try row.int64("displayOrder")
        photoID = row.optionalInt64("photo_id")
    }

    public func encode(to container: inout RecordContainer) {
        container["displayOrder"] = displayOrder
        container["photo_id"] = photoID
    }
}
