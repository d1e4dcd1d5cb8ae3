import Foundation
import ImageCodec

/// What makes a response an image worth keeping: a declared type that is an image (or
/// none), and a whole JPEG, decoded to its last scanline. A CDN's error page served with
/// status 200 (whatever its Content-Type says), a JPEG header followed by anything else, or
/// a file cut short is refused before it is stored. Flickr serves every size as JPEG, and
/// only JPEG can be decoded here: PNG, GIF and WebP (originals may be those) are refused
/// too, by name.
enum ImageCheck {
    /// The formats an image server may send, by their first bytes.
    static func format(of bytes: Data) -> String? {
        let head = [UInt8](bytes.prefix(12))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "JPEG" }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "PNG" }
        if head.starts(with: Array("GIF87a".utf8)) || head.starts(with: Array("GIF89a".utf8)) { return "GIF" }
        if head.count == 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) { return "WebP" }
        return nil
    }

    /// Throws `notAnImage`, naming the URL, unless the response holds a whole JPEG.
    static func validate(_ response: TransportResponse, url: String) throws {
        if let declared = response.headers["content-type"]?.lowercased().split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces), !declared.isEmpty,
           !declared.hasPrefix("image/"), declared != "application/octet-stream" {
            throw FlickrError(.notAnImage, "\(url) is not an image: the server says it is \(Self.printable(declared)); nothing stored")
        }
        guard let format = format(of: response.body) else {
            throw FlickrError(.notAnImage, "\(url) is not an image: \(response.body.count) bytes that are not JPEG, PNG, GIF or WebP; nothing stored")
        }
        guard format == "JPEG" else {
            throw FlickrError(.notAnImage, "\(url) is a \(format) image: only JPEG images, as Flickr serves its sizes, are kept; nothing stored")
        }
        guard isComplete(response.body) else {
            throw FlickrError(.notAnImage, "\(url) is a JPEG cut short: \(response.body.count) bytes without the format's end; nothing stored")
        }
        do {
            try JPEG.check(response.body)
        } catch {
            throw FlickrError(.notAnImage, "\(url) is not an image: \(error); nothing stored")
        }
    }

    /// Whether a JPEG's bytes reach its end marker (EOI): a server that closes early, or says
    /// a cut body's length, would otherwise leave a half image. Up to 4 KiB of zero bytes of
    /// padding after the end are allowed; anything else after it is not.
    static func isComplete(_ bytes: Data) -> Bool {
        let data = [UInt8](bytes)
        var end = data.count
        while end > 0, data[end - 1] == 0, data.count - end < 4096 { end -= 1 }
        return data[..<end].suffix(2).elementsEqual([0xFF, 0xD9])
    }

    /// A server's text as a message may quote it: printable ASCII, at most 60 characters.
    static func printable(_ text: String) -> String {
        let visible = text.unicodeScalars.prefix(60).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" }
        return String(visible)
    }
}
