import Foundation
import Store
import TopRegionsKit

/// Encoded answers to catalogue reads, kept until the store's next commit (whoever makes
/// it): a list is encoded once per change, not once per request. This process's commits
/// are seen before they return; others' within the store's observation interval.
///
/// `@unchecked Sendable`: the mutable state is guarded by `lock`.
final class ResponseCache: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String: (body: [UInt8], next: String?)] = [:]
    private var generation = 0
    private var observation: StoreObservation?
    private let maximumEntries: Int
    /// Images as answered (bytes and entity tag), by photo and size: an image read from the
    /// file cache or the store is read, and hashed for its tag, once per change.
    private var images: [String: (bytes: [UInt8], tag: String)] = [:]
    private var imageBytes = 0
    /// The most bytes the kept images may take together (past it, all are dropped).
    let maximumImageBytes = 32 * 1024 * 1024

    init(gallery: any GalleryObserving, maximumEntries: Int = 4_096) {
        self.maximumEntries = maximumEntries
        observation = gallery.observeCommits { [weak self] in self?.invalidate() }
    }

    /// The cached bytes for `key`, else what `make` returns (cached unless a commit came
    /// while it ran).
    func bytes(_ key: String, _ make: () throws -> [UInt8]) rethrows -> [UInt8] {
        try page(key) { (try make(), nil) }.body
    }

    /// The cached page for `key` (its body, and where the next page is), else what
    /// `make` returns, cached the same way.
    func page(_ key: String, _ make: () throws -> (body: [UInt8], next: String?)) rethrows -> (body: [UInt8], next: String?) {
        let (cached, seen) = lock.withLock { (entries[key], generation) }
        if let cached { return cached }
        let made = try make()
        lock.withLock {
            guard generation == seen else { return }
            if entries.count >= maximumEntries { entries.removeAll(keepingCapacity: true) }
            entries[key] = made
        }
        return made
    }

    func invalidate() {
        lock.withLock {
            generation += 1
            entries.removeAll(keepingCapacity: true)
            images.removeAll()
            imageBytes = 0
        }
    }

    /// The image kept for `key`, and the generation to hand to `keepImage` when there is none.
    func image(_ key: String) -> (image: (bytes: [UInt8], tag: String)?, generation: Int) {
        lock.withLock { (images[key], generation) }
    }

    /// Keeps an image read in `seen`'s generation, unless a commit has come since.
    func keepImage(_ key: String, bytes: [UInt8], tag: String, seen: Int) {
        lock.withLock {
            guard generation == seen, bytes.count <= maximumImageBytes / 8 else { return }
            if imageBytes + bytes.count > maximumImageBytes {
                images.removeAll()
                imageBytes = 0
            }
            images[key] = (bytes, tag)
            imageBytes += bytes.count
        }
    }

    func close() {
        observation?.cancel()
        observation = nil
    }
}
