import Foundation

/// Writes photo pages back in Flickr's shapes, for the SampleData transport's re-paged
/// answers.
enum SampleDataEncoder {
    static func page(_ page: PhotoPage, format: ResponseFormat) -> Data {
        switch format {
        case .json: return json(page)
        case .xml: return Data(xml(page).utf8)
        }
    }

    private static func fields(_ photo: FlickrPhoto) -> [(String, String)] {
        var fields: [(String, String)] = [("id", photo.id), ("owner", photo.owner)]
        let optional: [(String, String?)] = [
            ("ownername", photo.ownerName), ("secret", photo.secret), ("server", photo.server), ("farm", photo.farm.map(String.init)),
            ("title", photo.title), ("dateupload", photo.dateUpload.map { String(Int64($0.timeIntervalSince1970)) }),
            ("latitude", photo.latitude.map { String($0) } ?? "0"), ("longitude", photo.longitude.map { String($0) } ?? "0"),
            ("accuracy", photo.accuracy.map(String.init)), ("place_id", photo.placeID ?? ""), ("woeid", photo.woeID),
            ("originalsecret", photo.originalSecret), ("originalformat", photo.originalFormat), ("license", photo.license),
            ("pathalias", photo.pathAlias),
        ]
        for (name, value) in optional { if let value { fields.append((name, value)) } }
        return fields
    }

    private static func json(_ page: PhotoPage) -> Data {
        let photos: [[String: Any]] = page.photos.map { photo in
            var object: [String: Any] = Dictionary(fields(photo), uniquingKeysWith: { first, _ in first })
            object["description"] = ["_content": photo.description]
            return object
        }
        let root: [String: Any] = ["photos": ["page": page.page, "pages": page.pages, "perpage": page.perPage,
                                              "total": String(page.total), "photo": photos], "stat": "ok"]
        return (try? JSONSerialization.data(withJSONObject: root)) ?? Data()
    }

    private static func xml(_ page: PhotoPage) -> String {
        var lines = ["<?xml version=\"1.0\" encoding=\"utf-8\" ?>", "<rsp stat=\"ok\">",
                     "<photos page=\"\(page.page)\" pages=\"\(page.pages)\" perpage=\"\(page.perPage)\" total=\"\(page.total)\">"]
        for photo in page.photos {
            let attributes = fields(photo).map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: " ")
            lines.append("\t<photo \(attributes)>")
            lines.append("\t\t<description>\(escape(photo.description))</description>")
            lines.append("\t</photo>")
        }
        lines += ["</photos>", "</rsp>", ""]
        return lines.joined(separator: "\n")
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
