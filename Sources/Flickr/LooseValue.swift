import Foundation

/// Reads Flickr's loosely typed values: numbers that arrive as strings or as numbers,
/// optional fields that may be missing or empty. XML attributes arrive as `.string`.
enum LooseValue {
    static func string(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text): return text
        case .integer(let number): return String(number)
        case .number(let number):
            if let integer = Int64(exactly: number) { return String(integer) }
            return String(number)
        case .bool(let flag): return flag ? "1" : "0"
        default: return nil
        }
    }

    /// A string that is present and not empty.
    static func nonEmptyString(_ value: JSONValue?) -> String? {
        guard let text = string(value), !text.isEmpty else { return nil }
        return text
    }

    static func int(_ value: JSONValue?) -> Int? {
        switch value {
        case .integer(let number): return Int(exactly: number)
        case .number(let number): return Int(exactly: number)
        case .bool(let flag): return flag ? 1 : 0
        case .string(let text): return Int(text) ?? Int(text.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    static func double(_ value: JSONValue?) -> Double? {
        switch value {
        case .number(let number): return number
        case .integer(let number): return Double(number)
        case .bool(let flag): return flag ? 1 : 0
        case .string(let text): return Double(text) ?? Double(text.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    /// Flickr writes "no coordinate" as 0.
    static func coordinate(_ value: JSONValue?) -> Double? {
        guard let number = double(value), number != 0 else { return nil }
        return number
    }

    static func date(_ value: JSONValue?) -> Date? {
        guard let seconds = double(value), seconds > 0 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}

/// Builds models from dictionaries of loosely typed fields, the common ground of the JSON
/// and XML decoders.
enum FlickrFields {
    /// A photo from its fields; `index` names it in errors.
    static func photo(_ fields: JSONObject, description: String?, index: Int, page: Int?) throws -> FlickrPhoto {
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

    static func page(_ fields: JSONObject, photos: [FlickrPhoto], requestedPage: Int?) throws -> PhotoPage {
        guard let page = LooseValue.int(fields["page"]) else {
            throw FlickrError(.malformedResponse, method: FlickrMethod.photosSearch, page: requestedPage, "photos has no page number")
        }
        return PhotoPage(page: page, pages: LooseValue.int(fields["pages"]) ?? page,
                         perPage: LooseValue.int(fields["perpage"]) ?? LooseValue.int(fields["per_page"]) ?? photos.count,
                         total: LooseValue.int(fields["total"]) ?? photos.count, photos: photos)
    }

    static func level(_ fields: JSONObject?, name: String?) -> PlaceLevel? {
        guard let fields, let placeID = LooseValue.nonEmptyString(fields["place_id"]) else { return nil }
        return PlaceLevel(placeID: placeID, woeID: LooseValue.nonEmptyString(fields["woeid"]), name: name ?? "")
    }

    static func failure(code: JSONValue?, message: JSONValue?, method: String, page: Int?) -> FlickrError {
        let code = LooseValue.int(code) ?? -1
        let text = LooseValue.string(message) ?? "no message"
        return FlickrError(.api(code: code), method: method, page: page, "Flickr error \(code): \(text)")
    }
}
