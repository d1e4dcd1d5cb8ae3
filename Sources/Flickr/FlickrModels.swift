import Foundation

/// One photo of a `flickr.photos.search` response. Only `id` and `owner` are required;
/// every extra Flickr may leave out is optional.
public struct FlickrPhoto: Sendable, Equatable {
    public var id: String
    public var owner: String
    public var ownerName: String?
    public var secret: String?
    public var server: String?
    public var farm: Int?
    /// As Flickr sent it; empty when the photo has no title.
    public var title: String
    /// As Flickr sent it; empty when the photo has no description.
    public var description: String
    public var dateUpload: Date?
    public var latitude: Double?
    public var longitude: Double?
    public var accuracy: Int?
    /// The place the photo was taken in; nil when Flickr knows none (missing or empty).
    public var placeID: String?
    public var woeID: String?
    public var originalSecret: String?
    public var originalFormat: String?

    public init(id: String, owner: String, ownerName: String? = nil, secret: String? = nil, server: String? = nil,
                farm: Int? = nil, title: String = "", description: String = "", dateUpload: Date? = nil,
                latitude: Double? = nil, longitude: Double? = nil, accuracy: Int? = nil, placeID: String? = nil,
                woeID: String? = nil, originalSecret: String? = nil, originalFormat: String? = nil) {
        self.id = id
        self.owner = owner
        self.ownerName = ownerName
        self.secret = secret
        self.server = server
        self.farm = farm
        self.title = title
        self.description = description
        self.dateUpload = dateUpload
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.placeID = placeID
        self.woeID = woeID
        self.originalSecret = originalSecret
        self.originalFormat = originalFormat
    }
}

/// One page of `flickr.photos.search`.
public struct PhotoPage: Sendable, Equatable {
    public var page: Int
    public var pages: Int
    public var perPage: Int
    public var total: Int
    public var photos: [FlickrPhoto]
    /// Records of the page that could not be photos (no id, no owner), left out.
    public var skipped: [SkippedRecord]

    public init(page: Int, pages: Int, perPage: Int, total: Int, photos: [FlickrPhoto], skipped: [SkippedRecord] = []) {
        self.page = page
        self.pages = pages
        self.perPage = perPage
        self.total = total
        self.photos = photos
        self.skipped = skipped
    }
}

/// A record of a response that was left out, and why.
public struct SkippedRecord: Error, Sendable, Equatable, CustomStringConvertible {
    /// The page it was on, for `flickr.photos.search`.
    public var page: Int?
    /// Its position on the page, from 0.
    public var index: Int
    public var reason: String

    public init(page: Int?, index: Int, reason: String) {
        self.page = page
        self.index = index
        self.reason = reason
    }

    public var description: String { page.map { "page \($0): \(reason)" } ?? reason }
}

/// One level of a place's hierarchy (its locality, county, region or country).
public struct PlaceLevel: Sendable, Equatable {
    public var placeID: String
    public var woeID: String?
    /// The level's name as Flickr gave it (`_content`): bare ("Quebec") or qualified
    /// ("British Columbia, Canada").
    public var name: String

    public init(placeID: String, woeID: String? = nil, name: String) {
        self.placeID = placeID
        self.woeID = woeID
        self.name = name
    }
}

/// The answer of `flickr.places.getInfo`.
public struct PlaceInfo: Sendable, Equatable {
    public var placeID: String
    public var woeID: String?
    public var placeType: String?
    public var placeTypeID: Int?
    public var name: String?
    public var locality: PlaceLevel?
    public var county: PlaceLevel?
    public var region: PlaceLevel?
    public var country: PlaceLevel?

    public init(placeID: String, woeID: String? = nil, placeType: String? = nil, placeTypeID: Int? = nil,
                name: String? = nil, locality: PlaceLevel? = nil, county: PlaceLevel? = nil,
                region: PlaceLevel? = nil, country: PlaceLevel? = nil) {
        self.placeID = placeID
        self.woeID = woeID
        self.placeType = placeType
        self.placeTypeID = placeTypeID
        self.name = name
        self.locality = locality
        self.county = county
        self.region = region
        self.country = country
    }

    /// The region the place lies in, as the course's `extractRegionNameFromPlaceInformation:`
    /// found it, or `.noRegion` for a place above region level (a country, a continent).
    public var regionInfo: RegionInfo {
        guard let region, !region.placeID.isEmpty, !region.name.isEmpty else { return .noRegion }
        return .region(id: region.placeID, name: region.name, country: country?.name)
    }
}

/// Where a place's region is.
public enum RegionInfo: Sendable, Equatable {
    /// The region's Flickr place id (its identity), its name as given, and its country.
    case region(id: String, name: String, country: String?)
    /// The place has no region level: photos taken there have no region.
    case noRegion
}
