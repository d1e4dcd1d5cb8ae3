@testable import Flickr
import TestSupport
import Foundation
import SampleDataSupport
import Testing

/// Responses a broken or hostile server could send, decoded: refused with a clear error or
/// read with what is wrong left out, never a crash, never a record poisoned.
@Suite("Hostile responses")
struct HostileResponseTests {
    /// A photos.search page in either format around `photos`, each a dictionary of fields.
    private func page(_ photos: [[String: String]], format: ResponseFormat) -> Data {
        switch format {
        case .json:
            let list = photos.map { fields in "{" + fields.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ", ") + "}" }
            return Data(#"{"stat": "ok", "photos": {"page": 1, "pages": 1, "perpage": 10, "total": "3", "photo": [\#(list.joined(separator: ","))]}}"#.utf8)
        case .xml:
            let list = photos.map { fields in "<photo " + fields.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: " ") + "/>" }
            return Data(#"<?xml version="1.0" encoding="utf-8" ?><rsp stat="ok"><photos page="1" pages="1" perpage="10" total="3">\#(list.joined())</photos></rsp>"#.utf8)
        }
    }

    @Test("Inputs the fuzzer once crashed the decoders with are refused as malformed")
    func fuzzerRegressions() throws {
        let directory = Repository.root.appendingPathComponent("Tests/Fuzz/regressions")
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        #expect(!files.isEmpty)
        for file in files {
            let input = try Data(contentsOf: file)
            let selector = try #require(input.first)
            let body = input.dropFirst()
            let format: ResponseFormat = selector & 1 == 0 ? .json : .xml
            #expect(throws: FlickrError.self, "\(file.lastPathComponent)") {
                if selector & 2 == 0 { _ = try FlickrResponseDecoder.photoPage(Data(body), format: format) } else {
                    _ = try FlickrResponseDecoder.placeInfo(Data(body), format: format)
                }
            }
        }
    }

    @Test("XML nested 50,000 deep is refused at 512 levels, without a crash; 500 levels are read")
    func deepXML() throws {
        let depth = 50_000
        let deep = #"<?xml version="1.0" encoding="utf-8" ?><rsp stat="ok"><photos page="1" pages="1" perpage="1" total="1">"#
            + String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth) + "</photos></rsp>"
        #expect {
            try FlickrResponseDecoder.photoPage(Data(deep.utf8), format: .xml, page: 3)
        } throws: { error in
            let error = error as? FlickrError
            return error?.kind == .malformedResponse && error?.page == 3 && "\(error!)".contains("nested deeper than 512")
        }
        let fine = #"<rsp stat="ok"><photos page="1" pages="1" perpage="1" total="1">"#
            + String(repeating: "<a>", count: 500) + String(repeating: "</a>", count: 500) + "</photos></rsp>"
        #expect(try FlickrResponseDecoder.photoPage(Data(fine.utf8), format: .xml).photos.isEmpty)
    }

    @Test("A DTD is refused in UTF-16 as in UTF-8, and so is any document not in UTF-8")
    func dtdInEveryEncoding() throws {
        let document = #"<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE rsp [<!ENTITY t "x">]><rsp stat="ok"><photos page="1"><photo id="1" owner="o" title="&t;"/></photos></rsp>"#
        for encoding in [String.Encoding.utf16, .utf16BigEndian, .utf16LittleEndian, .utf32] {
            let data = try #require(document.data(using: encoding))
            #expect {
                try FlickrResponseDecoder.photoPage(data, format: .xml)
            } throws: { error in
                (error as? FlickrError)?.kind == .malformedResponse && "\(error)".contains("not UTF-8")
            }
        }
        let declaredLatin1 = #"<?xml version="1.0" encoding="ISO-8859-1"?><rsp stat="ok"><photos page="1"/></rsp>"#
        #expect(throws: FlickrError.self) { try FlickrResponseDecoder.photoPage(Data(declaredLatin1.utf8), format: .xml) }
        let utf8DTD = #"<?xml version="1.0"?><!doctype rsp><rsp stat="ok"><photos page="1"/></rsp>"#
        #expect { try FlickrResponseDecoder.photoPage(Data(utf8DTD.utf8), format: .xml) } throws: { "\($0)".contains("DTD") }
    }

    @Test("A photo without an id or an owner is skipped and counted; the rest of its page is kept", arguments: ResponseFormat.allCases)
    func badRecordsAreSkipped(format: ResponseFormat) throws {
        let photos = [["id": "1", "owner": "a@N01", "title": "kept"], ["id": "", "owner": "b@N01"], ["id": "3", "owner": ""],
                      ["id": "4", "title": "no owner field"], ["id": "5", "owner": "e@N01", "title": "also kept"]]
        let decoded = try FlickrResponseDecoder.photoPage(page(photos, format: format), format: format, page: 2)
        #expect(decoded.photos.map(\.id) == ["1", "5"])
        #expect(decoded.skipped.map(\.index) == [1, 2, 3])
        #expect(decoded.skipped.map(\.description) == ["page 2: photo 2 has no id", "page 2: photo 3 has no owner", "page 2: photo 4 has no owner"])
    }

    @Test("Owner and place ids are Flickr's printable ASCII: canonically equal forms of one id are no ids, not one merged id", arguments: ResponseFormat.allCases)
    func idsAreASCII(format: ResponseFormat) throws {
        let photos = [["id": "1", "owner": "o\u{E9}@N01"], ["id": "2", "owner": "oe\u{301}@N01"], ["id": "3", "owner": "a b"],
                      ["id": "4", "owner": String(repeating: "x", count: 129)], ["id": "5", "owner": "kept@N01", "place_id": "p\u{E9}"],
                      ["id": "6", "owner": "kept@N01", "place_id": "2bI.PoV.t5Gt3na3", "woeid": "\u{FF11}2"]]
        let decoded = try FlickrResponseDecoder.photoPage(page(photos, format: format), format: format, page: 1)
        #expect(decoded.photos.map(\.id) == ["5", "6"])
        #expect(decoded.skipped.map(\.index) == [0, 1, 2, 3])
        #expect(decoded.skipped.first?.description.contains("not a Flickr id") == true, "\(decoded.skipped)")
        #expect(decoded.photos.map(\.placeID) == [nil, "2bI.PoV.t5Gt3na3"], "a place id that is not one is no place")
        #expect(decoded.photos.last?.woeID == nil)
    }

    @Test("An id of true or false is no id (not photo 1 or 0)")
    func booleanIDs() throws {
        let body = #"{"stat":"ok","photos":{"page":1,"pages":1,"perpage":2,"total":2,"photo":[{"id":true,"owner":"a@N01"},{"id":7,"owner":"b@N01"}]}}"#
        let decoded = try FlickrResponseDecoder.photoPage(Data(body.utf8), format: .json, page: 1)
        #expect(decoded.photos.map(\.id) == ["7"])
        #expect(decoded.skipped.map(\.description) == ["page 1: photo 1 has no id"])
    }

    @Test("An id too large for an integer is kept as the digits the server sent, in both formats")
    func hugeNumericID() throws {
        let json = Data(#"{"stat": "ok", "photos": {"page": 1, "photo": [{"id": 1180591620717411303424, "owner": "o"}]}}"#.utf8)
        let xml = Data(#"<rsp stat="ok"><photos page="1"><photo id="1180591620717411303424" owner="o"/></photos></rsp>"#.utf8)
        #expect(try FlickrResponseDecoder.photoPage(json, format: .json).photos.map(\.id) == ["1180591620717411303424"])
        #expect(try FlickrResponseDecoder.photoPage(xml, format: .xml).photos.map(\.id) == ["1180591620717411303424"])
    }

    @Test("Coordinates that are not numbers, infinite or out of range are none")
    func coordinates() throws {
        let json = Data(#"""
            {"stat": "ok", "photos": {"page": 1, "photo": [
              {"id": "1", "owner": "o", "latitude": "NaN", "longitude": "inf"},
              {"id": "2", "owner": "o", "latitude": 1e400, "longitude": "-1e400"},
              {"id": "3", "owner": "o", "latitude": "999", "longitude": "-180.5"},
              {"id": "4", "owner": "o", "latitude": "-89.5", "longitude": "179.25"}]}}
            """#.utf8)
        let photos = try FlickrResponseDecoder.photoPage(json, format: .json).photos
        #expect(photos.map(\.latitude) == [nil, nil, nil, -89.5])
        #expect(photos.map(\.longitude) == [nil, nil, nil, 179.25])
    }

    @Test("An upload date past year 9999 is no date, not an ISO date with a seven-digit year")
    func farFutureDate() throws {
        let json = Data(#"{"stat": "ok", "photos": {"page": 1, "photo": [{"id": "1", "owner": "o", "dateupload": "1e30"}, {"id": "2", "owner": "o", "dateupload": "253402300799"}]}}"#.utf8)
        let photos = try FlickrResponseDecoder.photoPage(json, format: .json).photos
        #expect(photos.map(\.dateUpload) == [nil, Date(timeIntervalSince1970: 253_402_300_799)])
    }

    @Test("Formats are told by their first bytes; a JPEG is complete only with its end marker (zero padding allowed)")
    func imageEnds() {
        let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 1, count: 20) + [0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        let gif = Array("GIF89a".utf8) + [UInt8](repeating: 2, count: 20) + [0x3B]
        let webp = Array("RIFF".utf8) + [24, 0, 0, 0] + Array("WEBP".utf8) + Array("VP8 ".utf8) + [UInt8](repeating: 3, count: 16)
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9]
        for (format, bytes) in [("PNG", png), ("GIF", gif), ("WebP", webp), ("JPEG", jpeg)] {
            #expect(ImageCheck.format(of: Data(bytes)) == format)
        }
        #expect(ImageCheck.isComplete(Data(jpeg)), "whole")
        #expect(ImageCheck.isComplete(Data(jpeg + [0, 0, 0])), "with zero padding")
        #expect(!ImageCheck.isComplete(Data(jpeg.dropLast(2))), "cut short")
        #expect(!ImageCheck.isComplete(Data(jpeg + Array("<html>".utf8))), "something else after the end")
    }

    @Test("A NUL in a title or name does not cut the text short")
    func nulInText() throws {
        let json = Data(#"{"stat": "ok", "photos": {"page": 1, "photo": [{"id": "1", "owner": "o", "title": "a\u0000b", "ownername": "x\u0000y"}]}}"#.utf8)
        let photo = try #require(try FlickrResponseDecoder.photoPage(json, format: .json).photos.first)
        #expect(photo.title == "a\u{FFFD}b" && photo.ownerName == "x\u{FFFD}y")
    }

    @Test("An error page, bytes that are not an image, a JPEG that does not decode whole, or another format, is refused as an image, naming the URL")
    func imagesAreChecked() async throws {
        let server = try FlickrTestServer()
        var configuration = FlickrConfiguration(endpoint: server.endpoint, imageBase: server.imageBase)
        configuration.retry = RetryPolicy(maximumAttempts: 1)
        configuration.maximumImageBytes = 64 * 1024
        let client = FlickrClient(configuration: configuration)
        let imageName = try #require(try FileManager.default.contentsOfDirectory(atPath: FlickrTestServer.sampleData.appendingPathComponent("images").path)
            .first { $0.hasSuffix(".jpg") })
        let url = server.imageBase.appendingPathComponent("65535/\(imageName)")
        let real = try await client.imageData(at: url)
        #expect(ImageCheck.format(of: real) == "JPEG")
        try await server.addFault(["path_contains": imageName, "body_text": "<html><body>Service unavailable</body></html>"])
        await #expect { _ = try await client.imageData(at: url) } throws: { error in
            (error as? FlickrError)?.kind == .notAnImage && "\(error)".contains(url.absoluteString) && "\(error)".contains("text/html")
        }
        try await server.addFault(["path_contains": imageName, "body_text": String(repeating: "x", count: 5000), "content_type": "image/jpeg"])
        await #expect { _ = try await client.imageData(at: url) } throws: { error in
            (error as? FlickrError)?.kind == .notAnImage && "\(error)".contains("not JPEG, PNG, GIF or WebP")
        }
        try await server.addFault(["path_contains": imageName, "truncate": -0.6])
        await #expect { _ = try await client.imageData(at: url) } throws: { error in
            (error as? FlickrError)?.kind == .notAnImage && "\(error)".contains("JPEG cut short") && "\(error)".contains(url.absoluteString)
        }
        // Bytes that start and end as a JPEG does are decoded, and refused unless whole:
        // a JPEG header followed by garbage, a real image with its middle damaged, and one
        // cut short with its end marker put back.
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        let header = [UInt8](real.prefix(20))
        let damaged = [UInt8](real.prefix(real.count / 3)) + [UInt8](repeating: 0x5A, count: real.count / 3) + [UInt8](real.suffix(real.count - 2 * (real.count / 3)))
        let cut = [UInt8](real.prefix(real.count / 2)) + [0xFF, 0xD9]
        for (what, bytes) in [("header then garbage", header + [UInt8](repeating: 0x41, count: 3000) + [0xFF, 0xD9]),
                              ("damaged middle", damaged), ("cut, end put back", cut)] {
            try await server.addFault(["path_contains": imageName, "body_hex": hex(bytes), "content_type": "image/jpeg"])
            await #expect(Comment(rawValue: what)) { _ = try await client.imageData(at: url) } throws: { error in
                (error as? FlickrError)?.kind == .notAnImage && "\(error)".contains("not a whole JPEG") && "\(error)".contains(url.absoluteString)
            }
        }
        let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 1, count: 20) + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        try await server.addFault(["path_contains": imageName, "body_hex": hex(png), "content_type": "image/png"])
        await #expect { _ = try await client.imageData(at: url) } throws: { error in
            (error as? FlickrError)?.kind == .notAnImage && "\(error)".contains("is a PNG image: only JPEG")
        }
        #expect(try await client.imageData(at: url) == real, "the faults are spent: the real image is taken again")
        try await server.addFault(["path_contains": imageName, "body_bytes": 200_000])
        await #expect { _ = try await client.imageData(at: url) } throws: { error in
            (error as? FlickrError)?.kind == .responseTooLarge && "\(error)".contains(url.absoluteString)
        }
    }
}
