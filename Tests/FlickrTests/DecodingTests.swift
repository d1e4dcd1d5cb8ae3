@testable import Flickr
import Foundation
import Testing

@Suite("Decoding responses")
struct DecodingTests {
    @Test("Every SampleData page decodes the same from JSON and from XML")
    func jsonAndXMLAgree() throws {
        let jsonPages = try SampleDataFiles.pageFiles(.json)
        let xmlPages = try SampleDataFiles.pageFiles(.xml)
        #expect(jsonPages.count == xmlPages.count && jsonPages.count >= 10)
        for (index, (jsonFile, xmlFile)) in zip(jsonPages, xmlPages).enumerated() {
            let fromJSON = try FlickrResponseDecoder.photoPage(Data(contentsOf: jsonFile), format: .json, page: index + 1)
            let fromXML = try FlickrResponseDecoder.photoPage(Data(contentsOf: xmlFile), format: .xml, page: index + 1)
            #expect(fromJSON == fromXML, "page \(index + 1)")
            #expect(fromJSON.page == index + 1)
        }
    }

    @Test("Every SampleData place decodes the same from JSON and from XML")
    func placesAgree() throws {
        for (jsonFile, xmlFile) in zip(try SampleDataFiles.placeFiles(.json), try SampleDataFiles.placeFiles(.xml)) {
            let json = Result { try FlickrResponseDecoder.placeInfo(Data(contentsOf: jsonFile), format: .json) }
            let xml = Result { try FlickrResponseDecoder.placeInfo(Data(contentsOf: xmlFile), format: .xml) }
            switch (json, xml) {
            case (.success(let left), .success(let right)):
                #expect(left == right, "\(jsonFile.lastPathComponent)")
            case (.failure(let left as FlickrError), .failure(let right as FlickrError)):
                #expect(left.kind == right.kind, "\(jsonFile.lastPathComponent)")
            default:
                Issue.record("\(jsonFile.lastPathComponent): one format decoded and the other did not")
            }
        }
    }

    @Test("Decoded photos carry the raw fields, with loose types read as Flickr means them")
    func fieldsMatchRawJSON() throws {
        let raw = try SampleDataFiles.rawPhotos()
        let decoded = try SampleDataFiles.pageFiles(.json).enumerated().flatMap { index, file in
            try FlickrResponseDecoder.photoPage(Data(contentsOf: file), format: .json, page: index + 1).photos
        }
        #expect(decoded.count == raw.count)
        for (photo, fields) in zip(decoded, raw) {
            #expect(photo.id == "\(fields["id"]!)")
            #expect(photo.owner == fields["owner"] as? String)
            #expect(photo.title == fields["title"] as? String)
            let place = fields["place_id"] as? String
            #expect(photo.placeID == ((place?.isEmpty ?? true) ? nil : place))
            #expect(photo.ownerName == fields["ownername"] as? String)
            #expect(photo.originalFormat == fields["originalformat"] as? String)
            if let upload = fields["dateupload"] as? String, let seconds = Double(upload) {
                #expect(photo.dateUpload == Date(timeIntervalSince1970: seconds))
            }
        }
        #expect(raw.contains { $0["id"] is NSNumber || $0["id"] is Int }, "SampleData has a numeric id")
        #expect(raw.contains { $0["place_id"] == nil }, "SampleData has a photo with no place_id")
        #expect(raw.contains { ($0["place_id"] as? String) == "" }, "SampleData has an empty place_id")
    }

    @Test("The jsonFlickrApi(...) wrapper is accepted")
    func callbackWrapper() throws {
        let body = Data("jsonFlickrApi({\"photos\": {\"page\": 1, \"pages\": \"1\", \"perpage\": 1, \"total\": \"1\", \"photo\": [{\"id\": 5, \"owner\": \"o\", \"title\": \"t\", \"latitude\": 0, \"place_id\": \"\"}]}, \"stat\": \"ok\"});\n".utf8)
        let page = try FlickrResponseDecoder.photoPage(body, format: .json, page: 1)
        #expect(page.photos.first?.id == "5")
        #expect(page.photos.first?.latitude == nil, "latitude 0 means none")
        #expect(page.photos.first?.placeID == nil)
        #expect(page.total == 1)
    }

