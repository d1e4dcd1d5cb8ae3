import Flickr
import Foundation
import ResultsController
import Store

/// A row of the top-regions list.
public struct RegionSummary: Sendable, Equatable {
    /// The region's row id in the store.
    public var id: Int64
    /// The region's Flickr place id: its identity.
    public var placeID: String
    /// The region's name as Flickr gave it.
    public var name: String
    /// The region's country; nil when Flickr named none.
    public var country: String?
    /// Distinct photographers with photos in the region: its popularity.
    public var photographers: Int
    /// Photos stored in the region.
    public var photos: Int
}

/// A photo as the lists and the detail view show it.
public struct PhotoSummary: Sendable, Equatable {
    /// The photo's row id in the store.
    public var id: Int64
    /// The Flickr photo id: the photo's identity.
    public var flickrID: String
    /// The assignment's title: the Flickr title, else the description, else "Unknown".
    public var title: String
    /// The description, empty when it became the title.
    public var subtitle: String
    /// The photographer's name; nil when none is stored.
    public var photographer: String?
    /// The photographer's photostream on Flickr; nil when no photographer is stored.
    public var photographerURL: URL?
    /// The photo's own page on Flickr, where credit links; nil when no photographer is stored.
    public var pageURL: URL?
    /// The photo's licence (unknown for photos stored before licences were).
    public var license = FlickrLicense(id: nil)
    /// When the photo was uploaded to Flickr; nil when Flickr did not say.
    public var uploaded: Date?
    /// The square (75×75) image's URL; nil when Flickr sent too little to build it.
    public var thumbnailURL: URL?
    /// The large image's URL; nil when Flickr sent too little to build it.
    public var imageURL: URL?
    /// The name of the photo's region; nil until its place is resolved.
    public var region: String?
    /// The Flickr place id of the photo's region; nil until its place is resolved.
    public var regionPlaceID: String?
    /// The country of the photo's region; nil when unknown.
    public var country: String?
    /// Where the photo was taken, in degrees; nil when Flickr gave no coordinate.
    public var latitude: Double?
    /// Where the photo was taken, in degrees; nil when Flickr gave no coordinate.
    public var longitude: Double?
}

extension Gallery {
    /// How many regions the top-regions list shows unless asked for another number.
    public static let topRegionsLimit = 50

    // MARK: Requests (for plain fetches and results controllers alike)

    /// The regions with the most distinct photographers, then by name, then by place id;
    /// only regions with photos and a known name.
    public static func topRegionsRequest(limit: Int = Gallery.topRegionsLimit, byCountry: Bool = false) -> FetchRequest {
        var sort = [SortKey("photographerCount", ascending: false), SortKey("name", collation: .localizedStandard), SortKey("placeID")]
        if byCountry { sort.insert(SortKey("country", collation: .localizedStandard), at: 0) }
        return FetchRequest(RegionRecord.self, predicate: Key("photoCount") > 0 && Key("name") != "", sortDescriptors: sort,
                            fetchLimit: byCountry ? nil : limit)
    }

    /// The photos of a region, by title as the Finder sorts, then by Flickr id as a number;
    /// `byPhotographer`: first by photographer name, each photographer's photos together
    /// (two photographers of one name are two groups, in the order of their Flickr owner
    /// ids: the same on every store, whatever order each first met them in).
    public static func regionPhotosRequest(regionID: Int64, byPhotographer: Bool = false) -> FetchRequest {
        var sort = [SortKey("title", collation: .localizedStandard), SortKey("flickrNumber")]
        if byPhotographer {
            sort.insert(contentsOf: [SortKey("photographer.name", collation: .localizedStandard), SortKey("photographer.ownerID")], at: 0)
        }
        return FetchRequest(PhotoRecord.self, predicate: Key("region") == regionID, sortDescriptors: sort)
    }

    /// How many photos Recents keep: viewing one more drops the oldest.
    public static let recentsLimit = 20

