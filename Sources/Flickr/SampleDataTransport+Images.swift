import Foundation
import ImageCodec

// SampleData's images, at every size Flickr serves, for every photo it holds. A committed
// file under `images/` is served as it is; the other sizes of a photo with a committed
// `b` file are that file resized; every other photo gets its `SampleDataPicture`, drawn
// and encoded on request (nothing generated is committed: SampleData stays small).
extension SampleDataTransport {
    /// The image Flickr would serve as `name` (`{id}_{secret}_{size}.jpg`): 404 for a photo
    /// SampleData does not hold, a secret that is not the photo's, or the original.
    func image(named name: String) throws -> TransportResponse {
        guard Self.isSafeFileName(name) else { return Self.notFound }
        let folder = directory.appendingPathComponent("images")
        if let data = try? Data(contentsOf: folder.appendingPathComponent(name)) { return Self.jpeg(data) }
        guard let (id, secret, size) = Self.imageName(name), size != .original else { return Self.notFound }
        let index = try SampleDataPhotoIndex.of(directory, pages: manifest.pages, format: manifest.formats.contains("json") ? .json : .xml)
        guard let photo = index.photo(id), photo.secret == secret else { return Self.notFound }
        let largeFile = folder.appendingPathComponent("\(id)_\(secret)_\(PhotoSize.large.rawValue).jpg")
        do {
            if let large = try? Data(contentsOf: largeFile) {
                return Self.jpeg(try Self.resized(large, to: size))
            }
            return Self.jpeg(try SampleDataPicture(photoID: id, regionID: index.region(of: photo.placeID)).jpeg(size))
        } catch {
            throw FlickrError(.notInSampleData, "SampleData cannot make the \(size.rawValue) image of photo \(id): \(error)")
        }
    }

    /// A committed large image in another size: a square is its centre, the others are it
    /// fitted in the size (never enlarged, so a size as large as the file or larger is the
    /// file itself).
    static func resized(_ large: Data, to size: PhotoSize) throws(ImageCodecError) -> Data {
        let image = try JPEG.decode(large)
        let pixels = size.pixelSize(ofWidth: image.width, height: image.height)
        if pixels == (image.width, image.height) && !size.isSquare { return large }
        let resized = size.isSquare
            ? try image.centreSquare(side: pixels.width)
            : try image.resampled(toWidth: pixels.width, toHeight: pixels.height)
        return try JPEG.encode(resized, quality: SampleDataPicture.quality)
    }

    /// The id, secret and size in `{id}_{secret}_{size}.jpg`; nil for any other name.
    static func imageName(_ name: String) -> (id: String, secret: String, size: PhotoSize)? {
        guard name.hasSuffix(".jpg") else { return nil }
        let parts = name.dropLast(4).split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, FlickrPhoto.isValidID(String(parts[0])), !parts[1].isEmpty,
              let size = PhotoSize(rawValue: String(parts[2])) else { return nil }
        return (String(parts[0]), String(parts[1]), size)
    }

    private static func jpeg(_ data: Data) -> TransportResponse {
        TransportResponse(status: 200, headers: ["content-type": "image/jpeg"], body: data)
    }

    private static var notFound: TransportResponse {
        TransportResponse(status: 404, headers: ["content-type": "text/plain"], body: Data("not found".utf8))
    }
}
