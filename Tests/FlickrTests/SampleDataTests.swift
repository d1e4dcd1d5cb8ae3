@testable import Flickr
import Foundation
import SampleDataSupport
import Testing
import TestSupport

@Suite("The bundled SampleData")
struct SampleDataTests {
    @Test("It has the size the product needs: photos, pages, places, regions, countries, photographers")
    func size() throws {
        let photos = try SampleDataFiles.rawPhotos()
        let places = try SampleDataFiles.rawPlaces()
        #expect(Set(photos.map { "\($0["id"]!)" }).count >= 1000)
        #expect(try SampleDataFiles.pageFiles(.json).count >= 5)
        #expect(places.count >= 150)
        let regions = places.values.compactMap { (($0["place"] as? [String: Any])?["region"] as? [String: Any])?["place_id"] as? String }
        #expect(Set(regions).count >= 60)
        let countries = places.values.compactMap { (($0["place"] as? [String: Any])?["country"] as? [String: Any])?["place_id"] as? String }
        #expect(Set(countries).count >= 15)
        let photosPerOwner = Dictionary(grouping: photos, by: { $0["owner"] as? String ?? "" }).mapValues(\.count)
        #expect(photosPerOwner.count >= 200)
        let counts = photosPerOwner.values.sorted(by: >)
        #expect(counts[0] >= 10 * counts[counts.count / 2], "a skewed number of photos per photographer")
        // Every place a photo names has a getInfo response (the failing one included).
        let named = Set(photos.compactMap { $0["place_id"] as? String }.filter { !$0.isEmpty })
        #expect(named.isSubset(of: Set(places.keys)))
    }

    @Test("It plants the awkward cases")
    func awkwardCases() throws {
        let photos = try SampleDataFiles.rawPhotos()
        let titles = photos.map { $0["title"] as? String ?? "" }
        let descriptions = photos.map { (($0["description"] as? [String: Any])?["_content"] as? String) ?? "" }
        #expect(titles.contains(""), "empty title")
        #expect(descriptions.contains(""), "empty description")
        #expect(zip(titles, descriptions).contains { $0.isEmpty && $1.isEmpty }, "both empty")
        #expect(titles.contains("Item 2") && titles.contains("Item 10"), "digits that sort numerically")
        #expect(titles.contains { $0.contains("é") || $0.contains("Å") }, "accents")
        #expect(titles.contains { $0.unicodeScalars.contains { (0x3040...0x9FFF).contains($0.value) } }, "CJK")
        #expect(titles.contains { $0.unicodeScalars.contains { $0.properties.isEmojiPresentation } }, "emoji")
        #expect(titles.contains { $0.unicodeScalars.contains { (0x0590...0x06FF).contains($0.value) } }, "right-to-left")
        let ids = photos.map { "\($0["id"]!)" }
        #expect(Set(ids).count < ids.count, "a photo repeated on two pages")
        #expect(photos.contains { $0["place_id"] == nil }, "a photo with no place_id")
        let places = try SampleDataFiles.rawPlaces()
        #expect(places.values.contains { ($0["stat"] as? String) == "fail" && ($0["code"] as? Int) == 2 }, "a place whose getInfo fails with code 2")
        #expect(places.values.contains { (($0["place"] as? [String: Any])?["place_type"] as? String) == "country" }, "a country place")
        var regionNames: [String: Set<String>] = [:]
        for place in places.values.compactMap({ $0["place"] as? [String: Any] }) {
            guard let region = place["region"] as? [String: Any], let name = region["_content"] as? String,
                  let id = region["place_id"] as? String else { continue }
            regionNames[name.components(separatedBy: ",")[0], default: []].insert(id)
        }
        #expect((regionNames["Limburg"]?.count ?? 0) >= 2 && (regionNames["Punjab"]?.count ?? 0) >= 2,
                "two regions with the same name in different countries")
        var namesByOwner: [String: Set<String>] = [:]
        for photo in photos {
            if let owner = photo["owner"] as? String, let name = photo["ownername"] as? String { namesByOwner[owner, default: []].insert(name) }
        }
        #expect(namesByOwner.values.contains { $0.count > 1 }, "a photographer whose display name changes")
    }

    @Test("It has real JPEG images for some photos")
    func images() throws {
        let folder = SampleDataFiles.directory.appendingPathComponent("images")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix("_s.jpg") }
        #expect(files.count >= 5)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: folder.appendingPathComponent(file)))
            #expect(bytes.starts(with: [0xFF, 0xD8, 0xFF]) && bytes.suffix(2) == [0xFF, 0xD9], "\(file) is a JPEG")
        }
    }

    @Test("The generator is deterministic and writes what is committed")
    func generatorReproduces() throws {
        let temporary = try TemporaryDirectory("sampledata")
        let output = temporary.url.appendingPathComponent("out")
        try SampleDataGenerator.run(["--out", output.path, "--images", "0"])
        for relative in ["manifest.json", "json/flickr.photos.search/page-0004.json", "xml/flickr.photos.search/page-0007.xml"] {
            let committed = try Data(contentsOf: SampleDataFiles.directory.appendingPathComponent(relative))
            let regenerated = try Data(contentsOf: output.appendingPathComponent(relative))
            #expect(committed == regenerated, "\(relative)")
        }
    }

    @Test("A generator run that fails says so, with its exit status and what it wrote to standard error")
    func generatorFailureIsReported() throws {
        let temporary = try TemporaryDirectory("sampledata")
        let output = temporary.url.appendingPathComponent("out")
        let error = try #require(throws: SampleDataGeneratorError.self) {
            try SampleDataGenerator.run(["--out", output.path, "--no-such-option"])
        }
        #expect(error.status != 0)
        #expect(error.description.contains("--no-such-option"))
        #expect(error.standardError.contains("unrecognized arguments"))
    }
}

