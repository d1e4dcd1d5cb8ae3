import CImageCodec
import Foundation

/// JPEG files through libjpeg-turbo: decoded whole (so that damage anywhere is found),
/// encoded at a quality. libjpeg's errors come back as `ImageCodecError`s; none ends the
/// process.
public enum JPEG {
    /// What a whole decode found.
    public struct Info: Sendable, Equatable {
        public var width: Int
        public var height: Int
        /// Colour components in the file: 1 grey, 3 colour, 4 CMYK.
        public var components: Int
    }

    /// The most pixels decoded by default: 64 megapixels, far above Flickr's 2048-pixel
    /// sizes, far below what a few crafted bytes can claim.
    public static let defaultMaximumPixels = 64_000_000

    /// Decodes every scanline and drops the pixels: proof that `data` is a whole JPEG.
    /// Throws `damaged` for anything else (another format, damaged data, a file cut short),
    /// `tooLarge` past `maximumPixels`.
    @discardableResult
    public static func check(_ data: Data, maximumPixels: Int = defaultMaximumPixels) throws(ImageCodecError) -> Info {
        var image = tr_image()
        try decode(data, keepPixels: false, maximumPixels: maximumPixels, into: &image)
        return Info(width: Int(image.width), height: Int(image.height), components: Int(image.components))
    }

    /// The pixels of a JPEG, as RGB (grey is widened; CMYK has no RGB here and is refused).
    public static func decode(_ data: Data, maximumPixels: Int = defaultMaximumPixels) throws(ImageCodecError) -> RGBImage {
        var image = tr_image()
        try decode(data, keepPixels: true, maximumPixels: maximumPixels, into: &image)
        defer { tr_image_free(image.pixels) }
        let count = Int(image.width) * Int(image.height) * 3
        guard let pixels = image.pixels else { throw ImageCodecError(.noMemory, "libjpeg gave no pixels") }
        return try RGBImage(width: Int(image.width), height: Int(image.height), pixels: Array(UnsafeBufferPointer(start: pixels, count: count)))
    }

    /// The image as a baseline JPEG at `quality` (1…100).
    public static func encode(_ image: RGBImage, quality: Int = 85) throws(ImageCodecError) -> Data {
        guard (1...100).contains(quality) else { throw ImageCodecError(.invalidArgument, "a JPEG quality is from 1 to 100, not \(quality)") }
        var output: UnsafeMutablePointer<UInt8>?
        var count: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            tr_jpeg_encode(pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(quality), &output, &count, &message, message.count)
        }
        defer { tr_image_free(output) }
        guard status == Int32(TR_IMAGE_OK), let output else {
            throw ImageCodecError(kind(of: status), "cannot encode a \(image.width)×\(image.height) JPEG: \(text(message))")
        }
        return Data(bytes: output, count: Int(count))
    }

    private static func decode(_ data: Data, keepPixels: Bool, maximumPixels: Int, into image: inout tr_image) throws(ImageCodecError) {
        var message = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { bytes in
            tr_jpeg_decode(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, keepPixels ? 1 : 0, UInt(max(0, maximumPixels)),
                           &image, &message, message.count)
        }
        guard status == Int32(TR_IMAGE_OK) else {
            let kind = kind(of: status)
            throw ImageCodecError(kind, kind == .damaged ? "not a whole JPEG: \(text(message))" : text(message))
        }
    }

    private static func kind(of status: Int32) -> ImageCodecError.Kind {
        switch status {
        case Int32(TR_IMAGE_TOO_LARGE): return .tooLarge
        case Int32(TR_IMAGE_NO_MEMORY): return .noMemory
        case Int32(TR_IMAGE_INVALID_ARGUMENT): return .invalidArgument
        default: return .damaged
        }
    }

    /// libjpeg's message, which is ASCII, made safe to print (a damaged file's bytes can be quoted in it).
    private static func text(_ message: [CChar]) -> String {
        let bytes = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes.map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
