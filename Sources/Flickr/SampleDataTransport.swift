import Foundation

/// Answers Flickr requests from the bundled SampleData (see `SampleData/generate.py`), so
/// the product runs with no network and no key. It serves the same URLs as Flickr:
/// `photos.search` pages (re-paged when `per_page` differs from the files', filtered by
/// `min_upload_date`), `places.getInfo` (an unknown place is Flickr's error 2), and every
/// photo's images at every size under the image base (`SampleDataTransport+Images.swift`).
public struct SampleDataTransport: FlickrTransport {
    /// The SampleData folder the answers come from.
    public let directory: URL
    let manifest: Manifest

    struct Manifest: Decodable, Sendable {
        var photos: Int
        var pages: Int
        var perPage: Int
        var formats: [String]
    }

    /// Throws when `directory` holds no SampleData (no readable `manifest.json`).
    public init(directory: URL) throws {
        self.directory = directory
        let manifestURL = directory.appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: manifestURL) else {
            throw FlickrError(.notInSampleData, "no SampleData at \(directory.path): \(manifestURL.path) cannot be read")
        }
        do {
            manifest = try JSONDecoder().decode(Manifest.self, from: data)
        } catch {
            throw FlickrError(.notInSampleData, "\(manifestURL.path) is not a SampleData manifest")
        }
    }

    /// The response Flickr would give `url`, from the files; throws `responseTooLarge` past
    /// `maximumBytes`.
    public func get(_ url: URL, timeout: TimeInterval, maximumBytes: Int) async throws -> TransportResponse {
        let response = try respond(to: url)
        guard response.body.count <= maximumBytes else {
            throw FlickrError(.responseTooLarge, "the response is larger than the limit of \(maximumBytes) bytes; refused")
        }
        return response
    }

    func respond(to url: URL) throws -> TransportResponse {
        let query = Dictionary((URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map {
            ($0.name, $0.value ?? "")
        }, uniquingKeysWith: { _, last in last })
        guard let method = query["method"] else { return try image(named: url.lastPathComponent) }
        let format: ResponseFormat = query["format"] == "json" ? .json : .xml
        switch method {
        case FlickrMethod.photosSearch:
            return try search(query, format: format)
        case FlickrMethod.placeInfo:
            return try placeInfo(query["place_id"] ?? "", format: format)
        default:
            return Self.failure(code: 112, message: "Method \"\(method)\" not found", format: format)
        }
    }

    // MARK: photos.search

    private func search(_ query: [String: String], format: ResponseFormat) throws -> TransportResponse {
        let page = Int(query["page"] ?? "") ?? 1
        let perPage = min(max(Int(query["per_page"] ?? "") ?? 100, 1), 500)
        let minUpload = query["min_upload_date"].flatMap(Double.init)
        if perPage == manifest.perPage {
            guard (1...max(manifest.pages, 1)).contains(page) else { return emptyPage(page, perPage: perPage, format: format) }
            let body = try Data(contentsOf: pageFile(page, format))
            guard let minUpload else { return TransportResponse(status: 200, headers: contentType(format), body: body) }
            if format == .json, let scan = Self.uploadDates(inJSON: body), scan.count == photosOnPage(page),
               scan.oldest >= minUpload {
                return TransportResponse(status: 200, headers: contentType(format), body: body)
            }
            // Photos are stored newest first, so `min_upload_date` only cuts the tail: a page
            // is served as stored, or cut, or empty, without reading the other pages.
            let stored = try FlickrResponseDecoder.photoPage(body, format: format, page: page)
            let kept = stored.photos.filter { ($0.dateUpload?.timeIntervalSince1970 ?? 0) >= minUpload }
            if kept.count == stored.photos.count { return TransportResponse(status: 200, headers: contentType(format), body: body) }
            let pages = kept.isEmpty ? max(page - 1, 1) : page
            let total = (page - 1) * perPage + kept.count
            return TransportResponse(status: 200, headers: contentType(format),
                                     body: SampleDataEncoder.page(PhotoPage(page: page, pages: pages, perPage: perPage, total: total, photos: kept), format: format))
        }
        return try repaged(page: page, perPage: perPage, minUpload: minUpload, format: format)
    }

    /// How many photos the page's file holds: `perPage`, fewer on the last page.
    private func photosOnPage(_ page: Int) -> Int {
        max(0, min(manifest.perPage, manifest.photos - (page - 1) * manifest.perPage))
    }

    /// How many `"dateupload"` members a JSON page has and the oldest of them, found by
    /// scanning the bytes instead of decoding the page, which costs as much as the client's
    /// own decoding of it (and a sync with `min_upload_date` asks for every page). Nil when a
    /// value is not a plain number of seconds: the caller then decodes. Inside a string a
    /// quote is escaped, so only a key that itself holds `\"dateupload` could match
    /// falsely, and it would add a member: the caller compares the count with the page's
    /// photos and decodes when they differ.
    static func uploadDates(inJSON body: Data) -> (count: Int, oldest: Double)? {
        body.withUnsafeBytes { raw in
            var scanner = UploadDateScanner(bytes: raw.bindMemory(to: UInt8.self))
            return scanner.scan()
        }
    }

    private func pageFile(_ page: Int, _ format: ResponseFormat) -> URL {
        let name = String(format: "page-%04d.%@", page, format == .json ? "json" : "xml")
        return directory.appendingPathComponent(format.rawValue).appendingPathComponent(FlickrMethod.photosSearch)
            .appendingPathComponent(name)
    }

    /// All photos in file order (repeats kept, as Flickr's shifting pages repeat them),
    /// filtered and cut into the requested pages, then written back in the same format.
    private func repaged(page: Int, perPage: Int, minUpload: Double?, format: ResponseFormat) throws -> TransportResponse {
        var photos: [FlickrPhoto] = []
        for number in 1...max(manifest.pages, 1) {
            let data = try Data(contentsOf: pageFile(number, format))
            photos += try FlickrResponseDecoder.photoPage(data, format: format, page: number).photos
        }
        if let minUpload {
            photos = photos.filter { ($0.dateUpload?.timeIntervalSince1970 ?? 0) >= minUpload }
        }
        let pages = max(1, (photos.count + perPage - 1) / perPage)
        let start = min((page - 1) * perPage, photos.count)
        let slice = Array(photos[start..<min(start + perPage, photos.count)])
        let body = SampleDataEncoder.page(PhotoPage(page: page, pages: pages, perPage: perPage, total: photos.count, photos: slice),
                                          format: format)
        return TransportResponse(status: 200, headers: contentType(format), body: body)
    }

    private func emptyPage(_ page: Int, perPage: Int, format: ResponseFormat) -> TransportResponse {
        let body = SampleDataEncoder.page(PhotoPage(page: page, pages: manifest.pages, perPage: perPage, total: manifest.photos, photos: []),
                                          format: format)
        return TransportResponse(status: 200, headers: contentType(format), body: body)
    }

    // MARK: places.getInfo

    private func placeInfo(_ placeID: String, format: ResponseFormat) throws -> TransportResponse {
        guard Self.isSafeFileName(placeID) else {
            return Self.failure(code: 2, message: "Not a valid place id", format: format)
        }
        let file = directory.appendingPathComponent(format.rawValue).appendingPathComponent(FlickrMethod.placeInfo)
            .appendingPathComponent("\(placeID).\(format == .json ? "json" : "xml")")
        guard let data = try? Data(contentsOf: file) else {
            return Self.failure(code: 2, message: "Not a valid place id", format: format)
        }
        return TransportResponse(status: 200, headers: contentType(format), body: data)
    }

    /// Names that cannot leave their folder: letters, digits, `.`, `_`, `-`, not all dots.
    static func isSafeFileName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 200 && !name.allSatisfy { $0 == "." } && name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "_" || $0 == "-"
        }
    }

    private func contentType(_ format: ResponseFormat) -> [String: String] {
        ["content-type": format == .json ? "application/json" : "text/xml; charset=utf-8"]
    }

    static func failure(code: Int, message: String, format: ResponseFormat) -> TransportResponse {
        let body: String
        switch format {
        case .json:
            let object: [String: Any] = ["stat": "fail", "code": code, "message": message]
            body = (try? JSONSerialization.data(withJSONObject: object)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        case .xml:
            body = "<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n<rsp stat=\"fail\">\n\t<err code=\"\(code)\" msg=\"\(SampleDataEncoder.escape(message))\" />\n</rsp>\n"
        }
        return TransportResponse(status: 200, headers: ["content-type": format == .json ? "application/json" : "text/xml"], body: Data(body.utf8))
    }
}

