import Foundation

/// Flickr's method names.
public enum FlickrMethod {
    /// The search the sync pages through.
    public static let photosSearch = "flickr.photos.search"
    /// The lookup of a place's hierarchy.
    public static let placeInfo = "flickr.places.getInfo"
}

/// A response format Flickr can answer in.
public enum ResponseFormat: String, Sendable, CaseIterable {
    /// `format=json&nojsoncallback=1`
    case json
    /// `format=rest`
    case xml
}

/// A call to the REST API, typed.
public enum FlickrRequest: Sendable, Equatable {
    /// Recent geotagged photos, as the course's `URLforRecentGeoreferencedPhotos` asked:
    /// licenses 1, 2, 4, 7, `has_geo`, and the extras the app needs.
    case recentGeotaggedPhotos(page: Int, perPage: Int, minUploadDate: Date?)
    /// The hierarchy of a place: its locality, region, country.
    case placeInfo(placeID: String)

    /// The largest `per_page` Flickr accepts.
    public static let maximumPerPage = 500
    /// The extras asked of every photo: what the gallery stores and shows.
    public static let photoExtras = "original_format,description,geo,date_upload,owner_name,license,path_alias"

    /// The Flickr method the request calls.
    public var method: String {
        switch self {
        case .recentGeotaggedPhotos: return FlickrMethod.photosSearch
        case .placeInfo: return FlickrMethod.placeInfo
        }
    }

    /// The page asked for; nil for calls that are not paged.
    public var page: Int? {
        if case .recentGeotaggedPhotos(let page, _, _) = self { return page }
        return nil
    }

    /// Throws when an argument is out of Flickr's range.
    public func validate() throws {
        switch self {
        case .recentGeotaggedPhotos(let page, let perPage, _):
            guard page >= 1 else {
                throw FlickrError(.invalidRequest, method: method, "page must be 1 or more, not \(page)")
            }
            guard (1...Self.maximumPerPage).contains(perPage) else {
                throw FlickrError(.invalidRequest, method: method, "per_page must be between 1 and \(Self.maximumPerPage), not \(perPage)")
            }
        case .placeInfo(let placeID):
            guard !placeID.isEmpty else { throw FlickrError(.invalidRequest, method: method, "the place id is empty") }
        }
    }

    /// The method's arguments (without the key and the format).
    public var arguments: [URLQueryItem] {
        switch self {
        case .recentGeotaggedPhotos(let page, let perPage, let minUploadDate):
            var items = [URLQueryItem(name: "license", value: "1,2,4,7"), URLQueryItem(name: "has_geo", value: "1"),
                         URLQueryItem(name: "extras", value: Self.photoExtras),
                         URLQueryItem(name: "page", value: String(page)), URLQueryItem(name: "per_page", value: String(perPage))]
            // A date that is no number of seconds (a damaged store's) limits nothing.
            if let seconds = minUploadDate?.timeIntervalSince1970, seconds.isFinite, seconds > 0, seconds < 1e15 {
                items.append(URLQueryItem(name: "min_upload_date", value: String(Int64(seconds))))
            }
            return items
        case .placeInfo(let placeID):
            return [URLQueryItem(name: "place_id", value: placeID)]
        }
    }

    /// The full URL: endpoint, method, arguments, key and format.
    public func url(endpoint: URL, apiKey: String?, format: ResponseFormat) throws -> URL {
        guard var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false) else {
            throw FlickrError(.invalidRequest, method: method, "the endpoint \(endpoint) is not a valid URL")
        }
        var items = components.queryItems ?? []
        items.append(URLQueryItem(name: "method", value: method))
        if let apiKey { items.append(URLQueryItem(name: "api_key", value: apiKey)) }
        items += arguments
        switch format {
        case .json:
            items.append(URLQueryItem(name: "format", value: "json"))
            items.append(URLQueryItem(name: "nojsoncallback", value: "1"))
        case .xml:
            items.append(URLQueryItem(name: "format", value: "rest"))
        }
        components.queryItems = items
        // URLComponents leaves "+" and "," alone; "+" must be encoded or servers read a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.url else {
            throw FlickrError(.invalidRequest, method: method, "cannot build a URL for \(method)")
        }
        return url
    }
}