@Suite("The SampleData transport")
struct SampleDataTransportTests {
    let client: FlickrClient

    init() throws {
        client = FlickrClient(configuration: FlickrConfiguration(), transport: try SampleDataTransport(directory: SampleDataFiles.directory))
    }

    @Test("It serves the pages as stored, and re-pages them for other page sizes without losing a photo")
    func pages() async throws {
        let first = try await client.recentGeotaggedPhotos(page: 1, perPage: 100)
        #expect(first.photos.count == 100)
        var all: [String] = []
        var page = 1
        while true {
            let result = try await client.recentGeotaggedPhotos(page: page, perPage: 250)
            all += result.photos.map(\.id)
            if page >= result.pages { break }
            page += 1
        }
        let raw = try SampleDataFiles.rawPhotos().map { "\($0["id"]!)" }
        #expect(all == raw)
    }

    @Test("min_upload_date keeps only photos uploaded at or after it")
    func minUploadDate() async throws {
        let raw = try SampleDataFiles.rawPhotos()
        let uploads = raw.compactMap { ($0["dateupload"] as? String).flatMap(Double.init) }.sorted(by: >)
        let cutoff = uploads[149]
        let expected = uploads.filter { $0 >= cutoff }.count
        let result = try await client.recentGeotaggedPhotos(page: 1, perPage: 500, minUploadDate: Date(timeIntervalSince1970: cutoff))
        #expect(result.photos.count == expected)
        #expect(result.photos.allSatisfy { ($0.dateUpload?.timeIntervalSince1970 ?? 0) >= cutoff })
    }

