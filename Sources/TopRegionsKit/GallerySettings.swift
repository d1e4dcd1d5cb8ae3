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

}

extension GalleryWriting {
    func setting(_ key: Gallery.SettingKey) throws -> String? {
        try readableStore.read { context in
            try context.scalar("SELECT value FROM Setting WHERE key = \(context.dialect.parameter(1))", [.text(key.rawValue)])?.string
        }
    }

    func setSettings(_ values: [Gallery.SettingKey: String]) async throws {
        try await writableStore.writing { transaction in
            let p = transaction.dialect.parameter
            for (key, value) in values {
                try transaction.execute("INSERT INTO Setting (key, value) VALUES (\(p(1)), \(p(2))) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                        [.text(key.rawValue), .text(value)])
            }
        }
    }
}