    /// A user's Recents, most recently viewed first: those whose photo's region is known
    /// (a photo reported at a place not known yet is shown nowhere until it is).
    public static func recentsRequest(userID: Int64) -> FetchRequest {
        FetchRequest(RecentRecord.self, predicate: Key("user") == userID && Key("photo.region").isNotNull,
                     sortDescriptors: [SortKey("lastViewed", ascending: false), SortKey("id")], fetchLimit: recentsLimit)
    }

    /// A user's Favorites in their order: those whose photo's region is known (the others
    /// keep their place, and come back to it when their region is).
    public static func favoritesRequest(userID: Int64) -> FetchRequest {
        FetchRequest(FavoriteRecord.self, predicate: Key("user") == userID && Key("photo.region").isNotNull,
                     sortDescriptors: [SortKey("displayOrder"), SortKey("id")])
    }

    /// All of a user's Favorites in their order, shown or not (for renumbering).
    static func allFavoritesRequest(userID: Int64) -> FetchRequest {
        FetchRequest(FavoriteRecord.self, predicate: Key("user") == userID, sortDescriptors: [SortKey("displayOrder"), SortKey("id")])
    }

}

// Plain fetches: the same on every store a gallery can be read from.
extension GalleryReading {

    /// The top regions, read once (see `topRegionsRequest`).
    public func topRegions(limit: Int = Gallery.topRegionsLimit) throws -> [RegionSummary] {
        try readableStore.read { try $0.fetch(Gallery.topRegionsRequest(limit: limit), as: RegionRecord.self) }.map(RegionSummary.init)
    }

    /// The photos of the region with row id `regionID`, in list order; URLs built on `imageBase`.
    public func photos(inRegion regionID: Int64, imageBase: URL = FlickrConfiguration.defaultImageBase) throws -> [PhotoSummary] {
        let records = try readableStore.read { try $0.fetch(Gallery.regionPhotosRequest(regionID: regionID), as: PhotoRecord.self) }
        return try summaries(records, imageBase: imageBase)
    }

    /// The photo with this Flickr id, or nil when the store does not hold it or does not know
    /// its region yet (such a photo counts as not downloaded).
    public func photo(flickrID: String, imageBase: URL = FlickrConfiguration.defaultImageBase) throws -> PhotoSummary? {
        guard let record = try readableStore.read({ try $0.fetch(PhotoRecord.self, where: Gallery.shownPhoto(flickrID: flickrID)).first }) else { return nil }
        return try summaries([record], imageBase: imageBase).first
    }

    /// Summaries for records, with their photographers and regions read in one query each.
    public func summaries(_ records: [PhotoRecord], imageBase: URL = FlickrConfiguration.defaultImageBase) throws -> [PhotoSummary] {
        try readableStore.read { try Gallery.summaries(records, in: $0, imageBase: imageBase) }
    }
}

extension Gallery {
    /// Summaries for records, with their photographers and regions read in `context`, one
    /// query each.
    static func summaries(_ records: [PhotoRecord], in context: ReadContext, imageBase: URL) throws -> [PhotoSummary] {
        let photographers = try context.fetch(PhotographerRecord.self, ids: Set(records.compactMap(\.photographerID)))
        let regions = try context.fetch(RegionRecord.self, ids: Set(records.compactMap(\.regionID)))
        let photographerByID = Dictionary(photographers.compactMap { record in record.id.map { ($0, record) } }, uniquingKeysWith: { first, _ in first })
        let regionByID = Dictionary(regions.compactMap { record in record.id.map { ($0, record) } }, uniquingKeysWith: { first, _ in first })
        return records.map { record in
            let flickr = FlickrPhoto(id: record.flickrID, owner: "", secret: record.secret, server: record.server,
                                     originalSecret: record.originalSecret, originalFormat: record.originalFormat)
            let region = record.regionID.flatMap { regionByID[$0] }
            let photographer = record.photographerID.flatMap { photographerByID[$0] }
            return PhotoSummary(id: record.id ?? 0, flickrID: record.flickrID, title: record.title, subtitle: record.subtitle,
                                photographer: photographer?.name,
                                photographerURL: FlickrPage.photographer(ownerID: photographer?.ownerID, pathAlias: photographer?.pathAlias),
                                pageURL: FlickrPage.photo(id: record.flickrID, ownerID: photographer?.ownerID, pathAlias: photographer?.pathAlias),
                                license: FlickrLicense(id: record.license), uploaded: record.uploaded,
                                thumbnailURL: flickr.imageURL(.square, base: imageBase), imageURL: flickr.imageURL(.large, base: imageBase),
                                region: region?.name, regionPlaceID: region?.placeID, country: region?.country,
                                latitude: record.latitude, longitude: record.longitude)
        }
    }

}

