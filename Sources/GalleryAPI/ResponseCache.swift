import Foundation
import Store
import TopRegionsKit

/// Encoded answers to catalogue reads and images, kept until any process commits to the
/// store: a list is encoded once per change, not once per request.
///
/// Before it answers, the cache asks the store's commit counter
/// (`ObservableStore.commitCounter`, microseconds, no lock of the store's): once a commit
/// has returned anywhere, no answer made before it is given (read-after-commit), even
/// before the observation hears of the commit.
///
/// `@unchecked Sendable`: the mutable state is guarded by `lock`.
final class ResponseCache: @unchecked Sendable {
    /// A list's page as answered: its body, and where the next page is.
    typealias Page = (body: [UInt8], next: String?)

    private let lock = NSLock()
    private let store: any ObservableStore
    private var entries: [String: Page] = [:]
    /// The store's commit counter the entries were made under.
    private var counter: UInt64
    /// Keeps a PostgreSQL store's listener running: its notifications move the counter.
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
        store = gallery.observableStore
        counter = store.commitCounter()
        observation = gallery.observeCommits { [weak self] in self?.invalidate() }
    }

    /// The counter to hand to `keep` for an answer about to be made: read before the
    /// store is, so a commit while it is made keeps it out.
    func marker() -> UInt64 { store.commitCounter() }

    /// The page kept for `key`, else what `make` returns (the store read on a worker:
    /// `access` must allow it), kept unless a commit came while it was made.
    func page(_ key: String, access: StoreAccess, _ make: () throws -> Page) throws -> Page {
        let before = marker()
        if let kept = lock.withLock({ () -> Page? in catchUpLocked(before); return entries[key] }) { return kept }
        try access.require()
        let made = try make()
        keep(key, made, madeAfter: before)
        return made
    }

    /// `page(_:access:_:)` for an answer without a next page.
    func bytes(_ key: String, access: StoreAccess, _ make: () throws -> [UInt8]) throws -> [UInt8] {
        try page(key, access: access) { (try make(), nil) }.body
    }

    /// Keeps `page`, made from a read begun after `marker` was taken, unless a commit came since.
    func keep(_ key: String, _ page: Page, madeAfter marker: UInt64) {
        let now = store.commitCounter()
        lock.withLock {
            catchUpLocked(now)
            guard now == marker else { return }
            if entries.count >= maximumEntries { entries.removeAll(keepingCapacity: true) }
            entries[key] = page
        }
    }

    /// Drops everything when the store's counter moved.
    private func catchUpLocked(_ now: UInt64) {
        guard now != counter else { return }
        counter = now
        clearLocked()
    }

    private func clearLocked() {
        entries.removeAll(keepingCapacity: true)
        images.removeAll()
        imageBytes = 0
    }

    /// A commit was delivered: drop everything (the counter has moved too, or will).
    func invalidate() {
        lock.withLock(clearLocked)
    }

    /// The image kept for `key`, and the marker to hand to `keepImage` when there is none.
    func image(_ key: String) -> (image: (bytes: [UInt8], tag: String)?, marker: UInt64) {
        let now = store.commitCounter()
        return lock.withLock {
            catchUpLocked(now)
            return (images[key], now)
        }
    }

    /// Keeps an image read after `marker` was taken, unless a commit has come since.
    func keepImage(_ key: String, bytes: [UInt8], tag: String, madeAfter marker: UInt64) {
        let now = store.commitCounter()
        lock.withLock {
            catchUpLocked(now)
            guard now == marker, bytes.count <= maximumImageBytes / 8 else { return }
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
