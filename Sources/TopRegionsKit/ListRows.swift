import Flickr
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// The rows of the gallery's lists as clients receive them: the CLI's `--json`, `watch
// --json`, and the HTTP API all encode these types (one type per row), with
// `GalleryJSON.encoder`. Optional fields are written as null, never left out.

/// A row of the top regions.
public struct RegionRow: Sendable, Equatable, Encodable {
    /// The position in the list, from 1.
    public var rank: Int
    /// The region's Flickr place id: its identity.
    public var id: String
    /// The region's name as Flickr gave it.
    public var name: String
    /// The region's country; null when Flickr named none.
    public var country: String?
    /// Distinct photographers with photos in the region: its popularity.
    public var photographers: Int
    /// Photos stored in the region.
    public var photos: Int

    /// A row with these values.
    public init(rank: Int, id: String, name: String, country: String?, photographers: Int, photos: Int) {
        self.rank = rank
        self.id = id
        self.name = name
        self.country = country
        self.photographers = photographers
        self.photos = photos
    }

    enum CodingKeys: String, CodingKey { case rank, id, name, country, photographers, photos }

    /// Writes every field, `country` as null when there is none.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rank, forKey: .rank)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(country, forKey: .country)
        try container.encode(photographers, forKey: .photographers)
        try container.encode(photos, forKey: .photos)
    }
}

/// A photo in a list (a region's photos).
public struct PhotoRow: Sendable, Equatable, Encodable {
    /// The Flickr id.
    public var id: String
    /// The assignment's title: the Flickr title, else the description, else "Unknown".
    public var title: String
    /// The description, empty when it became the title.
    public var subtitle: String
    /// The photographer's name; null when the photo has no photographer stored.
    public var photographer: String?
    /// The photographer's photostream on Flickr; null when no photographer is stored.
    public var photographerURL: URL?
    /// The photo's own page on Flickr; null when no photographer is stored.
    public var pageURL: URL?
    /// The photo's licence: id (null when unknown), name, and the licence's page.
    public var license: FlickrLicense
    /// When the photo was uploaded to Flickr; null when Flickr did not say.
    public var uploaded: Date?
    /// The square (75×75) image's URL; null when Flickr sent too little to build it.
    public var thumbnailURL: URL?
    /// The large image's URL; null when Flickr sent too little to build it.
    public var imageURL: URL?

    /// A row with these values.
    public init(id: String, title: String, subtitle: String, photographer: String?, photographerURL: URL? = nil, pageURL: URL? = nil,
                license: FlickrLicense = FlickrLicense(id: nil), uploaded: Date?, thumbnailURL: URL?, imageURL: URL?) {
        self.id = id
        self.title = title
        self.subtitle = subtitle
        self.photographer = photographer
        self.photographerURL = photographerURL
        self.pageURL = pageURL
        self.license = license
        self.uploaded = uploaded
        self.thumbnailURL = thumbnailURL
        self.imageURL = imageURL
    }

    enum CodingKeys: String, CodingKey { case id, title, subtitle, photographer, photographerURL, pageURL, license, uploaded, thumbnailURL, imageURL }

    /// Writes every field, the URLs as strings and absent values as null.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(subtitle, forKey: .subtitle)
        try container.encode(photographer, forKey: .photographer)
        try container.encode(photographerURL?.absoluteString, forKey: .photographerURL)
        try container.encode(pageURL?.absoluteString, forKey: .pageURL)
        try container.encode(license, forKey: .license)
        try container.encode(uploaded, forKey: .uploaded)
        try container.encode(thumbnailURL?.absoluteString, forKey: .thumbnailURL)
        try container.encode(imageURL?.absoluteString, forKey: .imageURL)
    }
}

/// One photo in full: a list row with where it was taken, and (after a view) when it was
/// viewed.
public struct PhotoDetail: Sendable, Equatable, Encodable {
    /// The photo's list row; its fields sit at the top level of the JSON.
    public var photo: PhotoRow
    /// The name of the photo's region; null until its place is resolved.
    public var region: String?
    /// The region's Flickr place id.
    public var regionID: String?
    /// The country of the photo's region; null when unknown.
    public var country: String?
    /// Where the photo was taken, in degrees; null when Flickr gave no coordinate.
    public var latitude: Double?
    /// Where the photo was taken, in degrees; null when Flickr gave no coordinate.
    public var longitude: Double?
    /// When the photo was viewed, for the answer to a view.
    public var lastViewed: Date?

    /// A detail with these values.
    public init(photo: PhotoRow, region: String?, regionID: String?, country: String?, latitude: Double?, longitude: Double?,
                lastViewed: Date? = nil) {
        self.photo = photo
        self.region = region
        self.regionID = regionID
        self.country = country
        self.latitude = latitude
        self.longitude = longitude
        self.lastViewed = lastViewed
    }

    enum CodingKeys: String, CodingKey { case region, regionID, country, latitude, longitude, lastViewed }

    /// Writes the photo row's fields and these beside them; `lastViewed` only when set.
    public func encode(to encoder: Encoder) throws {
        try photo.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(region, forKey: .region)
        try container.encode(regionID, forKey: .regionID)
        try container.encode(country, forKey: .country)
        // JSON has no infinities: a coordinate that is not finite is none.
        try container.encode(latitude.flatMap { $0.isFinite ? $0 : nil }, forKey: .latitude)
        try container.encode(longitude.flatMap { $0.isFinite ? $0 : nil }, forKey: .longitude)
        if let lastViewed { try container.encode(lastViewed, forKey: .lastViewed) }
    }
}

