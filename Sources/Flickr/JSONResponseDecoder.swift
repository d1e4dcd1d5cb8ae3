import Foundation

/// Decodes Flickr's JSON responses (`format=json`, with or without `nojsoncallback=1`).
enum JSONResponseDecoder {
    static func photoPage(_ data: Data, page: Int?) throws -> PhotoPage {
        let root = try object(data, method: FlickrMethod.photosSearch, page: page)
        guard let photos = root["photos"]?.objectMembers else {
            throw FlickrError(.malformedResponse, method: FlickrMethod.photosSearch, page: page, "the response has no photos")
        }
        guard let list = photos["photo"]?.arrayElements else {
            throw FlickrError(.malformedResponse, method: FlickrMethod.photosSearch, page: page, "photos has no photo list")
        }
        let records = list.enumerated().map { index, element -> Result<FlickrPhoto, SkippedRecord> in
            guard let fields = element.objectMembers else {
                return .failure(SkippedRecord(page: page, index: index, reason: "photo \(index + 1) is not an object"))
            }
            return FlickrFields.photo(fields, description: content(fields["description"]), index: index, page: page)
        }
        return try FlickrFields.page(photos, records: records, requestedPage: page)
    }

    static func placeInfo(_ data: Data) throws -> PlaceInfo {
        let method = FlickrMethod.placeInfo
        let root = try object(data, method: method, page: nil)
        guard let place = root["place"]?.objectMembers else {
            throw FlickrError(.malformedResponse, method: method, "the response has no place")
        }
        guard let placeID = LooseValue.nonEmptyString(place["place_id"]) else {
            throw FlickrError(.malformedResponse, method: method, "the place has no place_id")
        }
        func level(_ key: String) -> PlaceLevel? {
            FlickrFields.level(place[key]?.objectMembers, name: content(place[key]))
        }
        return PlaceInfo(placeID: placeID, woeID: LooseValue.nonEmptyString(place["woeid"]),
                         placeType: LooseValue.nonEmptyString(place["place_type"]), placeTypeID: LooseValue.int(place["place_type_id"]),
                         name: LooseValue.nonEmptyString(place["name"]), locality: level("locality"), county: level("county"),
                         region: level("region"), country: level("country"))
    }

    /// The top-level object, after removing a `jsonFlickrApi(...)` wrapper; a `stat="fail"`
    /// envelope becomes the API error it carries.
    static func object(_ data: Data, method: String, page: Int?) throws -> JSONObject {
        let body = unwrapCallback(data)
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(body)
        } catch {
            let detail = body.isEmpty ? "empty body" : "\(body.count) bytes, truncated or garbled: \(error)"
            throw FlickrError(.malformedResponse, method: method, page: page, "the response is not valid JSON (\(detail))")
        }
        guard let root = parsed.objectMembers else {
            throw FlickrError(.malformedResponse, method: method, page: page, "the response is not a JSON object")
        }
        switch LooseValue.string(root["stat"]) {
        case "ok": return root
        case "fail": throw FlickrFields.failure(code: root["code"], message: root["message"], method: method, page: page)
        default: throw FlickrError(.malformedResponse, method: method, page: page, "the response has no stat")
        }
    }

    /// Text of a `{"_content": …}` object, or of a plain string.
    static func content(_ value: JSONValue?) -> String? {
        if let object = value?.objectMembers { return LooseValue.string(object["_content"]) }
        return LooseValue.string(value)
    }

    private static let callbackPrefix = Array("jsonFlickrApi(".utf8)

    /// The JSON inside a `jsonFlickrApi(…)` wrapper (trailing `;` and whitespace allowed),
    /// else `data` itself. A slice of `data`, not a copy: a page is read byte by byte only
    /// once, by the parser.
    static func unwrapCallback(_ data: Data) -> Data {
        let range: Range<Int>? = data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            while start < bytes.count, JSONParser.isWhitespace(bytes[start]) { start += 1 }
            guard bytes.count - start >= callbackPrefix.count,
                  bytes[start..<start + callbackPrefix.count].elementsEqual(callbackPrefix) else { return nil }
            var end = bytes.count
            while end > start, JSONParser.isWhitespace(bytes[end - 1]) || bytes[end - 1] == UInt8(ascii: ";") { end -= 1 }
            guard end > start + callbackPrefix.count, bytes[end - 1] == UInt8(ascii: ")") else { return nil }
            return (start + callbackPrefix.count)..<(end - 1)
        }
        guard let range else { return data }
        return data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)]
    }
}
