import Flickr
import Foundation
import Store
import TopRegionsKit

// `thumbnail`, `image`: a photo's bytes, kept in the store or the image cache, else fetched.
extension Commands {
    static func writeBytes(_ data: Data, _ output: String?, _ context: Context) throws -> Int32 {
        if let output {
            try data.write(to: URL(fileURLWithPath: output))
            return 0
        }
        guard !context.output.isTerminal else {
            throw UsageError("the image is binary: give --output FILE or redirect stdout")
        }
        context.output.write("")
        FileHandle.standardOutput.write(data)
        return 0
    }

    /// What `thumbnail` and `image` both read: the output, the store, the source, the photo.
    struct ImageRequest {
        let output: String?
        let gallery: Gallery
        let client: FlickrClient
        let photo: PhotoRecord

        init(_ context: inout Context) throws {
            output = try context.arguments.option("output")
            gallery = try context.openGallery(.write)
            do {
                client = try context.source(gallery: gallery).client
                _ = try context.syncOptions()
                let id = try context.arguments.positionals(1...1, "the photo id")[0]
                guard let photo = try gallery.store.read({ try $0.fetch(PhotoRecord.self, where: Key("flickrID") == id).first }) else {
                    throw RuntimeError("no photo has id \(id)")
                }
                self.photo = photo
            } catch {
                gallery.close()
                throw error
            }
        }
    }

    /// What `thumbnail` and `image` both take.
    static let imageOptions = ["--output FILE      write there instead of stdout"] + sourceOptions

    static let thumbnail = Command(name: "thumbnail", abstract: "Write a photo's 75×75 thumbnail (downloaded once, then kept in the store).",
                                   usage: "thumbnail ID [--output FILE] [source options]",
                                   options: imageOptions,
                                   example: "topregions thumbnail 53300015612 --output thumb.jpg") { context in
        let request = try ImageRequest(&context)
        defer { request.gallery.close() }
        let data = try await ThumbnailLoader(gallery: request.gallery, client: request.client).thumbnail(photoID: request.photo.id ?? -1)
        return try writeBytes(data, request.output, context)
    }

    static let image = Command(name: "image", abstract: "Write a photo's large image (through the image file cache).",
                               usage: "image ID [--output FILE] [source options]",
                               options: imageOptions,
                               example: "topregions image 53300015612 --output photo.jpg") { context in
        let request = try ImageRequest(&context)
        defer { request.gallery.close() }
        let photo = request.photo
        let cache = try ImageCache(directory: context.imageCacheDirectory)
        if let cached = try cache.data(flickrID: photo.flickrID, size: .large) { return try writeBytes(cached, request.output, context) }
        let flickr = FlickrPhoto(id: photo.flickrID, owner: "", secret: photo.secret, server: photo.server)
        let data = try await request.client.image(of: flickr, size: .large)
        try cache.store(data, flickrID: photo.flickrID, size: .large)
        return try writeBytes(data, request.output, context)
    }
}
