import Foundation

/// Keeps the API key out of everything the client prints or throws.
struct Redaction: Sendable {
    let secret: String?

    static let placeholder = "REDACTED"

    func text(_ text: String) -> String {
        guard let secret, !secret.isEmpty else { return text }
        return text.replacingOccurrences(of: secret, with: Self.placeholder)
    }

    func url(_ url: URL) -> String { text(url.absoluteString) }

    func error(_ error: FlickrError) -> FlickrError {
        var redacted = error
        redacted.message = text(error.message)
        return redacted
    }
}
