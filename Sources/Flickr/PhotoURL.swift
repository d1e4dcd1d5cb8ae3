import Foundation

/// The sizes of a photo's image, by Flickr's URL suffix: the squares are crops, the others
/// are the whole photo with its longest side at most that many pixels.
public enum PhotoSize: String, Sendable, CaseIterable {
    /// 75×75 square, the thumbnail (`s`).
    case square = "s"
    /// 150×150 square (`q`), for grids.
    case largeSquare = "q"
    /// 320 on the longest side (`n`).
    case small320 = "n"
    /// 640 on the longest side (`z`).
    case medium640 = "z"
    /// 800 on the longest side (`c`).
    case medium800 = "c"
    /// 1024 on the longest side (`b`), the course's "large".
    case large = "b"
    /// The uploaded original (`o`), with its own secret and format.
    case original = "o"

    /// The sizes a gallery shows, smallest first: every size but the original.
    public static let gallerySizes: [PhotoSize] = [.square, .largeSquare, .small320, .medium640, .medium800, .large]

    /// Whether it is a square crop (`s`, `q`).
    public var isSquare: Bool { self == .square || self == .largeSquare }

    /// The side of a square, or the longest side of the others; nil for the original.
    public var longestSide: Int? {
        switch self {
        case .square: return 75
        case .largeSquare: return 150
        case .small320: return 320
        case .medium640: return 640
        case .medium800: return 800
        case .large: return 1024
        case .original: return nil
        }
    }

    /// The pixels of this size of a photo whose largest image is `width × height`: a
    /// square is always its side; the others keep the aspect, and are never larger than
    /// the photo (Flickr does not enlarge).
    public func pixelSize(ofWidth width: Int, height: Int) -> (width: Int, height: Int) {
        guard let side = longestSide, width > 0, height > 0 else { return (width, height) }
        if isSquare { return (side, side) }
        if max(width, height) <= side { return (width, height) }
        if width >= height { return (side, max(1, Int((Double(height) * Double(side) / Double(width)).rounded()))) }
        return (max(1, Int((Double(width) * Double(side) / Double(height)).rounded())), side)
    }
}

extension FlickrPhoto {
    /// The URL of this photo's image in `size`, under `base` (default
    /// `https://live.staticflickr.com`): `{base}/{server}/{id}_{secret}_{size}.jpg`, or for
    /// the original `{id}_{originalsecret}_o.{originalformat}`. Nil when a piece is
    /// missing: a broken URL is never built.
    public func imageURL(_ size: PhotoSize, base: URL = FlickrConfiguration.defaultImageBase) -> URL? {
        guard let server = nonEmpty(server), Self.isSafePathPiece(id), Self.isSafePathPiece(server) else { return nil }
        let file: String
        switch size {
        case .square, .largeSquare, .small320, .medium640, .medium800, .large:
            guard let secret = nonEmpty(secret), Self.isSafePathPiece(secret) else { return nil }
            file = "\(id)_\(secret)_\(size.rawValue).jpg"
        case .original:
            guard let secret = nonEmpty(originalSecret), let format = nonEmpty(originalFormat),
                  Self.isSafePathPiece(secret), Self.isSafePathPiece(format) else { return nil }
            file = "\(id)_\(secret)_o.\(format)"
        }
        return base.appendingPathComponent(server).appendingPathComponent(file)
    }

    /// The image URL, or an error that names the missing piece.
    public func requireImageURL(_ size: PhotoSize, base: URL = FlickrConfiguration.defaultImageBase) throws -> URL {
        guard let url = imageURL(size, base: base) else {
            let missing: String
            if nonEmpty(server) == nil { missing = "server" }
            else if size == .original { missing = nonEmpty(originalSecret) == nil ? "originalsecret" : "originalformat" }
            else { missing = "secret" }
            throw FlickrError(.missingURLPiece, "photo \(id) has no \(missing): its \(size) image URL cannot be built")
        }
        return url
    }

    private func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    /// Ids, secrets and servers are short alphanumeric tokens; anything else (a slash, a
    /// dot-dot) would let a response steer the URL elsewhere.
    static func isSafePathPiece(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 64 && value.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
    }
}
