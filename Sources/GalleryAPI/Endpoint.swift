import Flickr
/// The API's endpoints, as paths match them (see docs/openapi.yaml). A path with an id that
/// cannot be one (a photo id is 1 to 32 digits, a region's a Flickr place id) matches
/// nothing: no id reaches the store or the file system unchecked.
enum Endpoint: Equatable {
    case regions, regionsChanges, regionPhotos(String), regionPhotosChanges(String)
    case photo(String), thumbnail(String), image(String), view(String)
    case recents, recentsChanges
    case favorites, favorite(String), favoritesMove, favoritesChanges
    case status, sync, me, openAPIDocument, index, search

    static func match(_ path: String) -> Endpoint? {
        if path == "/api" || path == "/api/" { return .index }
        guard path.hasPrefix("/api/") else { return nil }
        let parts = path.dropFirst(5).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 1:
            switch parts[0] {
            case "regions": return .regions
            case "recents": return .recents
            case "favorites": return .favorites
            case "status": return .status
            case "sync": return .sync
            case "me": return .me
            case "openapi.yaml": return .openAPIDocument
            case "search": return .search
            default: return nil
            }
        case 2:
            switch (parts[0], parts[1]) {
            case ("regions", "changes"): return .regionsChanges
            case ("recents", "changes"): return .recentsChanges
            case ("favorites", "changes"): return .favoritesChanges
            case ("favorites", "move"): return .favoritesMove
            case ("favorites", let id) where isPhotoID(id): return .favorite(id)
            case ("photos", let id) where isPhotoID(id): return .photo(id)
            default: return nil
            }
        case 3:
            switch (parts[0], parts[2]) {
            case ("regions", "photos") where isPlaceID(parts[1]): return .regionPhotos(parts[1])
            case ("photos", "thumbnail") where isPhotoID(parts[1]): return .thumbnail(parts[1])
            case ("photos", "image") where isPhotoID(parts[1]): return .image(parts[1])
            case ("photos", "view") where isPhotoID(parts[1]): return .view(parts[1])
            default: return nil
            }
        case 4:
            guard parts[0] == "regions", parts[2] == "photos", parts[3] == "changes", isPlaceID(parts[1]) else { return nil }
            return .regionPhotosChanges(parts[1])
        default:
            return nil
        }
    }

    /// The methods the endpoint answers (HEAD wherever GET is).
    var methods: [String] {
        switch self {
        case .view, .favoritesMove, .sync: return ["POST"]
        case .favorites: return ["GET", "HEAD", "POST", "DELETE"]
        case .favorite: return ["DELETE"]
        default: return ["GET", "HEAD"]
        }
    }

    /// Whether it reads or writes one user's own lists (a token is needed).
    var isPerUser: Bool {
        switch self {
        case .view, .recents, .recentsChanges, .favorites, .favorite, .favoritesMove, .favoritesChanges, .me: return true
        default: return false
        }
    }

    /// Flickr photo ids are decimal numbers (the rule sync stores by).
    static func isPhotoID(_ text: String) -> Bool {
        FlickrPhoto.isValidID(text)
    }

    /// Flickr place ids: letters, digits, `.`, `_`, `-` and `@` (as in `7.sWXjpWU7.ZfBZ4`).
    static func isPlaceID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || [UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "@")].contains(byte)
        }
    }
}
