import CDigest
import Flickr
import Foundation
import HTTPServer
import TopRegionsKit

// A photo's thumbnail and its image in any of the gallery's sizes: the bytes, fetched on
// demand and kept as the CLI keeps them (the thumbnail in the store, the other sizes in
// the bounded file cache), with an entity tag that caches revalidate on every use: a photo
// replaced on Flickr (a new secret) has new bytes under the same URL.
extension GalleryAPI {
    /// `/thumbnail` (no arguments), or `/image?size=` (default `b`, the large image).
    func image(flickrID: String, thumbnail: Bool, _ request: HTTPRequest) throws -> HTTPReply {
        let size: PhotoSize
        if thumbnail {
            _ = try QueryArguments(request, allowed: [])
            size = .square
        } else {
            let query = try QueryArguments(request, allowed: ["size"])
            let letter = try query.choice("size", default: PhotoSize.large.rawValue, among: PhotoSize.gallerySizes.map(\.rawValue))
            size = PhotoSize(rawValue: letter) ?? .large
        }
        // Answered from memory when this image was read since the store's last commit (a
        // commit may have replaced the photo): no store read, file read or hashing.
        let key = "\(flickrID)/\(thumbnail ? "thumbnail" : size.rawValue)"
        let (kept, marker) = cache.image(key)
        if let kept { return .now(imageResponse(kept.bytes, tag: kept.tag, request)) }
        let gallery = gallery
        let configuration = configuration
        return .later { [self] in
            do {
                let data = thumbnail
                    ? try await gallery.thumbnail(flickrID: flickrID, from: configuration.imageSource)
                    : try await gallery.image(flickrID: flickrID, size: size, from: configuration.imageSource,
                                              cacheDirectory: configuration.imageCacheDirectory)
                let bytes = Array(data)
                let tag = "\"\(Self.digest(bytes).prefix(32))\""
                cache.keepImage(key, bytes: bytes, tag: tag, madeAfter: marker)
                return imageResponse(bytes, tag: tag, request)
            } catch {
                return errorResponse(APIError.from(error), for: request)
            }
        }
    }

    private func imageResponse(_ bytes: [UInt8], tag: String, _ request: HTTPRequest) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("ETag", tag), ("Cache-Control", "\(cacheScope), no-cache")]
        // Under --private an image was sent to a token's holder: no shared cache may keep it.
        if configuration.isPrivate { headers.append(("Vary", "Authorization")) }
        headers += corsHeaders(request)
        if let match = request.header("If-None-Match"), Self.matches(match, tag) {
            // The bytes are not sent with a 304; they give its Content-Length the 200's value, the
            // only one RFC 9110 §8.6 allows (libmicrohttpd would otherwise write 0).
            return HTTPResponse(status: 304, headers: headers, body: .bytes(bytes))
        }
        headers += [("Content-Type", Self.mediaType(of: bytes)), ("X-Content-Type-Options", "nosniff")]
        return HTTPResponse(status: 200, headers: headers, body: .bytes(bytes))  // libmicrohttpd sends no body for HEAD, with the GET length
    }

    private var cacheScope: String { configuration.isPrivate ? "private" : "public" }

    /// Whether an `If-None-Match` list names `tag` (weak comparison, as RFC 9110 asks for it).
    static func matches(_ header: String, _ tag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let trimmed = candidate.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || trimmed == tag || trimmed == "W/" + tag
        }
    }

    /// The image's type from its first bytes (what was stored is what the source sent).
    static func mediaType(of bytes: [UInt8]) -> String {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if bytes.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        return "application/octet-stream"
    }

    /// Hex SHA-256; a cheaper fold of the bytes when libcrypto is missing (a tag only needs to
    /// change when the bytes do).
    static func digest(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        if tr_sha256(bytes, bytes.count, &digest) == 0 { return digest.map { String(format: "%02x", $0) }.joined() }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(format: "%016llx%016llx", hash, UInt64(bytes.count))
    }
}
