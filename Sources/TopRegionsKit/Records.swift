import Foundation
import Store

// The product's records: each declares its columns once (`TableRecord`), and its entity
// comes from that declaration.

/// A photographer (a Flickr owner) and the name Flickr last gave.
public struct PhotographerRecord: TableRecord, Equatable {
    /// The row's primary key; nil until the photographer is inserted.
    public var id: Int64?
    /// The Flickr owner id (`owner`, e.g. "12345678@N00"): the photographer's identity.
    public var ownerID = ""
    /// The owner name Flickr last gave (the newest page wins); the owner id if it never gave one.
    public var name = ""
    /// The owner's URL alias (Flickr's `path_alias`), which their pages are named by; nil
    /// when they have none, or the photographer was stored before aliases were.
    public var pathAlias: String?

    /// The Photographer table: unique by owner id, with its photos and per-region links.
    public static let table = RecordTable<PhotographerRecord>("Photographer", columns: [
        .column("ownerID", \.ownerID, unique: true),
        .column("name", \.name),
        .column("pathAlias", \.pathAlias),
    ], relationships: [
        .toMany("photos", "Photo", inverse: "photographer", deleteRule: .nullify),
        .toMany("regionLinks", "RegionPhotographer", inverse: "photographer", deleteRule: .cascade),
    ])

    /// An empty photographer, which decoding fills in.
    public init() {}

    /// A photographer with these values.
    public init(id: Int64? = nil, ownerID: String, name: String, pathAlias: String? = nil) {
        self.id = id
        self.ownerID = ownerID
        self.name = name
        self.pathAlias = pathAlias
    }
}

/// A region: its Flickr place id is its identity (two regions can share a name).
public struct RegionRecord: TableRecord, Equatable {
    /// The row's primary key; nil until the region is inserted.
    public var id: Int64?
    /// The region's Flickr place id: its identity (two regions can share a name).
    public var placeID = ""
    /// The region's name as Flickr gave it; a region with an empty name is never listed.
    public var name = ""
    /// The name of the country the region lies in; nil when Flickr named none.
    public var country: String?
    /// Distinct photographers with a photo in the region, kept exact with the photos.
    public var photographerCount: Int64 = 0
    /// Photos in the region, kept exact with the photos; 0 hides the region.
    public var photoCount: Int64 = 0
    /// The search terms of its name and country (`SearchIndex`): kept by the gallery.
    public var searchName = ""

    /// The Region table, with the index the top-regions query reads in order.
    public static let table = RecordTable<RegionRecord>("Region", columns: [
        .column("placeID", \.placeID, unique: true),
        .column("name", \.name),
        .column("country", \.country),
        .column("photographerCount", \.photographerCount, default: 0),
        .column("photoCount", \.photoCount, default: 0),
        .column("searchName", \.searchName, default: ""),
    ], relationships: [
        .toMany("photos", "Photo", inverse: "region", deleteRule: .nullify),
        .toMany("places", "Place", inverse: "region", deleteRule: .nullify),
        .toMany("photographerLinks", "RegionPhotographer", inverse: "region", deleteRule: .cascade),
    ], indexes: [
        // The top-regions query reads this index in order and stops after the limit.
        TableIndex("region_top", [(column: "photographerCount", collation: nil), (column: "name", collation: .localizedStandard),
                                  (column: "placeID", collation: nil)], descending: ["photographerCount"]),
    ])

    /// An empty region, which decoding fills in.
    public init() {}

    /// A region with these values.
    public init(id: Int64? = nil, placeID: String, name: String, country: String?, photographerCount: Int64 = 0, photoCount: Int64 = 0) {
        self.id = id
        self.placeID = placeID
        self.name = name
        self.country = country
        self.photographerCount = photographerCount
        self.photoCount = photoCount
        self.searchName = SearchIndex.regionColumn(name: name, country: country)
    }
}

extension PlaceStatus: ColumnValue {}

/// A Flickr place: what `places.getInfo` said of it, once asked.
public struct PlaceRecord: TableRecord, Equatable {
    /// The row's primary key; nil until the place is inserted.
    public var id: Int64?
    /// The Flickr place id a photo was taken in.
    public var placeID = ""
    /// What `places.getInfo` said of the place so far; `.pending` until it answers for good.
    public var status = PlaceStatus.pending
    /// When `places.getInfo` was last asked about the place; nil if never.
    public var askedAt: Date?
    /// The region the place lies in, once resolved; nil otherwise.
    public var regionID: Int64?

