// libFuzzer target for the Flickr response decoders (JSON and XML, photo pages and
// places), compiled together with the decoders' sources by scripts/fuzz-decoders.
//
// The first byte of an input picks the decoder; the rest is the response body. Any
// outcome but a decoded value or a FlickrError is a finding: a crash, a sanitizer report,
// another error type, or a page whose photos break the decoder's promises.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0]
    let body = Data(bytes: data + 1, count: size - 1)
    let format: ResponseFormat = selector & 1 == 0 ? .json : .xml
    do {
        if selector & 2 == 0 {
            let page = try FlickrResponseDecoder.photoPage(body, format: format, page: 1)
            for photo in page.photos {
                precondition(!photo.id.isEmpty && !photo.owner.isEmpty, "a decoded photo without id or owner")
                precondition(!photo.title.contains("\u{0}"), "a NUL kept in a title")
                if let latitude = photo.latitude { precondition(latitude.isFinite && abs(latitude) <= 90, "latitude \(latitude)") }
                if let longitude = photo.longitude { precondition(longitude.isFinite && abs(longitude) <= 180, "longitude \(longitude)") }
            }
        } else {
            _ = try FlickrResponseDecoder.placeInfo(body, format: format)
        }
    } catch is FlickrError {
        return 0
    } catch {
        preconditionFailure("the decoder threw \(type(of: error)), not a FlickrError: \(error)")
    }
    return 0
}
