import Foundation

/// Turns a response body into models, in either format. Tolerant where Flickr is loose
/// (numbers as strings, missing extras, empty `place_id`, the `jsonFlickrApi(...)` wrapper);
/// strict where it matters: a body that is not JSON/XML, is truncated, or lacks
/// `photos`/`place` is a `malformedResponse` that names the method and the page.
public enum FlickrResponseDecoder {
    /// A `flickr.photos.search` page; `page` names the page in errors. Throws `FlickrError`.
    public static func photoPage(_ data: Data, format: ResponseFormat, page: Int? = nil) throws -> PhotoPage {
        switch format {
        case .json: return try JSONResponseDecoder.photoPage(data, page: page)
        case .xml: return try XMLResponseDecoder.photoPage(data, page: page)
        }
    }

    /// A `flickr.places.getInfo` answer. Throws `FlickrError`.
    public static func placeInfo(_ data: Data, format: ResponseFormat) throws -> PlaceInfo {
        switch format {
        case .json: return try JSONResponseDecoder.placeInfo(data)
        case .xml: return try XMLResponseDecoder.placeInfo(data)
        }
    }
}
