import Flickr
import TestSupport
import Foundation

/// Reads the bundled SampleData files directly, for expectations computed independently of
/// the client under test.
enum SampleDataFiles {
    static let directory = FlickrTestServer.sampleData

    static func pageFiles(_ format: ResponseFormat) throws -> [URL] {
        let folder = directory.appendingPathComponent(format.rawValue).appendingPathComponent("flickr.photos.search")
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func placeFiles(_ format: ResponseFormat) throws -> [URL] {
        let folder = directory.appendingPathComponent(format.rawValue).appendingPathComponent("flickr.places.getInfo")
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Every photo object of the JSON pages, in order, as parsed by JSONSerialization.
    static func rawPhotos() throws -> [[String: Any]] {
        try pageFiles(.json).flatMap { file -> [[String: Any]] in
            let root = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
            return (root?["photos"] as? [String: Any])?["photo"] as? [[String: Any]] ?? []
        }
    }

    static func rawPlaces() throws -> [String: [String: Any]] {
        var places: [String: [String: Any]] = [:]
        for file in try placeFiles(.json) {
            let root = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
            places[file.deletingPathExtension().lastPathComponent] = root
        }
        return places
    }
}
