import Foundation
import Store

/// The answers the product should give for the bundled SampleData, computed here from the
/// raw response files with JSONSerialization, independently of the code under test.
/// Public for the test targets that share it.
public enum Expected {
    public struct Region: Equatable {
        public var placeID: String
        public var name: String
        public var country: String?
        public var photographers: Set<String>
        public var photos: Set<String>
    }

    public static let directory = FlickrTestServer.sampleData

    /// The thumbnail file (`ID_SECRET_s.jpg`) of a photo that has a region (the others count
    /// as not downloaded, images included), and the photo's id.
    public static func thumbnailOfAPhotoInARegion() throws -> (id: String, file: String) {
        let shown = Set(try regions().values.flatMap(\.photos))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("images").path).sorted()
        for file in files where file.hasSuffix("_s.jpg") {
            let id = String(file.split(separator: "_")[0])
            if shown.contains(id) { return (id, file) }
        }
        throw StoreError(.recordNotFound, "SampleData has no thumbnail of a photo in a region")
    }

    /// Every distinct photo of the pages (first occurrence), as raw fields.
    public static func photos() throws -> [[String: Any]] {
        let folder = directory.appendingPathComponent("json/flickr.photos.search")
        var seen = Set<String>()
        var result: [[String: Any]] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() {
            let root = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(file))) as? [String: Any]
            for photo in ((root?["photos"] as? [String: Any])?["photo"] as? [[String: Any]]) ?? [] {
                let id = "\(photo["id"] ?? "")"
                if seen.insert(id).inserted { result.append(photo) }
            }
        }
        return result
    }

    /// place id → (region place id, region name, country), for places that have a region.
    public static func regionOfPlace() throws -> [String: (String, String, String?)] {
        let folder = directory.appendingPathComponent("json/flickr.places.getInfo")
        var result: [String: (String, String, String?)] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let root = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(file))) as? [String: Any]
            guard let place = root?["place"] as? [String: Any], let region = place["region"] as? [String: Any],
                  let regionID = region["place_id"] as? String, let name = region["_content"] as? String else { continue }
            result[String(file.dropLast(5))] = (regionID, name, (place["country"] as? [String: Any])?["_content"] as? String)
        }
        return result
    }

    public static func regions() throws -> [String: Region] {
        let regionOfPlace = try regionOfPlace()
        var regions: [String: Region] = [:]
        for photo in try photos() {
            guard let placeID = photo["place_id"] as? String, let (regionID, name, country) = regionOfPlace[placeID],
                  let owner = photo["owner"] as? String else { continue }
            regions[regionID, default: Region(placeID: regionID, name: name, country: country, photographers: [], photos: [])]
                .photographers.insert(owner)
            regions[regionID]?.photos.insert("\(photo["id"] ?? "")")
        }
        return regions
    }

    /// The top regions: most distinct photographers, then name as the Finder sorts, then id.
    public static func topRegions(limit: Int = 50) throws -> [Region] {
        Array(try regions().values.sorted { left, right in
            if left.photographers.count != right.photographers.count { return left.photographers.count > right.photographers.count }
            let byName = Collation.localizedStandard.compare(left.name, right.name)
            if byName != .orderedSame { return byName == .orderedAscending }
            return left.placeID < right.placeID
        }.prefix(limit))
    }

    /// The course's title rule, written out again here.
    public static func title(_ photo: [String: Any]) -> String {
        let title = photo["title"] as? String ?? ""
        let description = ((photo["description"] as? [String: Any])?["_content"] as? String) ?? ""
        if !title.trimmingCharacters(in: .whitespaces).isEmpty { return title }
        if !description.trimmingCharacters(in: .whitespaces).isEmpty { return description }
        return "Unknown"
    }
}
