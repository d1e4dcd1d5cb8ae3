import Foundation

/// What makes a response an image worth keeping: a declared type that is an image (or
/// none), bytes that start as JPEG, PNG, GIF or WebP do, and a size under the cap. A CDN's
/// error page served with status 200, or megabytes of anything else, is refused before it
/// is stored.
enum ImageCheck {
    /// The formats Flickr serves, by their first bytes.
    static func format(of bytes: Data) -> String? {
        let head = [UInt8](bytes.prefix(12))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "JPEG" }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "PNG" }
        if head.starts(with: Array("GIF87a".utf8)) || head.starts(with: Array("GIF89a".utf8)) { return "GIF" }
        if head.count == 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) { return "WebP" }
        return nil
    }

    /// Throws `notAnImage`, naming the URL, unless the response holds an image.
    static func validate(_ response: TransportResponse, url: String) throws {
        if let declared = response.headers["content-type"]?.lowercased().split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces), !declared.isEmpty,
           !declared.hasPrefix("image/"), declared != "application/octet-stream" {
            throw FlickrError(.notAnImage, "\(url) is not an image: the server says it is \(Self.printable(declared)); nothing stored")
        }
        guard let format = format(of: response.body) else {
            throw FlickrError(.notAnImage, "\(url) is not an image: \(response.body.count) bytes that are not JPEG, PNG, GIF or WebP; nothing stored")
        }
        guard isComplete(response.body, format: format) else {
            throw FlickrError(.notAnImage, "\(url) is a \(format) cut short: \(response.body.count) bytes without the format's end; nothing stored")
        }
    }

    /// Whether the bytes reach their format's end: a server that closes early, or says a
    /// cut body's length, would otherwise leave a half image kept for good. Zero bytes of
    /// padding after the end are allowed.
    static func isComplete(_ bytes: Data, format: String) -> Bool {
        let data = [UInt8](bytes)
        var end = data.count
        while end > 0, data[end - 1] == 0, data.count - end < 4096 { end -= 1 }
        let body = data[..<end]
        switch format {
        case "JPEG": return body.suffix(2).elementsEqual([0xFF, 0xD9])  // EOI
        case "PNG": return body.count >= 20 && body.dropLast(4).suffix(4).elementsEqual(Array("IEND".utf8))
        case "GIF": return body.last == 0x3B  // trailer
        case "WebP":
            // RIFF's length, and a first chunk that is an image (VP8, VP8L or VP8X) with its
            // header: a RIFF header alone is no picture.
            guard data.count >= 20 else { return false }
            let declared = data[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
            let chunk = String(decoding: data[12..<16], as: UTF8.self)
            return declared >= 12 && declared + 8 <= data.count && ["VP8 ", "VP8L", "VP8X"].contains(chunk)
        default: return true
        }
    }

    /// A server's text as a message may quote it: printable ASCII, at most 60 characters.
    static func printable(_ text: String) -> String {
        let visible = text.unicodeScalars.prefix(60).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" }
        return String(visible)
    }
}