/// A photo in Recents.
public struct RecentRow: Sendable, Equatable, Encodable {
    /// The Flickr id.
    public var id: String
    /// The assignment's title: the Flickr title, else the description, else "Unknown".
    public var title: String
    /// The description, empty when it became the title.
    public var subtitle: String
    /// When the photo was last viewed.
    public var lastViewed: Date

    /// A row with these values.
    public init(id: String, title: String, subtitle: String, lastViewed: Date) {
        self.id = id
        self.title = title
        self.subtitle = subtitle
        self.lastViewed = lastViewed
    }
}

/// A photo in Favorites, at its position.
public struct FavoriteRow: Sendable, Equatable, Encodable {
    /// The position in the user's order, from 1.
    public var position: Int
    /// The Flickr id.
    public var id: String
    /// The assignment's title: the Flickr title, else the description, else "Unknown".
    public var title: String

    /// A row with these values.
    public init(position: Int, id: String, title: String) {
        self.position = position
        self.id = id
        self.title = title
    }
}

/// How the gallery's rows and reports are written as JSON: keys sorted, dates in ISO 8601
/// (UTC, seconds), slashes unescaped, nothing left out (an absent value is null).
public enum GalleryJSON {
    /// A new encoder with these settings.
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(iso8601(date))
        }
        return encoder
    }

    /// One value as JSON text.
    public static func text(_ value: some Encodable) throws -> String {
        String(decoding: try bytes(value), as: UTF8.self)
    }

    /// One value as JSON's UTF-8 bytes, with characters that act on a terminal or a
    /// JavaScript parser written as `\u` escapes (they parse back to the same text).
    public static func bytes(_ value: some Encodable) throws -> [UInt8] {
        escapingInvisibles(Array(try encoder.encode(value)))
    }

    /// JSON text with DEL, the C1 controls, the line and paragraph separators (which end a
    /// JavaScript string), the bidirectional controls, the invisible characters
    /// (`UnsafeCharacters`, and the zero-width joiner and non-joiner) written as `\u`
    /// escapes. JSON allows them raw inside strings, and they can only be inside strings,
    /// so escaping them changes no value; it keeps a `--json` line that reaches a terminal,
    /// a log or a script tag from being read as something else.
    public static func escapingInvisibles(_ json: [UInt8]) -> [UInt8] {
        guard json.contains(where: { $0 == 0x7F || $0 >= 0xC2 }) else { return json }
        var result: [UInt8] = []
        result.reserveCapacity(json.count + 32)
        func escape(_ unit: UInt32) { result += Array(String(format: "\\u%04x", unit).utf8) }
        var index = 0
        while index < json.count {
            let byte = json[index]
            let length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
            guard byte == 0x7F || byte >= 0xC2, index + length <= json.count else {
                result.append(byte)
                index += 1
                continue
            }
            let scalar = length == 1 ? UInt32(byte) : decodedScalar(json[index..<(index + length)])
            if UnsafeCharacters.contains(scalar) || scalar == 0x200C || scalar == 0x200D {
                if scalar > 0xFFFF {
                    escape(0xD800 + ((scalar - 0x10000) >> 10))
                    escape(0xDC00 + ((scalar - 0x10000) & 0x3FF))
                } else {
                    escape(scalar)
                }
            } else {
                result += json[index..<(index + length)]
            }
            index += length
        }
        return result
    }

    /// The scalar of one UTF-8 sequence (the encoder's, so well-formed).
    private static func decodedScalar(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        guard let first = bytes.first else { return 0 }
        let leadBits: UInt32 = bytes.count == 2 ? UInt32(first & 0x1F) : bytes.count == 3 ? UInt32(first & 0x0F) : UInt32(first & 0x07)
        return bytes.dropFirst().reduce(leadBits) { ($0 << 6) | UInt32($1 & 0x3F) }
    }

    /// A date as the JSON writes it: `2026-12-03T17:25:37Z`, whole seconds (truncated), UTC.
    /// Formatted by hand from `gmtime_r`: an `ISO8601DateFormatter` costs tens of
    /// microseconds to make, once per date, which a server logging every request feels.
    /// Dates before 1583 (where the formatter's calendar is Julian) and after 9999 go
    /// through the formatter.
    public static func iso8601(_ date: Date) -> String {
        // Truncated as the formatter truncates: to milliseconds since 1970 first (ICU's
        // clock), then to seconds; far from 1970 the two roundings of a Double differ.
        let milliseconds = ((date.timeIntervalSinceReferenceDate + Date.timeIntervalBetween1970AndReferenceDate) * 1000).rounded(.down)
        let seconds = (milliseconds / 1000).rounded(.down)
        guard seconds.isFinite, seconds >= -12_212_553_600, seconds < 253_402_300_800 else {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.string(from: date)
        }
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = Int(parts.tm_year) + 1900
        let yearText = year >= 0 && year < 1000 ? String(repeating: "0", count: 4 - "\(year)".count) + "\(year)" : "\(year)"
        return "\(yearText)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