/// Where the bundled SampleData is: `$TOPREGIONS_SAMPLEDATA`; an installed copy at
/// `<prefix>/share/topregions/SampleData` beside `<prefix>/bin`; or, when running from a
/// checkout (`swift run`), the `SampleData` folder of the repository.
public enum SampleDataLocation {
    /// The SampleData folder, or nil when none is found; `$TOPREGIONS_SAMPLEDATA`, when set, is
    /// taken unchecked.
    public static func find(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        var candidates: [URL] = []
        if let override = environment["TOPREGIONS_SAMPLEDATA"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        let executable = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                             ?? CommandLine.arguments[0]).deletingLastPathComponent()
        candidates.append(executable.deletingLastPathComponent().appendingPathComponent("share/topregions/SampleData"))
        var directory = executable
        for _ in 0..<6 {
            candidates.append(directory.appendingPathComponent("SampleData"))
            directory = directory.deletingLastPathComponent()
        }
        // The checkout this was built from.
        candidates.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("SampleData"))
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("manifest.json").path) }
    }
}

/// Finds each `"dateupload"` member of a JSON text and reads its value, a number of seconds
/// written as a number or a string of digits (see `SampleDataTransport.uploadDates`).
private struct UploadDateScanner {
    private static let key = Array(#""dateupload""#.utf8)
    let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// How many members there are and the oldest value; nil when there is none or a value is
    /// anything else.
    mutating func scan() -> (count: Int, oldest: Double)? {
        var count = 0
        var oldest = Double.infinity
        while findKey() {
            guard let seconds = readValue() else { return nil }
            count += 1
            oldest = min(oldest, Double(seconds))
        }
        return count > 0 ? (count, oldest) : nil
    }

    /// Moves past the next occurrence of the key; false when there is none.
    private mutating func findKey() -> Bool {
        let key = Self.key
        while index + key.count <= bytes.count {
            if bytes[index] == key[0], bytes[index..<index + key.count].elementsEqual(key) {
                index += key.count
                return true
            }
            index += 1
        }
        return false
    }

    /// `: 123` or `: "123"` after the key (at most 15 digits).
    private mutating func readValue() -> Int64? {
        skipSpaces()
        guard consume(UInt8(ascii: ":")) else { return nil }
        skipSpaces()
        let quoted = consume(UInt8(ascii: "\""))
        var seconds: Int64 = 0
        var digits = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]), digits < 15 {
            seconds = seconds * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            digits += 1
            index += 1
        }
        guard digits > 0, !quoted || consume(UInt8(ascii: "\"")) else { return nil }
        return seconds
    }

    private mutating func skipSpaces() {
        while index < bytes.count, JSONParser.isWhitespace(bytes[index]) { index += 1 }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }
}