    /// The Place table, indexed by status so that the places not asked yet are found fast.
    public static let table = RecordTable<PlaceRecord>("Place", columns: [
        .column("placeID", \.placeID, unique: true),
        .column("status", \.status, default: .pending),
        .column("askedAt", \.askedAt),
        .toOne("region", "Region", \.regionID, inverse: "places"),
    ], relationships: [
        .toMany("photos", "Photo", inverse: "place", deleteRule: .nullify),
    ], indexes: [TableIndex("place_status", columns: ["status"])])

    /// An empty place, which decoding fills in.
    public init() {}

    /// A place with these values.
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
    /// The row's primary key; nil until the photo is inserted.
    public var id: Int64?
    /// The Flickr photo id: the photo's identity.
    public var flickrID = ""
    /// The Flickr id as a number, for "then by photo id as a number".
    public var flickrNumber: Int64 = 0
    /// The title shown: Flickr's title, else the description, else "Unknown".
    public var title = ""
    /// The description, or empty when the description became the title.
    public var subtitle = ""
    /// The Flickr description as sent; empty when the photo has none.
    public var photoDescription = ""
    /// When the photo was uploaded to Flickr (`dateupload`); nil when Flickr did not say.
    public var uploaded: Date?
    /// When a sync first stored the photo; pruning goes by it.
    public var downloaded = Date(timeIntervalSince1970: 0)
    /// Where the photo was taken, in degrees; nil when Flickr gave no coordinate.
    public var latitude: Double?
    /// Where the photo was taken, in degrees; nil when Flickr gave no coordinate.
    public var longitude: Double?
    /// The secret in the photo's square and large image URLs; nil when Flickr sent none.
    public var secret: String?
    /// The image server in every image URL of the photo; nil when Flickr sent none.
    public var server: String?
    /// Flickr's farm number, as sent; the image URLs built here do not use it.
    public var farm: Int64?
    /// The secret in the original image's URL; nil when the original is not public.
    public var originalSecret: String?
    /// The original image's file extension ("jpg", "png"); nil when not public.
    public var originalFormat: String?
    /// Flickr's licence id ("4"); nil when unknown (Flickr did not say, or the photo was
    /// stored before licences were).
    public var license: String?
    /// The title's search terms (`SearchIndex`): kept by the gallery, not for setting.
    public var searchTitle = ""
    /// The search terms of the description, photographer, region and country.
    public var searchText = ""
    /// The photographer who took the photo.
    public var photographerID: Int64?
    /// The Place row the photo was taken in; nil when Flickr knows no place.
    public var placeID: Int64?
    /// The photo's region, once its place is resolved; until then no query shows the photo.
    public var regionID: Int64?

    /// The Photo table, indexed for photos of a region in title order and for pruning.
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
        .column("license", \.license),
        .column("searchTitle", \.searchTitle, default: ""),
        .column("searchText", \.searchText, default: ""),
        .toOne("photographer", "Photographer", \.photographerID, inverse: "photos"),
        .toOne("place", "Place", \.placeID, inverse: "photos"),
        .toOne("region", "Region", \.regionID, inverse: "photos"),
    ], relationships: [
        .toMany("recents", "Recent", inverse: "photo", deleteRule: .cascade),
        .toMany("favorites", "Favorite", inverse: "photo", deleteRule: .cascade),
        .toOneInverse("thumbnail", "Thumbnail", inverse: "photo", deleteRule: .cascade),
    ], indexes: [
        TableIndex("photo_region_title", [(column: "region_id", collation: nil), (column: "title", collation: .localizedStandard),
                                          (column: "flickrNumber", collation: nil)]),
        TableIndex("photo_downloaded", columns: ["downloaded"]),
    ])

    /// An empty photo, which decoding fills in.
    public init() {}

    /// A photo with these values; `flickrNumber` comes from `flickrID` (0 if not a number).
    public init(flickrID: String, title: String, subtitle: String, photoDescription: String, uploaded: Date?, downloaded: Date,
                latitude: Double?, longitude: Double?, secret: String?, server: String?, farm: Int64?, originalSecret: String?,
                originalFormat: String?, license: String? = nil, photographerID: Int64?, placeID: Int64?, regionID: Int64?) {
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
        self.license = license
        self.photographerID = photographerID
        self.placeID = placeID
        self.regionID = regionID
    }
}

