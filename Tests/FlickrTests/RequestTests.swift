@testable import Flickr
import Foundation
import Testing

@Suite("Requests and photo URLs")
struct RequestTests {
    private func query(_ url: URL) -> [String: String] {
        Dictionary((URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map { ($0.name, $0.value ?? "") },
                   uniquingKeysWith: { $1 })
    }

    @Test("The search asks for what the course's FlickrFetcher asked, in JSON or XML")
    func searchURL() throws {
        let request = FlickrRequest.recentGeotaggedPhotos(page: 3, perPage: 500, minUploadDate: Date(timeIntervalSince1970: 1_700_000_123))
        let json = query(try request.url(endpoint: FlickrConfiguration.defaultEndpoint, apiKey: "k", format: .json))
        #expect(json["method"] == "flickr.photos.search")
        #expect(json["license"] == "1,2,4,7")
        #expect(json["has_geo"] == "1")
        #expect(json["extras"] == "original_format,description,geo,date_upload,owner_name,license,path_alias")
        #expect(json["page"] == "3")
        #expect(json["per_page"] == "500")
        #expect(json["min_upload_date"] == "1700000123")
        #expect(json["format"] == "json" && json["nojsoncallback"] == "1")
        #expect(json["api_key"] == "k")
        let xml = query(try request.url(endpoint: FlickrConfiguration.defaultEndpoint, apiKey: nil, format: .xml))
        #expect(xml["format"] == "rest" && xml["api_key"] == nil && xml["nojsoncallback"] == nil)
    }

    @Test("Out-of-range pages and page sizes are refused before any call")
    func validation() {
        #expect(throws: FlickrError.self) { try FlickrRequest.recentGeotaggedPhotos(page: 1, perPage: 501, minUploadDate: nil).validate() }
        #expect(throws: FlickrError.self) { try FlickrRequest.recentGeotaggedPhotos(page: 0, perPage: 100, minUploadDate: nil).validate() }
        #expect(throws: FlickrError.self) { try FlickrRequest.placeInfo(placeID: "").validate() }
        #expect(throws: Never.self) { try FlickrRequest.recentGeotaggedPhotos(page: 1, perPage: 500, minUploadDate: nil).validate() }
    }

    @Test("A place id with characters that need escaping is escaped, not spliced")
    func placeURL() throws {
        let url = try FlickrRequest.placeInfo(placeID: "a+b&c=d").url(endpoint: FlickrConfiguration.defaultEndpoint, apiKey: nil, format: .json)
        #expect(query(url)["place_id"] == "a+b&c=d")
        #expect(url.absoluteString.contains("a%2Bb%26c%3Dd"))
    }

    @Test("Photo URLs for every size and the original; none when a piece is missing")
    func photoURLs() throws {
        let photo = FlickrPhoto(id: "53311234567", owner: "52755911@N03", secret: "a1b2c3d4e5", server: "65535",
                                originalSecret: "f00ba12345", originalFormat: "png")
        #expect(photo.imageURL(.square)?.absoluteString == "https://live.staticflickr.com/65535/53311234567_a1b2c3d4e5_s.jpg")
        #expect(photo.imageURL(.large)?.absoluteString == "https://live.staticflickr.com/65535/53311234567_a1b2c3d4e5_b.jpg")
        #expect(photo.imageURL(.original)?.absoluteString == "https://live.staticflickr.com/65535/53311234567_f00ba12345_o.png")
        for (size, letter) in [(PhotoSize.largeSquare, "q"), (.small320, "n"), (.medium640, "z"), (.medium800, "c")] {
            #expect(photo.imageURL(size)?.absoluteString == "https://live.staticflickr.com/65535/53311234567_a1b2c3d4e5_\(letter).jpg")
        }
        #expect(PhotoSize.gallerySizes.map(\.rawValue) == ["s", "q", "n", "z", "c", "b"])
        let local = URL(string: "http://127.0.0.1:8080")!
        #expect(photo.imageURL(.square, base: local)?.absoluteString == "http://127.0.0.1:8080/65535/53311234567_a1b2c3d4e5_s.jpg")
        var noSecret = photo
        noSecret.secret = nil
        #expect(noSecret.imageURL(.square) == nil)
        #expect(noSecret.imageURL(.original) != nil)
        var noOriginal = photo
        noOriginal.originalFormat = ""
        #expect(noOriginal.imageURL(.original) == nil)
        #expect { try noOriginal.requireImageURL(.original) } throws: { "\($0)".contains("originalformat") }
        var hostile = photo
        hostile.server = "../../etc"
        #expect(hostile.imageURL(.square) == nil, "a piece that is not a plain token is refused")
    }

    @Test("Sizes: squares are their side; the others fit their longest side and never enlarge")
    func pixelSizes() {
        let expected: [(PhotoSize, Int, Int)] = [(.square, 75, 75), (.largeSquare, 150, 150), (.small320, 320, 240), (.medium640, 640, 480),
                                                 (.medium800, 800, 600), (.large, 1024, 768)]
        for (size, width, height) in expected {
            #expect(size.pixelSize(ofWidth: 1024, height: 768) == (width, height), "\(size)")
            #expect(size.pixelSize(ofWidth: 3072, height: 4096) == (size.isSquare ? (width, height) : (height, width)), "\(size) portrait")
        }
        #expect(PhotoSize.medium640.pixelSize(ofWidth: 160, height: 120) == (160, 120), "a small photo is not enlarged")
        #expect(PhotoSize.largeSquare.pixelSize(ofWidth: 160, height: 120) == (150, 150), "a square is always its side")
        #expect(PhotoSize.small320.pixelSize(ofWidth: 1000, height: 1) == (320, 1), "a side never rounds to nothing")
    }

    @Test("Retry-After in seconds and as an HTTP date")
    func retryAfterParsing() throws {
        #expect(FlickrClient.retryAfter("7") == 7)
        #expect(FlickrClient.retryAfter("soon") == nil)
        let inAMinute = Date().addingTimeInterval(60)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let fromDate = try #require(FlickrClient.retryAfter(formatter.string(from: inAMinute)))
        #expect(fromDate > 55 && fromDate <= 60)
        let policy = RetryPolicy(maximumAttempts: 3, baseDelay: 0.1)
        var generator = SystemRandomNumberGenerator()
        let throttled = FlickrError(.http(status: 429), "slow down", retryAfter: 2)
        #expect(policy.delay(after: throttled, attempt: 1, using: &generator) == 2)
        #expect(policy.delay(after: throttled, attempt: 3, using: &generator) == nil, "no attempt past the maximum")
        let tooLong = FlickrError(.http(status: 429), "come back tomorrow", retryAfter: 86_400)
        #expect(policy.delay(after: tooLong, attempt: 1, using: &generator) == nil)
        let serverError = FlickrError(.http(status: 502), "bad gateway")
        for attempt in 1...2 {
            let delay = try #require(policy.delay(after: serverError, attempt: attempt, using: &generator))
            #expect(delay >= 0 && delay <= 0.1 * pow(2, Double(attempt - 1)), "full jitter under the exponential ceiling")
        }
        #expect(policy.delay(after: FlickrError(.http(status: 404), "gone"), attempt: 1, using: &generator) == nil)
        #expect(policy.delay(after: FlickrError(.api(code: 100), "bad key"), attempt: 1, using: &generator) == nil)
        #expect(policy.delay(after: FlickrError(.api(code: 105), "unavailable"), attempt: 1, using: &generator) != nil)
    }
}
