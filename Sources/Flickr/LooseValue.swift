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
        case .numberText(let text): return text
        case .bool(let flag): return flag ? "1" : "0"
        default: return nil
        }
    }

    /// An id: text or a number, never `true` or `false` (which `string` reads as 1 and 0).
    static func identifier(_ value: JSONValue?) -> String? {
        if case .bool = value { return nil }
        return nonEmptyString(value)
    }

    /// The longest Flickr id kept (Flickr's own are under 20 characters).
    static let longestFlickrID = 128

    /// A Flickr id other than a photo's (an owner's NSID, a place id, a WOE id): printable
    /// ASCII without spaces, at most `longestFlickrID` bytes, as all of Flickr's are. Text
    /// that is not (letters of other scripts, so canonically equal forms of one id) is no
    /// id: two ids are one only when their bytes are.
    static func flickrID(_ value: JSONValue?) -> String? {
        guard let text = identifier(value), text.utf8.count <= longestFlickrID,
              text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        return text
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

    /// A finite number; text that names infinity or NaN, or overflows, is none.
    static func double(_ value: JSONValue?) -> Double? {
        let number: Double?
        switch value {
        case .number(let value): number = value
        case .integer(let value): number = Double(value)
        case .numberText(let text): number = Double(text)
        case .bool(let flag): number = flag ? 1 : 0
        case .string(let text): number = Double(text) ?? Double(text.trimmingCharacters(in: .whitespaces))
        default: number = nil
        }
        guard let number, number.isFinite else { return nil }
        return number
    }

    /// A coordinate within `limit` degrees (90 for latitude, 180 for longitude); Flickr
    /// writes "no coordinate" as 0, and anything out of range is no coordinate either.
    static func coordinate(_ value: JSONValue?, limit: Double) -> Double? {
        guard let number = double(value), number != 0, abs(number) <= limit else { return nil }
        return number
    }

    /// A Unix time up to the end of year 9999 (what ISO 8601's four-digit years can write);
    /// anything past it is no date.
    static func date(_ value: JSONValue?) -> Date? {
        guard let seconds = double(value), seconds > 0, seconds < 253_402_300_800 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// A licence id: Flickr's small decimal numbers, as a number or a string; anything else
    /// is no licence said (shown as unknown), never a guess.
    static func licenseID(_ value: JSONValue?) -> String? {
        guard let text = string(value)?.trimmingCharacters(in: .whitespaces), (1...3).contains(text.utf8.count),
              text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return String(Int(text) ?? 0)
    }

    /// An owner's URL alias: it becomes part of a link, so only what Flickr allows in one
    /// (letters, digits, `_`, `-`, at most 64) is kept; anything else is none.
    static func pathAlias(_ value: JSONValue?) -> String? {
        guard let text = string(value), (1...64).contains(text.utf8.count), text.utf8.allSatisfy({ byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }) else { return nil }
        return text
    }

    /// Text as stored and shown: a NUL cannot be kept by every consumer (C strings, some
    /// terminals), so it becomes U+FFFD rather than silently ending the text.
    static func text(_ value: JSONValue?) -> String? {
        guard let text = string(value) else { return nil }
        return text.contains("\u{0}") ? text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : text
    }
}

/// Builds models from dictionaries of loosely typed fields, the common ground of the JSON
/// and XML decoders.
enum FlickrFields {
    /// A photo from its fields, or why it was skipped (`index` names it then): a photo
    /// without an id or an owner cannot be stored, but spoils nothing else on its page.
    static func photo(_ fields: JSONObject, description: String?, index: Int, page: Int?) -> Result<FlickrPhoto, SkippedRecord> {
        guard let id = LooseValue.identifier(fields["id"]) else {
            return .failure(SkippedRecord(page: page, index: index, reason: "photo \(index + 1) has no id"))
        }
        guard FlickrPhoto.isValidID(id) else {
            return .failure(SkippedRecord(page: page, index: index, reason: "photo \(index + 1) has an id that is not a Flickr photo id (1 to 32 digits)"))
        }
        guard let owner = LooseValue.flickrID(fields["owner"]) else {
            let reason = LooseValue.nonEmptyString(fields["owner"]) == nil
                ? "photo \(id) has no owner"
                : "photo \(id) has an owner id that is not a Flickr id (printable ASCII, at most \(LooseValue.longestFlickrID) characters)"
            return .failure(SkippedRecord(page: page, index: index, reason: reason))
        }
        return .success(FlickrPhoto(id: id, owner: owner, ownerName: LooseValue.text(fields["ownername"]).flatMap { $0.isEmpty ? nil : $0 },
                           secret: LooseValue.nonEmptyString(fields["secret"]), server: LooseValue.nonEmptyString(fields["server"]),
                           farm: LooseValue.int(fields["farm"]), title: LooseValue.text(fields["title"]) ?? "",
                           description: description.map { LooseValue.text(.string($0)) ?? $0 } ?? "", dateUpload: LooseValue.date(fields["dateupload"]),
                           latitude: LooseValue.coordinate(fields["latitude"], limit: 90),
                           longitude: LooseValue.coordinate(fields["longitude"], limit: 180),
                           accuracy: LooseValue.int(fields["accuracy"]), placeID: LooseValue.flickrID(fields["place_id"]),
                           woeID: LooseValue.flickrID(fields["woeid"]),
                           originalSecret: LooseValue.nonEmptyString(fields["originalsecret"]),
                           originalFormat: LooseValue.nonEmptyString(fields["originalformat"]),
                           license: LooseValue.licenseID(fields["license"]), pathAlias: LooseValue.pathAlias(fields["pathalias"])))
    }

    /// The photos of a page, and the records skipped among them.
    static func photos(_ records: [Result<FlickrPhoto, SkippedRecord>]) -> (photos: [FlickrPhoto], skipped: [SkippedRecord]) {
        var photos: [FlickrPhoto] = [], skipped: [SkippedRecord] = []
        photos.reserveCapacity(records.count)
        for record in records {
            switch record {
            case .success(let photo): photos.append(photo)
            case .failure(let reason): skipped.append(reason)
            }
        }
        return (photos, skipped)
    }

    static func page(_ fields: JSONObject, records: [Result<FlickrPhoto, SkippedRecord>], requestedPage: Int?) throws -> PhotoPage {
        let (photos, skipped) = Self.photos(records)
        guard let page = LooseValue.int(fields["page"]) else {
            throw FlickrError(.malformedResponse, method: FlickrMethod.photosSearch, page: requestedPage, "photos has no page number")
        }
        return PhotoPage(page: page, pages: LooseValue.int(fields["pages"]) ?? page,
                         perPage: LooseValue.int(fields["perpage"]) ?? LooseValue.int(fields["per_page"]) ?? photos.count,
                         total: LooseValue.int(fields["total"]) ?? photos.count, photos: photos, skipped: skipped)
    }

    static func level(_ fields: JSONObject?, name: String?) -> PlaceLevel? {
        guard let fields, let placeID = LooseValue.flickrID(fields["place_id"]) else { return nil }
        return PlaceLevel(placeID: placeID, woeID: LooseValue.flickrID(fields["woeid"]),
                          name: name.map { LooseValue.text(.string($0)) ?? $0 } ?? "")
    }

    static func failure(code: JSONValue?, message: JSONValue?, method: String, page: Int?) -> FlickrError {
        let code = LooseValue.int(code) ?? -1
        let text = LooseValue.string(message) ?? "no message"
        return FlickrError(.api(code: code), method: method, page: page, "Flickr error \(code): \(text)")
    }
}