/// A photo in a user's Recents, with when that user last viewed it.
public struct RecentRecord: TableRecord, Equatable {
    /// The row's primary key; nil until the entry is inserted.
    public var id: Int64?
    /// When the user last viewed the photo; each user's Recents keep the 20 newest.
    public var lastViewed = Date(timeIntervalSince1970: 0)
    /// The photo viewed.
    public var photoID: Int64?
    /// Whose Recents.
    public var userID: Int64?

    /// The Recent table: one row per user and photo at most, indexed by user and view time.
    public static let table = RecordTable<RecentRecord>("Recent", columns: [
        .column("lastViewed", \.lastViewed),
        .toOne("photo", "Photo", \.photoID, inverse: "recents"),
        .toOne("user", "User", \.userID, inverse: "recents"),
    ], indexes: [TableIndex("recent_user_photo", columns: ["user_id", "photo_id"], unique: true),
                 TableIndex("recent_user_last_viewed", columns: ["user_id", "lastViewed"])])

    /// An empty Recents entry, which decoding fills in.
    public init() {}

    /// A Recents entry with these values.
    public init(id: Int64? = nil, lastViewed: Date, photoID: Int64?, userID: Int64?) {
        self.id = id
        self.lastViewed = lastViewed
        self.photoID = photoID
        self.userID = userID
    }
}

/// A photo in a user's Favorites, at its place in that user's order.
public struct FavoriteRecord: TableRecord, Equatable {
    /// The row's primary key; nil until the favorite is inserted.
    public var id: Int64?
    /// The favorite's position in its user's order, from 0 at the top.
    public var displayOrder: Int64 = 0
    /// The favorite photo.
    public var photoID: Int64?
    /// Whose Favorites.
    public var userID: Int64?

    /// The Favorite table: one row per user and photo at most, indexed by user and order.
    public static let table = RecordTable<FavoriteRecord>("Favorite", columns: [
        .column("displayOrder", \.displayOrder),
        .toOne("photo", "Photo", \.photoID, inverse: "favorites"),
        .toOne("user", "User", \.userID, inverse: "favorites"),
    ], indexes: [TableIndex("favorite_user_photo", columns: ["user_id", "photo_id"], unique: true),
                 TableIndex("favorite_user_order", columns: ["user_id", "displayOrder"])])

    /// An empty favorite, which decoding fills in.
    public init() {}

    /// A favorite with these values.
    public init(id: Int64? = nil, displayOrder: Int64, photoID: Int64?, userID: Int64?) {
        self.id = id
        self.displayOrder = displayOrder
        self.photoID = photoID
        self.userID = userID
    }
}

/// Someone with their own Recents and Favorites: the CLI's `local`, or an HTTP client's
/// user, who proves it with a token of which only the SHA-256 is kept.
public struct UserRecord: TableRecord, Equatable {
    /// The row's primary key; nil until the user is inserted.
    public var id: Int64?
    /// The user's name: lowercase ASCII letters, digits, `.`, `_` and `-`.
    public var name = ""
    /// Hex SHA-256 of the user's API token; nil while the user has none.
    public var tokenHash: String?
    /// When the user was added.
    public var createdAt = Date(timeIntervalSince1970: 0)

    /// The User table; removing a user removes their Recents and Favorites.
    public static let table = RecordTable<UserRecord>("User", columns: [
        .column("name", \.name, unique: true),
        .column("tokenHash", \.tokenHash, unique: true),
        .column("createdAt", \.createdAt),
    ], relationships: [
        .toMany("recents", "Recent", inverse: "user", deleteRule: .cascade),
        .toMany("favorites", "Favorite", inverse: "user", deleteRule: .cascade),
    ])

    /// An empty user, which decoding fills in.
    public init() {}

    /// A user with these values.
    public init(id: Int64? = nil, name: String, tokenHash: String?, createdAt: Date) {
        self.id = id
        self.name = name
        self.tokenHash = tokenHash
        self.createdAt = createdAt
    }
}