    @Test("Only a whole jsonFlickrApi(...) wrapper is taken off, from a body that may itself be a slice")
    func callbackWrapperEdges() throws {
        let inner = #"{"stat": "ok"}"#
        #expect(JSONResponseDecoder.unwrapCallback(Data(" \n jsonFlickrApi(\(inner)) ; \n".utf8)) == Data(inner.utf8))
        #expect(JSONResponseDecoder.unwrapCallback(Data(inner.utf8)) == Data(inner.utf8))
        let unclosed = Data("jsonFlickrApi(\(inner)".utf8)
        #expect(JSONResponseDecoder.unwrapCallback(unclosed) == unclosed)
        let empty = Data("jsonFlickrApi()".utf8)
        #expect(JSONResponseDecoder.unwrapCallback(empty).isEmpty)
        #expect(throws: FlickrError.self) { try FlickrResponseDecoder.photoPage(empty, format: .json, page: 1) }
        // A slice of a larger buffer (indices not starting at 0) unwraps to the same bytes.
        let framed = Data("xx jsonFlickrApi(\(inner));".utf8)
        #expect(JSONResponseDecoder.unwrapCallback(framed.dropFirst(2)) == Data(inner.utf8))
        #expect(throws: FlickrError.self) { try FlickrResponseDecoder.photoPage(unclosed, format: .json, page: 1) }
    }

