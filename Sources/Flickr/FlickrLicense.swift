import Foundation

/// A Flickr licence: its id, its name as Flickr gives it, and the licence's own page.
/// The table is Flickr's (`flickr.photos.licenses.getInfo`), kept here so that crediting a
/// photo costs no call; an id it does not hold is named as unknown, never guessed.
public struct FlickrLicense: Sendable, Equatable, Encodable {
    /// Flickr's licence id ("4"); nil when the photo's licence is not known.
    public var id: String?
    /// The licence's name ("CC BY 2.0"), or "Licence unknown".
    public var name: String
    /// The licence's text; nil for "All Rights Reserved" and for an unknown licence.
    public var url: URL?

    /// The licence with Flickr's id `id`: from the table, else an unknown one that keeps the id.
    public init(id: String?) {
        guard let id, let known = Self.table[id] else {
            self.id = id
            self.name = id == nil ? Self.unknownName : "Licence \(id ?? "") (not known to this version)"
            self.url = nil
            return
        }
        self = known
    }

    private init(_ id: String, _ name: String, _ url: String?) {
        self.id = id
        self.name = name
        self.url = url.flatMap(URL.init(string:))
    }

    /// What a photo whose licence was never stored (synced before licences were) shows.
    public static let unknownName = "Licence unknown"

    /// Flickr's licences by id.
    public static let table: [String: FlickrLicense] = Dictionary(uniqueKeysWithValues: [
        FlickrLicense("0", "All Rights Reserved", nil),
        FlickrLicense("1", "CC BY-NC-SA 2.0", "https://creativecommons.org/licenses/by-nc-sa/2.0/"),
        FlickrLicense("2", "CC BY-NC 2.0", "https://creativecommons.org/licenses/by-nc/2.0/"),
        FlickrLicense("3", "CC BY-NC-ND 2.0", "https://creativecommons.org/licenses/by-nc-nd/2.0/"),
        FlickrLicense("4", "CC BY 2.0", "https://creativecommons.org/licenses/by/2.0/"),
        FlickrLicense("5", "CC BY-SA 2.0", "https://creativecommons.org/licenses/by-sa/2.0/"),
        FlickrLicense("6", "CC BY-ND 2.0", "https://creativecommons.org/licenses/by-nd/2.0/"),
        FlickrLicense("7", "No known copyright restrictions", "https://www.flickr.com/commons/usage/"),
        FlickrLicense("8", "United States Government Work", "https://www.usa.gov/government-copyright"),
        FlickrLicense("9", "CC0 1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
        FlickrLicense("10", "Public Domain Mark 1.0", "https://creativecommons.org/publicdomain/mark/1.0/"),
    ].map { ($0.id ?? "", $0) })

    enum CodingKeys: String, CodingKey { case id, name, url }

    /// Writes every field, absent ones as null.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(url?.absoluteString, forKey: .url)
    }
}

/// Where a photo and its owner live on Flickr: the links credit needs.
public enum FlickrPage {
    /// The owner's photostream, `https://www.flickr.com/photos/{alias or owner}/`; nil when
    /// there is no owner.
    public static func photographer(ownerID: String?, pathAlias: String?) -> URL? {
        guard let piece = ownerPiece(ownerID: ownerID, pathAlias: pathAlias) else { return nil }
        return URL(string: "https://www.flickr.com/photos/\(piece)/")
    }

    /// The photo's own page, `https://www.flickr.com/photos/{alias or owner}/{id}/`.
    public static func photo(id: String, ownerID: String?, pathAlias: String?) -> URL? {
        guard FlickrPhoto.isValidID(id), let piece = ownerPiece(ownerID: ownerID, pathAlias: pathAlias) else { return nil }
        return URL(string: "https://www.flickr.com/photos/\(piece)/\(id)/")
    }

    /// The alias when there is one, else the owner id, escaped as one path segment.
    private static func ownerPiece(ownerID: String?, pathAlias: String?) -> String? {
        let chosen = (pathAlias?.isEmpty == false ? pathAlias : nil) ?? ownerID
        guard let chosen, !chosen.isEmpty else { return nil }
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/;?#%")
        return chosen.addingPercentEncoding(withAllowedCharacters: allowed)
    }
}
