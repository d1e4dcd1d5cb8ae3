import Flickr
import Foundation
import SampleDataSupport
import Store

/// `sync.decode`: reading and decoding Flickr JSON pages alone, with the sync's decoder and
/// with the two a Swift programmer would otherwise pick. It says whether decoding is what
/// limits `sync.ingest` (it runs on its own thread, ahead of the writer).
enum DecodeBenchmarks {
    static let scenarios = [
        Scenario(name: "sync.decode", summary: "read and decode N photos' JSON pages vs JSONDecoder and JSONSerialization") { quick in
            try decoding(n: quick ? 20_000 : 100_000)
        },
    ]

    static func decoding(n: Int) throws -> [Figure] {
        try withScratchDirectory { directory in
            try SampleDataGenerator.generateJSONPages(photos: n, into: directory)
            let pages = try pageFiles(in: directory.appendingPathComponent("json/flickr.photos.search"))
            try checkAgreement(on: pages)
            flushFileSystems()
            var counts: [String: Int] = [:]
            func timed(_ name: String, _ decode: (Data) throws -> Int) throws -> Double {
                try medianSeconds(runs: 3) {
                    counts[name] = try pages.reduce(0) { total, url in total + (try decode(Data(contentsOf: url))) }
                }
            }
            let ours = try timed("ours") { try FlickrResponseDecoder.photoPage($0, format: .json).photos.count }
            let codable = try timed("JSONDecoder") { try codablePhotos($0).count }
            let untyped = try timed("JSONSerialization") { try untypedPhotos($0).count }
            // The generator plants a few awkward extras, so `decoded` can exceed n slightly.
            guard Set(counts.values).count == 1, let decoded = counts["ours"], decoded >= n else {
                throw StoreError(.invalidRequest, "decoded \(counts) photos of \(n)")
            }
            let perSecond = Double(decoded) / ours
            return [
                Figure(scenario: "sync.decode", n: decoded, seconds: ours, baseline: "JSONDecoder into Codable structs, then typed values",
                       baselineSeconds: codable, extra: ["perSecond": perSecond, "baselinePerSecond": Double(decoded) / codable]),
                Figure(scenario: "sync.decode", n: decoded, seconds: ours, baseline: "JSONSerialization, then typed values",
                       baselineSeconds: untyped, extra: ["perSecond": perSecond, "baselinePerSecond": Double(decoded) / untyped]),
            ]
        }
    }

    /// The three decoders must give the same photos, or the comparison means nothing.
    static func checkAgreement(on pages: [URL]) throws {
        for url in pages.prefix(3) {
            let data = try Data(contentsOf: url)
            let ours = try FlickrResponseDecoder.photoPage(data, format: .json).photos
            for (name, theirs) in [("JSONDecoder", try codablePhotos(data)), ("JSONSerialization", try untypedPhotos(data))] {
                let differing = zip(ours, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                if let index = differing ?? (ours.count == theirs.count ? nil : min(ours.count, theirs.count)) {
                    throw StoreError(.invalidRequest, "\(name) decodes photo \(index) of \(url.lastPathComponent) otherwise")
                }
            }
        }
    }

    static func pageFiles(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    // MARK: The baselines, each ending in the same typed values as the sync's decoder

    /// A page as `Codable` structs. Flickr (and SampleData, on purpose) sends some numbers
    /// as strings and some as numbers, so those members decode through `Loose`, the
    /// smallest custom code a `Codable` model needs for that. `farm` is always a number, so
    /// it is declared one: a failed attempt costs JSONDecoder a `DecodingError`.
    struct CodablePage: Decodable {
        struct Photos: Decodable { let page: Loose, pages: Loose, perpage: Loose, total: Loose, photo: [CodablePhoto] }
        struct Content: Decodable { let _content: String }
        struct CodablePhoto: Decodable {
            let id: Loose, owner: String, ownername: String?, secret: String?, server: Loose?, farm: Int?
            let title: String?, description: Content?, dateupload: Loose?, latitude: Loose?, longitude: Loose?
            let accuracy: Loose?, place_id: String?, woeid: Loose?, originalsecret: String?, originalformat: String?
            let license: Loose?, pathalias: String?
        }
        let photos: Photos
        let stat: String
    }

    /// A member that is a string or a number, kept as text.
    struct Loose: Decodable {
        let text: String
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self.text = text
            } else if let integer = try? container.decode(Int64.self) {
                text = String(integer)
            } else {
                text = String(try container.decode(Double.self))
            }
        }
    }

