import Foundation

/// The sizes of a photo's image that TopRegions uses.
public enum PhotoSize: String, Sendable, CaseIterable {
    /// 75×75 square, the thumbnail (`s`).
    case square = "s"
    /// 1024 on the longest side (`b`), the course's "large".
    case large = "b"
    /// The uploaded original (`o`), with its own secret and format.
    case original = "o"
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
        case .square, .large:
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
