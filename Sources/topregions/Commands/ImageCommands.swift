import Flickr
import Foundation
import TopRegionsKit

// `thumbnail`, `image`: a photo's bytes, kept in the store or the image cache, else fetched.
extension Commands {
    static let imageOptions: [Option] = [
        .value("output", "FILE", "write there (- for stdout)", completions: ["FILE"]),
        .value("image-base", "URL", "where to fetch images (default: where the photos were synced from)", environment: "FLICKR_IMAGE_BASE"),
    ]

    static let thumbnail = Command(
        name: "thumbnail", abstract: "Write a photo's 75×75 thumbnail (downloaded once, then kept in the store).",
        arguments: [Argument(name: "ID", help: "the photo's Flickr id")], options: imageOptions,
        examples: [Example(arguments: ["thumbnail", "53300015459", "--output", "thumb.jpg"], explanation: "write the thumbnail to a file")],
        writesInstead: "the image's bytes"
    ) { invocation in
        let (id, output, source) = (try invocation.photoID(at: 0), try outputFile(invocation), try invocation.imageSource())
        // A store this user cannot write still gives its stored thumbnails (and one fetched
        // now, not kept).
        let gallery = try invocation.openReaderKeepingFetches()
        defer { gallery.close() }
        return try writeBytes(try await gallery.thumbnail(flickrID: id, from: source), to: output, invocation.output)
    }

    static let image = Command(
        name: "image", abstract: "Write a photo's image in a size (the large one by default, through the image file cache).",
        arguments: [Argument(name: "ID", help: "the photo's Flickr id")],
        options: [.value("size", "SIZE", "Flickr's size letter: s 75 square, q 150 square, n 320, z 640, c 800, b 1024 (pixels on the longest side)",
                         default: "b", completions: PhotoSize.gallerySizes.map(\.rawValue))] + imageOptions,
        examples: [Example(arguments: ["image", "53300015459", "--output", "photo.jpg"], explanation: "write the large image to a file"),
                   Example(arguments: ["image", "53300015459", "--size", "z", "--output", "photo-640.jpg"], explanation: "write the 640-pixel image")],
        writesInstead: "the image's bytes"
    ) { invocation in
        let (id, size) = (try invocation.photoID(at: 0), try imageSize(invocation))
        let (output, source) = (try outputFile(invocation), try invocation.imageSource())
        let gallery = try invocation.openReaderKeepingFetches()
        defer { gallery.close() }
        let data = try await gallery.image(flickrID: id, size: size, from: source, cacheDirectory: invocation.imageCacheDirectory)
        return try writeBytes(data, to: output, invocation.output)
    }

    /// `--size`: one of the gallery's size letters, `b` when absent.
    static func imageSize(_ invocation: Invocation) throws -> PhotoSize {
        guard let letter = invocation.value("size") else { return .large }
        guard let size = PhotoSize(rawValue: letter), PhotoSize.gallerySizes.contains(size) else {
            throw UsageError("--size must be one of " + PhotoSize.gallerySizes.map(\.rawValue).joined(separator: ", ")
                             + ", not \"\(TerminalText.escape(String(letter.prefix(20))))\"", command: invocation.command)
        }
        return size
    }

    /// `--output`; nil (or `-`) is stdout, which must not be a terminal.
    static func outputFile(_ invocation: Invocation) throws -> String? {
        let path = invocation.value("output")
        if path == nil || path == "-", invocation.output.isTerminal {
            throw UsageError("the image is binary: give --output FILE, or redirect stdout", command: invocation.command)
        }
        return path == "-" ? nil : path
    }

    static func writeBytes(_ data: Data, to path: String?, _ output: Output) throws -> Int32 {
        guard let path else {
            StandardStreams.out(data)
            return 0
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw RuntimeError("cannot write \(path): \(FileProblem.describe(errno))") }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        guard written == data.count else { throw RuntimeError("cannot write \(path): \(FileProblem.describe(errno))") }
        return 0
    }
}

/// A file-system failure in words.
enum FileProblem {
    /// `reading`: the file was to be read (a missing one is the file); else written (the
    /// directory is what is missing).
    static func describe(_ code: Int32, reading: Bool = false) -> String {
        switch code {
        case ENOENT: return reading ? "no such file" : "no such directory"
        case EACCES, EPERM: return "permission denied"
        case EROFS: return "read-only file system"
        case ENOSPC: return "no space left on the device"
        case EISDIR: return "it is a directory"
        case ENOTDIR: return "a part of the path is not a directory"
        default: return String(cString: strerror(code))
        }
    }
}
