import Foundation

/// Keeps the API key out of everything the client prints or throws.
struct Redaction: Sendable {
    let secret: String?

    static let placeholder = "REDACTED"

    /// Keys shorter than this are redacted only where they stand as the key (`api_key=…`):
    /// replacing a short string everywhere would cut words ("Flickr" with the key "k").
    static let shortestRedactedEverywhere = 8

    func text(_ text: String) -> String {
        guard let secret, !secret.isEmpty else { return text }
        var redacted = text
        for encoded in Set([secret, secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret]) {
            redacted = redacted.replacingOccurrences(of: "api_key=" + encoded, with: "api_key=" + Self.placeholder)
        }
        guard secret.count >= Self.shortestRedactedEverywhere else { return redacted }
        return redacted.replacingOccurrences(of: secret, with: Self.placeholder)
    }

    func url(_ url: URL) -> String { text(url.absoluteString) }

    func error(_ error: FlickrError) -> FlickrError {
        var redacted = error
        redacted.message = text(error.message)
        return redacted
    }
}
