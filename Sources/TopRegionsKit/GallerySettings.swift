import Foundation
import Store

/// What the gallery remembers of how it was last filled, so that commands that run later
/// (images, status) follow the same source.
extension Gallery {
    enum SettingKey: String {
        /// The image base the last sync's photos' URLs are built on, or `sampledata`.
        case imageBase = "sync.imageBase"
        /// The rate limit the last sync ran under (calls an hour), or `none`.
        case rateLimit = "sync.rateLimit"
    }

    static let sampleDataImageBase = "sampledata"

    func setting(_ key: SettingKey) throws -> String? {
        try store.read { try $0.scalar("SELECT value FROM Setting WHERE key = ?", [.text(key.rawValue)])?.string }
    }

    func setSettings(_ values: [SettingKey: String]) async throws {
        try await store.write { transaction in
            for (key, value) in values {
                try transaction.execute("INSERT INTO Setting (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                        [.text(key.rawValue), .text(value)])
            }
        }
    }
}
