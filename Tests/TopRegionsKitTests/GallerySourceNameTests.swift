import Foundation
import Testing
@testable import TopRegionsKit

@Suite("How a sync source is named in logs and progress lines")
struct GallerySourceNameTests {
    @Test("An endpoint's password and credential-like query values are hidden; the rest is kept")
    func credentialsAreHidden() throws {
        let source = try GallerySource.resolve(endpoint: "https://ann:hunter2@flickr.example/services/rest/?api_key=abc123&token=t0k&format=json",
                                               apiKey: nil, imageBase: nil, environment: [:])
        #expect(!source.name.contains("hunter2"))
        #expect(!source.name.contains("abc123"))
        #expect(!source.name.contains("t0k"))
        #expect(source.name.contains("flickr.example/services/rest/"))
        #expect(source.name.contains("format=json"))
        let plain = try GallerySource.resolve(endpoint: "http://127.0.0.1:8080/rest", apiKey: nil, imageBase: nil, environment: [:])
        #expect(plain.name == "http://127.0.0.1:8080/rest")
    }
}
