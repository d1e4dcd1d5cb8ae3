import Foundation
import Testing
@testable import Flickr

@Suite("The API key never reaches a message, and redacting it leaves the words whole")
struct RedactionTests {
    @Test("A key of real length is redacted wherever it stands")
    func longKey() {
        let key = "0123456789abcdef0123456789abcdef"
        let redaction = Redaction(secret: key)
        #expect(redaction.text("GET https://api.flickr.com/?api_key=\(key)&page=1 failed; key \(key) refused")
                == "GET https://api.flickr.com/?api_key=REDACTED&page=1 failed; key REDACTED refused")
    }

    @Test("A short key is redacted where it is the key, and words that contain it stay whole")
    func shortKey() {
        let redaction = Redaction(secret: "k")
        let message = redaction.text("Flickr error 105 at https://x/?api_key=k&format=json")
        #expect(message == "Flickr error 105 at https://x/?api_key=REDACTED&format=json")
        #expect(!message.contains("api_key=k"))
        #expect(Redaction(secret: "a b").text("?api_key=a%20b&x") == "?api_key=REDACTED&x")
    }
}