    @Test("Bad bodies are errors that name the method, the page and what was wrong",
          arguments: [ResponseFormat.json, .xml])
    func malformedBodies(format: ResponseFormat) throws {
        let good = try Data(contentsOf: SampleDataFiles.pageFiles(format)[1])
        let cases: [(Data, String)] = [
            (good.prefix(good.count / 2), format == .json ? "not valid JSON" : "not valid XML"),
            (Data(), "empty body"),
            (Data("<html>Service Unavailable</html>".utf8), format == .json ? "not valid JSON" : "root is <html>"),
            (format == .json ? Data("{\"stat\": \"ok\"}".utf8) : Data("<rsp stat=\"ok\"></rsp>".utf8), "no photos"),
        ]
        for (body, reason) in cases {
            #expect {
                try FlickrResponseDecoder.photoPage(body, format: format, page: 2)
            } throws: { error in
                guard let error = error as? FlickrError else { return false }
                return error.kind == .malformedResponse && error.page == 2 && error.method == "flickr.photos.search"
                    && "\(error)".contains(reason) && "\(error)".contains("page 2")
            }
        }
    }

    @Test("A photo without an id or owner is left out, named by its id")
    func missingRequiredFields() throws {
        let body = Data("{\"photos\": {\"page\": 1, \"photo\": [{\"id\": \"1\", \"owner\": \"o\"}, {\"id\": \"2\"}]}, \"stat\": \"ok\"}".utf8)
        let page = try FlickrResponseDecoder.photoPage(body, format: .json, page: 1)
        #expect(page.photos.map(\.id) == ["1"])
        #expect(page.skipped.map(\.description) == ["page 1: photo 2 has no owner"])
    }

    @Test("The failure envelope becomes a typed error; permanent place errors are told apart from transient ones",
          arguments: [ResponseFormat.json, .xml])
    func failureEnvelope(format: ResponseFormat) throws {
        func envelope(_ code: Int) -> Data {
            format == .json
                ? Data("{\"stat\": \"fail\", \"code\": \(code), \"message\": \"Nope\"}".utf8)
                : Data("<rsp stat=\"fail\"><err code=\"\(code)\" msg=\"Nope\"/></rsp>".utf8)
        }
        for code in [2, 3] {
            #expect { try FlickrResponseDecoder.placeInfo(envelope(code), format: format) } throws: { error in
                let error = error as? FlickrError
                return error?.kind == .api(code: code) && error?.isPermanentForPlace == true && error?.isTransient == false
            }
        }
        #expect { try FlickrResponseDecoder.placeInfo(envelope(105), format: format) } throws: { error in
            let error = error as? FlickrError
            return error?.isTransient == true && error?.isPermanentForPlace == false
        }
        for code in [0, 10, 105] {
            #expect("service unavailable (\(code)) passes") { try FlickrResponseDecoder.photoPage(envelope(code), format: format, page: 1) } throws: {
                ($0 as? FlickrError)?.isTransient == true
            }
        }
        #expect { try FlickrResponseDecoder.photoPage(envelope(100), format: format, page: 1) } throws: { ($0 as? FlickrError)?.isTransient == false }
        #expect { try FlickrResponseDecoder.photoPage(envelope(3), format: format, page: 1) } throws: { error in
            let error = error as? FlickrError
            return error?.kind == .api(code: 3) && error?.isPermanentForPlace == false && "\(error!)".contains("Nope")
        }
    }

    @Test("An XML document with a DTD or entity declarations is refused without expanding anything")
    func dtdRefused() {
        let laughs = Data("""
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
            <rsp stat="ok"><photos page="1"><photo id="1" owner="x" title="&lol2;"/></photos></rsp>
            """.utf8)
        #expect { try FlickrResponseDecoder.photoPage(laughs, format: .xml, page: 1) } throws: { error in
            (error as? FlickrError)?.kind == .malformedResponse && "\(error)".contains("DTD")
        }
        let external = Data("<?xml version=\"1.0\"?><!doctype rsp SYSTEM \"file:///etc/passwd\"><rsp stat=\"ok\"/>".utf8)
        #expect { try FlickrResponseDecoder.placeInfo(external, format: .xml) } throws: { "\($0)".contains("DTD") }
    }

    @Test("A processing instruction (which FoundationXML reads through NULL when it has no data) is refused, not parsed; the declaration is not one")
    func processingInstructionRefused() throws {
        for document in ["<?xml version=\"1.0\"?><?target?><rsp stat=\"ok\"/>", "<?xmlre?><rsp stat=\"ok\"/>",
                         "<rsp stat=\"ok\"><?pi data?></rsp>", "\u{FEFF}<rsp stat=\"ok\"><!-- <?x?> --></rsp>"] {
            #expect(throws: FlickrError.self, "\(document)") { try FlickrResponseDecoder.placeInfo(Data(document.utf8), format: .xml) }
            do { _ = try FlickrResponseDecoder.placeInfo(Data(document.utf8), format: .xml) } catch {
                #expect("\(error)".contains("processing instruction"), "\(document): \(error)")
            }
        }
        for document in ["<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n<rsp stat=\"ok\"><photos page=\"1\"/></rsp>",
                         "\u{FEFF}<?xml version=\"1.0\"?><rsp stat=\"ok\"><photos page=\"1\"/></rsp>",
                         "<rsp stat=\"ok\"><photos page=\"1\"/></rsp>"] {
            #expect(try FlickrResponseDecoder.photoPage(Data(document.utf8), format: .xml, page: 1).photos.isEmpty, "\(document)")
        }
    }

    @Test("Region extraction: a locality's region, a region place itself, none above region level")
    func regionExtraction() throws {
        let places = try SampleDataFiles.rawPlaces()
        var sawLocality = false, sawRegionPlace = false, sawCountry = false, sawFailure = false
        for (placeID, raw) in places {
            let file = SampleDataFiles.directory.appendingPathComponent("json/flickr.places.getInfo/\(placeID).json")
            guard let place = raw["place"] as? [String: Any] else {
                #expect { try FlickrResponseDecoder.placeInfo(Data(contentsOf: file), format: .json) } throws: { error in
                    (error as? FlickrError)?.isPermanentForPlace == true
                }
                sawFailure = true
                continue
            }
            let info = try FlickrResponseDecoder.placeInfo(Data(contentsOf: file), format: .json)
            let region = place["region"] as? [String: Any]
            switch place["place_type"] as? String {
            case "locality", "neighbourhood":
                sawLocality = true
                #expect(info.regionInfo == .region(id: region?["place_id"] as? String ?? "?", name: region?["_content"] as? String ?? "?",
                                                   country: (place["country"] as? [String: Any])?["_content"] as? String))
            case "region":
                sawRegionPlace = true
                #expect(info.regionInfo == .region(id: placeID, name: region?["_content"] as? String ?? "?",
                                                   country: (place["country"] as? [String: Any])?["_content"] as? String))
            case "country":
                sawCountry = true
                #expect(info.regionInfo == .noRegion)
            default:
                Issue.record("unexpected place type in \(placeID)")
            }
        }
        #expect(sawLocality && sawRegionPlace && sawCountry && sawFailure)
    }
}
