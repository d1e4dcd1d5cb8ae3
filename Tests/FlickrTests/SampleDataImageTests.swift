@testable import Flickr
import Foundation
import ImageCodec
import Testing
import TestSupport

@Suite("SampleData's images: every photo at every size, drawn or resized on request")
struct SampleDataImageTests {
    let transport: SampleDataTransport

    init() throws {
        transport = try SampleDataTransport(directory: SampleDataFiles.directory)
    }

    /// Every photo of the pages that has image URLs, once each: id and secret.
    static func photos() throws -> [(id: String, secret: String)] {
        var seen = Set<String>()
        return try SampleDataFiles.rawPhotos().compactMap { photo in
            guard let id = photo["id"].map({ "\($0)" }), let secret = photo["secret"] as? String, !secret.isEmpty,
                  seen.insert(id).inserted else { return nil }
            return (id, secret)
        }
    }

    /// The committed image files, by name.
    static func committed() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: SampleDataFiles.directory.appendingPathComponent("images").path))
    }

    func url(_ id: String, _ secret: String, _ size: PhotoSize) -> URL {
        FlickrConfiguration.defaultImageBase.appendingPathComponent("65535/\(id)_\(secret)_\(size.rawValue).jpg")
    }

    /// What a photo's image in `size` should measure: a committed file's own size; the other
    /// sizes of a photo with a committed `b` file fitted in that file (squares cropped); a
    /// drawn photo's fitted in 1024×768.
    static func expectedSize(_ id: String, _ secret: String, _ size: PhotoSize, committed: Set<String>) throws -> (width: Int, height: Int) {
        let folder = SampleDataFiles.directory.appendingPathComponent("images")
        if committed.contains("\(id)_\(secret)_\(size.rawValue).jpg") {
            let info = try JPEG.check(try Data(contentsOf: folder.appendingPathComponent("\(id)_\(secret)_\(size.rawValue).jpg")))
            return (info.width, info.height)
        }
        if committed.contains("\(id)_\(secret)_b.jpg") {
            let large = try JPEG.check(try Data(contentsOf: folder.appendingPathComponent("\(id)_\(secret)_b.jpg")))
            return size.pixelSize(ofWidth: large.width, height: large.height)
        }
        return size.pixelSize(ofWidth: 1024, height: 768)
    }

    @Test("Every SampleData photo has an image that decodes whole and has its size, every size for a sample; a picture is no noise")
    func everyPhotoAtEverySize() throws {
        let photos = try Self.photos()
        #expect(photos.count >= 1000)
        let committed = try Self.committed()
        // Every photo at one size (the sizes in turn), and every size of the committed
        // photos and of the first drawn ones. All of them at every size (7,000 pictures)
        // would take a minute of CPU, and starve the tests that run beside this one.
        let sizes = PhotoSize.gallerySizes
        var checks: [(id: String, secret: String, size: PhotoSize)] = []
        for (index, photo) in photos.enumerated() {
            let everySize = index < 24 || committed.contains("\(photo.id)_\(photo.secret)_b.jpg")
            for size in everySize ? sizes : [sizes[index % sizes.count]] { checks.append((photo.id, photo.secret, size)) }
        }
        #expect(Set(checks.map(\.size)) == Set(sizes))
        var failures: [String] = []
        for (id, secret, size) in checks {
            let response = try transport.respond(to: url(id, secret, size))
            guard response.status == 200, response.headers["content-type"] == "image/jpeg" else {
                failures.append("\(id) \(size.rawValue): HTTP \(response.status)")
                continue
            }
            do {
                let info = try JPEG.check(response.body)
                let expected = try Self.expectedSize(id, secret, size, committed: committed)
                if (info.width, info.height) != expected {
                    failures.append("\(id) \(size.rawValue): \(info.width)×\(info.height), not \(expected.width)×\(expected.height)")
                }
                // Gradients and figures compress well; noise at 1024×768 would take several times this.
                if response.body.count > 160_000 { failures.append("\(id) \(size.rawValue): \(response.body.count) bytes") }
            } catch {
                failures.append("\(id) \(size.rawValue): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures, the first: \(failures.prefix(5))")
    }

    @Test("A photo's picture is the same every time, and two photos' pictures differ")
    func picturesAreStableAndDiffer() throws {
        let committed = try Self.committed()
        let drawn = try Self.photos().filter { !committed.contains("\($0.id)_\($0.secret)_b.jpg") }
        try #require(drawn.count >= 2)
        for size in [PhotoSize.largeSquare, .large] {
            let first = try transport.respond(to: url(drawn[0].id, drawn[0].secret, size)).body
            #expect(try transport.respond(to: url(drawn[0].id, drawn[0].secret, size)).body == first, "the same bytes again")
            #expect(try SampleDataTransport(directory: SampleDataFiles.directory).respond(to: url(drawn[0].id, drawn[0].secret, size)).body == first)
            let a = try JPEG.decode(first), b = try JPEG.decode(try transport.respond(to: url(drawn[1].id, drawn[1].secret, size)).body)
            let difference = zip(a.pixels, b.pixels).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(a.pixels.count)
            #expect(difference > 20, "two photos look different: a mean difference of \(difference) of 255")
        }
        // Not one flat colour: the picture has a gradient and a figure.
        let picture = try JPEG.decode(try transport.respond(to: url(drawn[0].id, drawn[0].secret, .medium640)).body)
        var greys: [Int] = []
        for index in stride(from: 0, to: picture.pixels.count, by: 3) {
            let (red, green, blue) = (Int(picture.pixels[index]), Int(picture.pixels[index + 1]), Int(picture.pixels[index + 2]))
            greys.append(red + green + blue)
        }
        #expect((greys.max() ?? 0) - (greys.min() ?? 0) > 150)
    }

    @Test("A committed photo: its s and b files as they are, the other sizes made from b")
    func committedPhotos() throws {
        let folder = SampleDataFiles.directory.appendingPathComponent("images")
        let larges = try Self.committed().filter { $0.hasSuffix("_b.jpg") }.sorted()
        try #require(larges.count >= 12)
        for name in larges {
            let parts = name.split(separator: "_").map(String.init)
            let (id, secret) = (parts[0], parts[1])
            let file = try Data(contentsOf: folder.appendingPathComponent(name))
            #expect(try transport.respond(to: url(id, secret, .large)).body == file)
            #expect(try transport.respond(to: url(id, secret, .square)).body == Data(contentsOf: folder.appendingPathComponent("\(id)_\(secret)_s.jpg")))
            // The 150 square is the middle of the large image: the same colours.
            let large = try JPEG.decode(file), square = try JPEG.decode(try transport.respond(to: url(id, secret, .largeSquare)).body)
            let middle = try large.centreSquare(side: 150)
            let difference = zip(middle.pixels, square.pixels).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(square.pixels.count)
            #expect(difference < 6, "\(name): \(difference)")
        }
    }

    @Test("Only SampleData's photos have images: an unknown id, another secret, the original or another name is 404")
    func onlyKnownPhotos() throws {
        let photo = try #require(try Self.photos().first)
        let base = FlickrConfiguration.defaultImageBase.appendingPathComponent("65535")
        for name in ["1_\(photo.secret)_z.jpg", "\(photo.id)_ffffffffff_z.jpg", "\(photo.id)_\(photo.secret)_o.jpg", "\(photo.id)_\(photo.secret)_x.jpg",
                     "\(photo.id)_\(photo.secret)_z.png", "\(photo.id)_\(photo.secret).jpg", "..", "manifest.json"] {
            #expect(try transport.respond(to: base.appendingPathComponent(name)).status == 404, "\(name)")
        }
        #expect(try transport.respond(to: base.appendingPathComponent("\(photo.id)_\(photo.secret)_z.jpg")).status == 200)
    }

    @Test("Through the client, SampleData's images pass the whole-decode check at every size")
    func throughTheClient() async throws {
        let client = FlickrClient(configuration: FlickrConfiguration(), transport: transport)
        let photo = try #require(try Self.photos().last)
        for size in PhotoSize.gallerySizes {
            let bytes = try await client.image(of: FlickrPhoto(id: photo.id, owner: "o", secret: photo.secret, server: "65535"), size: size)
            let info = try JPEG.check(bytes)
            #expect((info.width, info.height) == size.pixelSize(ofWidth: 1024, height: 768))
        }
    }
}
