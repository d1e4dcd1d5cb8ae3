import Foundation

/// Reads Flickr's loosely typed values: numbers that arrive as strings or as numbers,
/// optional fields that may be missing or empty.
enum LooseValue {
    static func string(_ value: Any?) -> String? {
        switch value {
        case let text as String: return text
        case let number as Int: return String(number)
        case let number as Int64: return String(number)
        case let number as Double:
            if let integer = Int64(exactly: number) { return String(integer) }
            return String(number)
        case let number as NSNumber: return number.stringValue
        default: return nil
        }
    }

    /// A string that is present and not empty.
    static func nonEmptyString(_ value: Any?) -> String? {
        guard let text = string(value), !text.isEmpty else { return nil }
        return text
    }

    static func int(_ value: Any?) -> Int? {
        switch value {
        case let number as Int: return number
        case let number as Double: return Int(exactly: number)
        case let number as NSNumber: return number.intValue
        case let text as String: return Int(text) ?? Int(text.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    static func double(_ value: Any?) -> Double? {
        switch value {
        case let number as Double: return number
        case let number as Int: return Double(number)
        case let number as NSNumber: return number.doubleValue
        case let text as String: return Double(text) ?? Double(text.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    /// Flickr writes "no coordinate" as 0.
    static func coordinate(_ value: Any?) -> Double? {
        guard let number = double(value), number != 0 else { return nil }
        return number
    }

    static func date(_ value: Any?) -> Date? {
        guard let seconds = double(value), seconds > 0 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}

/// Builds models from dictionaries of loosely typed fields, the common ground of the JSON
/// and XML decoders.
enum FlickrFields {
    /// A photo from its fields; `index` names it in errors.
    static func photo(_ fields: [String: Any], description: String?, index: Int, page: Int?) throws -> FlickrPhoto {
        guard let id = LooseValue.nonEmptyString(fields["id"]) else {
            throw FlickrError(.malformedResponse, method: FlickrMethod.photosSearch, page: page, "photo \(index + 1) has no id")
        }
        guard let owner = LooseValue.nonEmptyString(fields["owner"]) else {
            throw FlickrError(.malformedResponse, method: FlickrMethod.photosSearch, page: page, "photo \(id) has no owner")
        }
        return FlickrPhoto(id: id, owner: owner, ownerName: LooseValue.nonEmptyString(fields["ownername"]),
                           secret: LooseValue.nonEmptyString(fields["secret"]), server: LooseValue.nonEmptyString(fields["server"]),
                           farm: LooseValue.int(fields["farm"]), title: LooseValue.string(fields["title"]) ?? "",
                           description: description ?? "", dateUpload: LooseValue.date(fields["dateupload"]),
                           latitude: LooseValue.coordinate(fields["latitude"]), longitude: LooseValue.coordinate(fields["longitude"]),
                           accuracy: LooseValue.int(fields["accuracy"]), placeID: LooseValue.nonEmptyString(fields["place_id"]),
                           woeID: LooseValue.nonEmptyString(fields["woeid"]),
                           originalSecret: LooseValue.nonEmptyString(fields["originalsecret"]),
                           originalFormat: LooseValue.nonEmptyString(fields["originalformat"]))
    }

    static func page(_ fields: [String: Any], photos: [FlickrPhoto], requestedPage: Int?) throws -> PhotoPage {
        guard let page = LooseValue.int(fields["page"]) else {
            throw FlickrError(.malformedResponse, method: FlickrMethod.photosSearch, page: requestedPage, "photos has no page number")
        }
        return PhotoPage(page: page, pages: LooseValue.int(fields["pages"]) ?? page,
                         perPage: LooseValue.int(fields["perpage"]) ?? LooseValue.int(fields["per_page"]) ?? photos.count,
                         total: LooseValue.int(fields["total"]) ?? photos.count, photos: photos)
    }

    static func level(_ fields: [String: Any]?, name: String?) -> PlaceLevel? {
        guard let fields, let placeID = LooseValue.nonEmptyString(fields["place_id"]) else { return nil }
        return PlaceLevel(placeID: placeID, woeID: LooseValue.nonEmptyString(fields["woeid"]), name: name ?? "")
    }

    static func failure(code: Any?, message: Any?, method: String, page: Int?) -> FlickrError {
        let code = LooseValue.int(code) ?? -1
        let text = LooseValue.string(message) ?? "no message"
        return FlickrError(.api(code: code), method: method, page: page, "Flickr error \(code): \(text)")
    }
}