extension Gallery {
    /// What a region's row shows (`RegionRow`).
    static let shownRegionKeys: Set<String> = ["placeID", "name", "country", "photographerCount", "photoCount"]
    /// What a photo's row shows (`PhotoRow`): its text, photographer, upload date, URLs.
    static let shownPhotoKeys: Set<String> = ["flickrID", "title", "subtitle", "photographer", "photographer.name", "uploaded",
                                              "secret", "server", "farm", "originalSecret", "originalFormat", "license",
                                              "photographer.pathAlias"]
}

extension GalleryObserving {
    // MARK: Results controllers

    /// A results controller over the top regions; `byCountry` sections them by country
    /// (and lifts the limit). Delegate calls come on `delivery` when given.
    public func topRegionsController(limit: Int = Gallery.topRegionsLimit, byCountry: Bool = false,
                                     delivery: DispatchQueue? = nil) throws -> ResultsController<RegionRecord> {
        try ResultsController(store: observableStore, request: Gallery.topRegionsRequest(limit: limit, byCountry: byCountry),
                              sectionKeyPath: byCountry ? "country" : nil, displayedKeys: Gallery.shownRegionKeys, deliveryQueue: delivery)
    }

    /// A results controller over a region's photos, sectioned by photographer name when
    /// `byPhotographer`. Delegate calls come on `delivery` when given.
    public func regionPhotosController(regionID: Int64, byPhotographer: Bool = false,
                                       delivery: DispatchQueue? = nil) throws -> ResultsController<PhotoRecord> {
        try ResultsController(store: observableStore, request: Gallery.regionPhotosRequest(regionID: regionID, byPhotographer: byPhotographer),
                              sectionKeyPath: byPhotographer ? "photographer.name" : nil, displayedKeys: Gallery.shownPhotoKeys, deliveryQueue: delivery)
    }

    /// A results controller over Recents; delegate calls come on `delivery` when given.
    /// `user`'s Recents; a photo's new title or subtitle is an update of its row.
    public func recentsController(for user: GalleryUser, delivery: DispatchQueue? = nil) throws -> ResultsController<RecentRecord> {
        try ResultsController(store: observableStore, request: Gallery.recentsRequest(userID: user.id),
                              displayedKeys: ["lastViewed", "photo", "photo.flickrID", "photo.title", "photo.subtitle"], deliveryQueue: delivery)
    }

    /// `user`'s Favorites; a change of `displayOrder` alone is a move, never an update.
    public func favoritesController(for user: GalleryUser, delivery: DispatchQueue? = nil) throws -> ResultsController<FavoriteRecord> {
        try ResultsController(store: observableStore, request: Gallery.favoritesRequest(userID: user.id),
                              displayedKeys: ["photo", "photo.flickrID", "photo.title"], deliveryQueue: delivery)
    }
}

extension RegionSummary {
    init(_ record: RegionRecord) {
        self.init(id: record.id ?? 0, placeID: record.placeID, name: record.name, country: record.country,
                  photographers: Int(record.photographerCount), photos: Int(record.photoCount))
    }
}