    static func codablePhotos(_ data: Data) throws -> [FlickrPhoto] {
        let page = try JSONDecoder().decode(CodablePage.self, from: data)
        return page.photos.photo.map { photo in
            FlickrPhoto(id: photo.id.text, owner: photo.owner, ownerName: nonEmpty(photo.ownername), secret: nonEmpty(photo.secret),
                        server: nonEmpty(photo.server?.text), farm: photo.farm, title: photo.title ?? "",
                        description: photo.description?._content ?? "", dateUpload: date(photo.dateupload?.text),
                        latitude: coordinate(photo.latitude?.text), longitude: coordinate(photo.longitude?.text),
                        accuracy: photo.accuracy.flatMap { Int($0.text) }, placeID: nonEmpty(photo.place_id), woeID: nonEmpty(photo.woeid?.text),
                        originalSecret: nonEmpty(photo.originalsecret), originalFormat: nonEmpty(photo.originalformat),
                        license: licenseID(photo.license?.text), pathAlias: pathAlias(photo.pathalias))
        }
    }

    /// Flickr's licence ids are small numbers; anything else is no licence said.
    static func licenseID(_ text: String?) -> String? {
        guard let text, (1...3).contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(text) else { return nil }
        return String(number)
    }

    /// A URL alias is letters, digits, `_` and `-` (it becomes part of a link).
    static func pathAlias(_ text: String?) -> String? {
        guard let text, (1...64).contains(text.utf8.count),
              text.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-") }) else { return nil }
        return text
    }

    // Flickr's conventions, as the sync's decoder applies them: an empty string is no
    // value, a coordinate of 0 is none, an upload date must be after 1970.
    static func nonEmpty(_ text: String?) -> String? { text?.isEmpty == false ? text : nil }
    static func coordinate(_ text: String?) -> Double? { text.flatMap { Double($0) }.flatMap { $0 == 0 ? nil : $0 } }
    static func date(_ text: String?) -> Date? {
        text.flatMap { Double($0) }.flatMap { $0 > 0 ? Date(timeIntervalSince1970: $0) : nil }
    }

    static func untypedPhotos(_ data: Data) throws -> [FlickrPhoto] {
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let photos = root["photos"] as? [String: Any], let list = photos["photo"] as? [[String: Any]] else {
            throw StoreError(.invalidRequest, "a page without photos")
        }
        func string(_ object: [String: Any], _ key: String) -> String? {
            switch object[key] {
            case let text as String: return text
            case let number as NSNumber: return number.stringValue
            default: return nil
            }
        }
        return try list.map { photo in
            guard let id = string(photo, "id"), let owner = string(photo, "owner") else {
                throw StoreError(.invalidRequest, "a photo without id or owner")
            }
            return FlickrPhoto(id: id, owner: owner, ownerName: nonEmpty(string(photo, "ownername")), secret: nonEmpty(string(photo, "secret")),
                               server: nonEmpty(string(photo, "server")), farm: string(photo, "farm").flatMap { Int($0) },
                               title: string(photo, "title") ?? "",
                               description: (photo["description"] as? [String: Any]).flatMap { string($0, "_content") } ?? "",
                               dateUpload: date(string(photo, "dateupload")), latitude: coordinate(string(photo, "latitude")),
                               longitude: coordinate(string(photo, "longitude")), accuracy: string(photo, "accuracy").flatMap { Int($0) },
                               placeID: nonEmpty(string(photo, "place_id")), woeID: nonEmpty(string(photo, "woeid")),
                               originalSecret: nonEmpty(string(photo, "originalsecret")),
                               originalFormat: nonEmpty(string(photo, "originalformat")),
                               license: licenseID(string(photo, "license")), pathAlias: pathAlias(string(photo, "pathalias")))
        }
    }
}