    @Test("min_upload_date on pages of the files' own size: a page wholly newer is served as stored, a page it cuts is cut")
    func minUploadDateOnStoredPages() async throws {
        let raw = try SampleDataFiles.rawPhotos()
        let firstPage = raw.prefix(100).compactMap { ($0["dateupload"] as? String).flatMap(Double.init) }
        let storedPage = try await client.recentGeotaggedPhotos(page: 1, perPage: 100)
        let olderThanAll = try await client.recentGeotaggedPhotos(page: 1, perPage: 100, minUploadDate: Date(timeIntervalSince1970: (firstPage.min() ?? 0) - 1))
        #expect(olderThanAll.photos.map(\.id) == storedPage.photos.map(\.id))
        let cutoff = firstPage.sorted(by: >)[39]
        let cut = try await client.recentGeotaggedPhotos(page: 1, perPage: 100, minUploadDate: Date(timeIntervalSince1970: cutoff))
        #expect(cut.photos.count == firstPage.filter { $0 >= cutoff }.count)
        #expect(cut.photos.count < 100)
        #expect(cut.photos.allSatisfy { ($0.dateUpload?.timeIntervalSince1970 ?? 0) >= cutoff })
    }

    @Test("Upload dates are read from a JSON page without decoding it, or not at all when one is odd")
    func scannedUploadDates() {
        func scan(_ text: String) -> [Double]? {
            SampleDataTransport.uploadDates(inJSON: Data(text.utf8)).map { [Double($0.count), $0.oldest] }
        }
        #expect(scan(#"[{"dateupload": "1700000300"}, {"dateupload" : 1700000100}, {"dateupload":"1700000200"}]"#) == [3, 1_700_000_100])
        // The key inside a string is escaped, so it is not a member.
        #expect(scan(#"[{"title": "\"dateupload\": 5", "dateupload": "1700000300"}]"#) == [1, 1_700_000_300])
        #expect(scan(#"[{"dateupload": null}]"#) == nil)
        #expect(scan(#"[{"dateupload": "soon"}]"#) == nil)
        #expect(scan(#"[{"dateupload": "17"#) == nil)
        #expect(scan(#"[{"id": "1"}]"#) == nil)
    }

    @Test("Places resolve; an unknown place is Flickr's permanent error 2; images are served, others 404")
    func placesAndImages() async throws {
        let photo = try #require(try await client.recentGeotaggedPhotos(page: 1, perPage: 100).photos.first { $0.placeID != nil })
        let info = try await client.placeInfo(photo.placeID ?? "")
        #expect(info.placeID == photo.placeID)
        await #expect { try await client.placeInfo("../../etc/passwd") } throws: { ($0 as? FlickrError)?.isPermanentForPlace == true }
        await #expect { try await client.placeInfo("NoSuchPlace123") } throws: { ($0 as? FlickrError)?.isPermanentForPlace == true }
        let imageFile = try #require(try FileManager.default.contentsOfDirectory(atPath: SampleDataFiles.directory.appendingPathComponent("images").path)
            .first { $0.hasSuffix("_s.jpg") })
        let parts = imageFile.dropLast(6).split(separator: "_")
        let withImage = FlickrPhoto(id: String(parts[0]), owner: "o", secret: String(parts[1]), server: "65535")
        let bytes = try await client.image(of: withImage, size: .square)
        #expect(bytes.starts(with: [0xFF, 0xD8]))
        var missing = withImage
        missing.secret = "ffffffffff"
        await #expect { try await client.image(of: missing, size: .square) } throws: { ($0 as? FlickrError)?.kind == .http(status: 404) }
    }

    @Test("The XML form serves the same photos")
    func xmlForm() async throws {
        var configuration = FlickrConfiguration()
        configuration.format = .xml
        let xmlClient = FlickrClient(configuration: configuration, transport: try SampleDataTransport(directory: SampleDataFiles.directory))
        let fromXML = try await xmlClient.recentGeotaggedPhotos(page: 2, perPage: 300)
        let fromJSON = try await client.recentGeotaggedPhotos(page: 2, perPage: 300)
        #expect(fromXML.photos.map(\.id) == fromJSON.photos.map(\.id))
        #expect(fromXML.photos.map(\.title) == fromJSON.photos.map(\.title))
    }

    @Test("A folder without SampleData is refused with a clear error")
    func missingFolder() {
        #expect { try SampleDataTransport(directory: URL(fileURLWithPath: "/nonexistent")) } throws: { "\($0)".contains("no SampleData") }
    }
}
