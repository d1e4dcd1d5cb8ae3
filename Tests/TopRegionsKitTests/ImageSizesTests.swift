import Flickr
import Foundation
import ImageCodec
import Store
import Testing
import TestSupport
@testable import TopRegionsKit

@Suite("Images in every size: cached per size, one download however many ask, decoded before kept", .serialized)
struct ImageSizesTests {
    let test: TestGallery

    init() async throws {
        test = try TestGallery()
        _ = try await test.syncSample(SyncOptions(pages: 2, perPage: 100))
    }

    /// A synced photo that has committed SampleData files (so the test server has them too):
    /// its Flickr id and its large image's file name.
    private func photoWithFiles() throws -> (id: String, large: String) {
        let (id, thumbnail) = try Expected.thumbnailOfAPhotoInARegion()
        return (id, thumbnail.replacingOccurrences(of: "_s.jpg", with: "_b.jpg"))
    }

    /// The image files in a cache folder.
    private func cachedFiles(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".img") }.sorted()
    }

    private func thumbnailsKept() async throws -> Int {
        try await test.gallery.store.read { try $0.count(FetchRequest(ThumbnailRecord.self)) }
    }

    @Test("Ten concurrent requests for one uncached image make one download, and all get its bytes")
    func oneDownload() async throws {
        let server = try FlickrTestServer()
        let (id, large) = try photoWithFiles()
        // Slow enough that the ten overlap.
        try await server.addFault(["path_contains": large, "delay": 0.5, "times": -1])
        let cache = test.directory.appendingPathComponent("cache-one-download")
        let gallery = test.gallery
        let source = ImageSource(imageBase: server.imageBase)
        let results = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<10 {
                group.addTask { try await gallery.image(flickrID: id, size: .large, from: source, cacheDirectory: cache) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let file = try Data(contentsOf: Expected.directory.appendingPathComponent("images/\(large)"))
        #expect(results.count == 10 && results.allSatisfy { $0 == file })
        #expect(try await server.requests().filter { $0.path.hasSuffix(large) }.count == 1)
        // Then from the cache: no more downloads.
        #expect(try await gallery.image(flickrID: id, from: source, cacheDirectory: cache) == file)
        #expect(try await server.requests().filter { $0.path.hasSuffix(large) }.count == 1)
        #expect(cachedFiles(cache).count == 1)
        #expect(await ImageDownloads.shared.count == 0, "nothing left running")
    }

    @Test("Concurrent thumbnail requests share one download too, and the thumbnail is kept in the store")
    func oneThumbnailDownload() async throws {
        let server = try FlickrTestServer()
        let (id, large) = try photoWithFiles()
        let thumbnail = large.replacingOccurrences(of: "_b.jpg", with: "_s.jpg")
        try await server.addFault(["path_contains": thumbnail, "delay": 0.5, "times": -1])
        let gallery = test.gallery
        let source = ImageSource(imageBase: server.imageBase)
        let unused = test.directory.appendingPathComponent("unused")
        let results = try await withThrowingTaskGroup(of: Data.self) { group in
            for index in 0..<10 {
                // `image` in size s is the thumbnail: the same store, the same download.
                group.addTask {
                    index.isMultiple(of: 2)
                        ? try await gallery.thumbnail(flickrID: id, from: source)
                        : try await gallery.image(flickrID: id, size: .square, from: source, cacheDirectory: unused)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(results).count == 1)
        #expect(try await server.requests().filter { $0.path.hasSuffix(thumbnail) }.count == 1)
        #expect(try await thumbnailsKept() == 1)
        #expect(cachedFiles(unused).isEmpty, "the square is the store's, not the file cache's")
    }

    @Test("An HTML page served as image/jpeg, a JPEG cut short or damaged, is refused in words and nothing is kept")
    func notAnImageIsNotKept() async throws {
        let server = try FlickrTestServer()
        let (id, large) = try photoWithFiles()
        let thumbnail = large.replacingOccurrences(of: "_b.jpg", with: "_s.jpg")
        let cache = test.directory.appendingPathComponent("cache-refused")
        let source = ImageSource(imageBase: server.imageBase)
        let real = try Data(contentsOf: Expected.directory.appendingPathComponent("images/\(large)"))
        let damaged = real.prefix(real.count / 2) + Data(repeating: 0x41, count: 400) + Data([0xFF, 0xD9])
        let faults: [(String, [String: Any])] = [
            ("an HTML page as image/jpeg", ["body_text": "<html><body>Rate limited</body></html>", "content_type": "image/jpeg"]),
            ("a JPEG cut short", ["truncate": -0.5]),
            ("a JPEG damaged inside", ["body_hex": damaged.map { String(format: "%02x", $0) }.joined(), "content_type": "image/jpeg"]),
        ]
        for (what, fault) in faults {
            for file in [large, thumbnail] {
                try await server.clearFaults()
                try await server.addFault(fault.merging(["path_contains": file, "times": -1]) { $1 })
                do {
                    _ = file == large
                        ? try await test.gallery.image(flickrID: id, from: source, cacheDirectory: cache)
                        : try await test.gallery.thumbnail(flickrID: id, from: source)
                    Issue.record("\(what) was taken as \(file)")
                } catch let error as GalleryError {
                    #expect(error.kind == .source(temporary: false), "\(what): \(error)")
                    #expect(error.message.contains(file) && error.message.contains("nothing stored"), "\(what): \(error.message)")
                }
            }
        }
        #expect(cachedFiles(cache).isEmpty)
        #expect(try await thumbnailsKept() == 0)
        try await server.clearFaults()
        #expect(try await test.gallery.image(flickrID: id, from: source, cacheDirectory: cache) == real, "the real image is kept once it comes")
        #expect(cachedFiles(cache).count == 1)
    }

    @Test("From SampleData, every size of a drawn and of a committed photo: its pixels, one cache file per size, the square in the store")
    func everySizeFromSampleData() async throws {
        try await test.gallery.setSettings([.imageBase: Gallery.sampleDataImageBase])
        let source = ImageSource(environment: ["TOPREGIONS_SAMPLEDATA": Expected.directory.path])
        let cache = test.directory.appendingPathComponent("cache-sizes")
        let (committed, _) = try photoWithFiles()
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: Expected.directory.appendingPathComponent("images").path).map { String($0.split(separator: "_")[0]) })
        let shown = try await test.gallery.store.read {
            try $0.fetch(PhotoRecord.self, where: Key("region").isNotNull)
        }.map(\.flickrID)
        let drawn = try #require(shown.first { !files.contains($0) })
        let committedLarge = try JPEG.check(try Data(contentsOf: Expected.directory.appendingPathComponent("images/\(try photoWithFiles().large)")))
        for (id, width, height) in [(drawn, 1024, 768), (committed, committedLarge.width, committedLarge.height)] {
            for size in PhotoSize.gallerySizes {
                let info = try JPEG.check(try await test.gallery.image(flickrID: id, size: size, from: source, cacheDirectory: cache))
                #expect((info.width, info.height) == size.pixelSize(ofWidth: width, height: height), "\(id) \(size.rawValue)")
            }
        }
        // Five sizes of each in the file cache; the two squares of 75 in the store.
        #expect(cachedFiles(cache).count == 10)
        let letters: Set<String> = Set(cachedFiles(cache).map { name -> String in String(name.dropLast(4).split(separator: "_").last ?? "") })
        #expect(letters == ["q", "n", "z", "c", "b"])
        #expect(try await thumbnailsKept() == 2)
        do {
            _ = try await test.gallery.image(flickrID: drawn, size: .original, from: source, cacheDirectory: cache)
            Issue.record("an original was served")
        } catch let error as GalleryError {
            #expect(error.kind == .invalidArgument && error.message.contains("s, q, n, z, c, b"), "\(error)")
        }
    }
}
