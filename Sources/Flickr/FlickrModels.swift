import Foundation

/// One photo of a `flickr.photos.search` response. Only `id` and `owner` are required;
/// every extra Flickr may leave out is optional.
public struct FlickrPhoto: Sendable, Equatable {
    /// Whether `text` can be a Flickr photo id: a decimal number of 1 to 32 digits (longer
    /// than any integer type, kept as text). The one rule for what sync stores and what
    /// the CLI and the HTTP API accept, so every stored photo can be asked for.
    public static func isValidID(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count) && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The Flickr photo id (digits, as a string): the photo's identity.
    public var id: String
    /// The owner's Flickr id (NSID, e.g. "12345678@N00").
    public var owner: String
    /// The owner's name (`ownername`); nil when missing or empty.
    public var ownerName: String?
    /// The secret in the photo's square and large image URLs; nil when missing.
    public var secret: String?
    /// The image server in every image URL of the photo; nil when missing.
    public var server: String?
    /// The farm number Flickr sent; the image URLs built here do not use it.
    public var farm: Int?
    /// As Flickr sent it; empty when the photo has no title.
    public var title: String
    /// As Flickr sent it; empty when the photo has no description.
    public var description: String
    /// When the photo was uploaded (`dateupload`, Unix seconds); nil when missing.
    public var dateUpload: Date?
    /// Degrees north; nil when missing, 0 (Flickr's "none") or out of range.
    public var latitude: Double?
    /// Degrees east; nil when missing, 0 (Flickr's "none") or out of range.
    public var longitude: Double?
    /// Flickr's accuracy of the coordinate, 1 (world) to 16 (street); nil when missing.
    public var accuracy: Int?
    /// The place the photo was taken in; nil when Flickr knows none (missing or empty).
    public var placeID: String?
    /// The Where On Earth id of the place the photo was taken in; nil when missing.
    public var woeID: String?
    /// The secret in the original image's URL; nil when the original is not public.
    public var originalSecret: String?
    /// The original image's file extension ("jpg", "png"); nil when not public.
    public var originalFormat: String?
    /// The photo's licence id (`license`, e.g. "4" for CC BY 2.0); nil when Flickr did not say.
    public var license: String?
    /// The owner's URL alias (`pathalias`), which their Flickr pages use instead of the
    /// owner id; nil when they have none.
    public var pathAlias: String?

    /// A photo with these values.
    public init(id: String, owner: String, ownerName: String? = nil, secret: String? = nil, server: String? = nil,
                farm: Int? = nil, title: String = "", description: String = "", dateUpload: Date? = nil,
                latitude: Double? = nil, longitude: Double? = nil, accuracy: Int? = nil, placeID: String? = nil,
                woeID: String? = nil, originalSecret: String? = nil, originalFormat: String? = nil, license: String? = nil,
                pathAlias: String? = nil) {
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
        self.license = license
        self.pathAlias = pathAlias
    }
}

/// One page of `flickr.photos.search`.
public struct PhotoPage: Sendable, Equatable {
    /// The page's number, from 1.
    public var page: Int
    /// How many pages the search has at this page size.
    public var pages: Int
    /// Photos per page as Flickr paged them.
    public var perPage: Int
    /// Photos the whole search matches.
    public var total: Int
    /// The page's photos, in Flickr's order (newest upload first for the sync's search).
    public var photos: [FlickrPhoto]
    /// Records of the page that could not be photos (no id, no owner), left out.
    public var skipped: [SkippedRecord]

    /// A page with these values.
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
    /// Why the record was left out, in words.
    public var reason: String

    /// A skipped record with these values.
    public init(page: Int?, index: Int, reason: String) {
        self.page = page
        self.index = index
        self.reason = reason
    }

    /// The reason, after its page when there is one.
    public var description: String { page.map { "page \($0): \(reason)" } ?? reason }
}

/// One level of a place's hierarchy (its locality, county, region or country).
public struct PlaceLevel: Sendable, Equatable {
    /// The level's Flickr place id.
    public var placeID: String
    /// The level's Where On Earth id; nil when missing.
    public var woeID: String?
    /// The level's name as Flickr gave it (`_content`): bare ("Quebec") or qualified
    /// ("British Columbia, Canada").
    public var name: String

    /// A level with these values.
    public init(placeID: String, woeID: String? = nil, name: String) {
        self.placeID = placeID
        self.woeID = woeID
        self.name = name
    }
}

/// The answer of `flickr.places.getInfo`.
public struct PlaceInfo: Sendable, Equatable {
    /// The Flickr place id asked about.
    public var placeID: String
    /// The place's Where On Earth id; nil when missing.
    public var woeID: String?
    /// The place's type as Flickr names it ("locality", "region", "country"…); nil when missing.
    public var placeType: String?
    /// Flickr's number for the place type; nil when missing.
    public var placeTypeID: Int?
    /// The place's full name as Flickr gave it; nil when missing.
    public var name: String?
    /// The locality (town or city) the place lies in, or is; nil when none.
    public var locality: PlaceLevel?
    /// The county the place lies in, or is; nil when none.
    public var county: PlaceLevel?
    /// The region the place lies in, or is (what the gallery groups photos by); nil when none.
    public var region: PlaceLevel?
    /// The country the place lies in, or is; nil when none.
    public var country: PlaceLevel?

    /// A place answer with these values.
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
