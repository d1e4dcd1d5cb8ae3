import Flickr
import Foundation
import Store
import Synchronization

/// How one sync pass runs.
public struct SyncOptions: Sendable {
    /// Pages of `photos.search` to read at most.
    public var pages = 8
    /// Photos per page (Flickr's maximum is 500).
    public var perPage = 500
    /// How far before the previous pass's newest upload to start again (pages shift, clocks
    /// differ): photos seen twice are simply known.
    public var overlap: TimeInterval = 3600
    /// Places asked at once (the client also bounds requests in flight).
    public var concurrentPlaceLookups = 4
    /// When the pass's clock reads; tests set it.
    public var now: @Sendable () -> Date = { Date() }

    public init(pages: Int = 8, perPage: Int = 500) {
        self.pages = pages
        self.perPage = perPage
    }
}

/// What a pass did, like iOS's background fetch result, with counts.
public struct SyncResult: Sendable, Equatable {
    public enum Outcome: String, Sendable {
        case newData
        case noData
        case failed
    }

    public var outcome: Outcome
    public var photosNew = 0
    public var photosUpdated = 0
    public var placesResolved = 0
    public var placesPending = 0
    public var placesFailed = 0
    public var calls = 0
    public var seconds: Double = 0
    /// Why the pass failed, when it did.
    public var error: String?
}

extension Gallery {
    /// One sync pass: recent geotagged photos, page by page (each page one transaction:
    /// all of it or none of it), then the places not known yet, asked once each, then
    /// photos attached to their regions. Holds the store's sync lock for the pass: throws
    /// `SyncLock.Busy` (with the holder's pid) when another pass runs.
    public func sync(client: FlickrClient, options: SyncOptions = SyncOptions(), waitForLock: Bool = false) async throws -> SyncResult {
        let lock = try SyncLock.acquire(for: store, wait: waitForLock)
        defer { lock.release() }
        let started = options.now()
        let callsBefore = client.statistics.calls
        var result = SyncResult(outcome: .noData)
        let previous = try lastSuccessfulSync()
        let minimumUpload = previous?.newestUpload.map { $0.addingTimeInterval(-options.overlap) }
        var newestUpload = previous?.newestUpload
        var namedThisPass = Set<String>()
        do {
            let lastPage = max(1, options.pages)
            let pages = PageReader(client: client, perPage: options.perPage, minimumUpload: minimumUpload)
            defer { pages.cancel() }
            for page in 1...lastPage {
                let photos = try await pages.page(page)
                // The next page is read while this one is stored, once the pass is sure to
                // want it: there is one, and either nothing lets the pass stop early (a first
                // pass, or after a failure) or this page holds a new photo.
                let hasNextPage = !photos.photos.isEmpty && page < photos.pages && page < lastPage
                if hasNextPage && previous == nil { pages.readAhead(page + 1) }
                let names = namedThisPass
                let (stored, named) = try await store.write { transaction in
                    var named = names
                    let stored = try PhotoIngest.store(photos.photos, downloadedAt: started, namedThisPass: &named, in: transaction) {
                        if hasNextPage { pages.readAhead(page + 1) }
                    }
                    return (stored, named)
                }
                namedThisPass = named
                result.photosNew += stored.new
                result.photosUpdated += stored.updated
                if let newest = photos.photos.compactMap(\.dateUpload).max() { newestUpload = max(newestUpload ?? newest, newest) }
                // Caught up with the previous pass: older pages hold nothing new. (After a
                // failed or first pass, keep going: the pages were never all read.)
                let caughtUp = previous != nil && stored.allKnown
                if photos.photos.isEmpty || caughtUp || page >= photos.pages { break }
            }
            let places = try await PlaceResolution.resolvePending(in: store, client: client, options: options)
            result.placesResolved = places.resolved
            result.placesFailed = places.failed
        } catch {
            result.outcome = .failed
            result.error = "\(error)"
        }
        result.placesPending = try await store.read { Int(try $0.scalar("SELECT count(*) FROM Place WHERE status = 'pending'")?.int64 ?? 0) }
        result.calls = client.statistics.calls - callsBefore
        if result.outcome != .failed {
            result.outcome = result.photosNew + result.photosUpdated + result.placesResolved > 0 ? .newData : .noData
        }
        result.seconds = options.now().timeIntervalSince(started)
        try record(result, started: started, newestUpload: result.outcome == .failed ? previous?.newestUpload : newestUpload,
                   finished: options.now())
        return result
    }

    private func lastSuccessfulSync() throws -> (startedAt: Date, newestUpload: Date?)? {
        try store.read { context in
            guard let row = try context.rows("SELECT startedAt, newestUpload FROM SyncRun WHERE result != 'failed' ORDER BY startedAt DESC LIMIT 1").first else {
                return nil
            }
            return (Date(timeIntervalSince1970: try row.double("startedAt")), row.optionalDouble("newestUpload").map(Date.init(timeIntervalSince1970:)))
        }
    }

    private func record(_ result: SyncResult, started: Date, newestUpload: Date?, finished: Date) throws {
        try store.write { transaction in
            try transaction.execute("""
                INSERT INTO SyncRun (startedAt, finishedAt, result, photosNew, photosUpdated, placesResolved, placesPending, placesFailed, calls, newestUpload, error)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.real(started.timeIntervalSince1970), .real(finished.timeIntervalSince1970), .text(result.outcome.rawValue),
                      .integer(Int64(result.photosNew)), .integer(Int64(result.photosUpdated)), .integer(Int64(result.placesResolved)),
                      .integer(Int64(result.placesPending)), .integer(Int64(result.placesFailed)), .integer(Int64(result.calls)),
                      newestUpload.map { .real($0.timeIntervalSince1970) } ?? .null, result.error.map { .text($0) } ?? .null])
        }
    }
}

/// Reads `photos.search` pages for a pass, and reads one page ahead when asked, so that
/// fetching and decoding the next page overlap the writing of this one. The sync asks only
/// when it knows it will read that page: a pass never makes a call it does not need.
private final class PageReader: Sendable {
    private let client: FlickrClient
    private let perPage: Int
    private let minimumUpload: Date?
    private let next = Mutex<(page: Int, task: Task<PhotoPage, Error>)?>(nil)

    init(client: FlickrClient, perPage: Int, minimumUpload: Date?) {
        self.client = client
        self.perPage = perPage
        self.minimumUpload = minimumUpload
    }

    /// Starts fetching `number` unless it is already on its way. Called from the store's
    /// writer thread as well as from the pass.
    func readAhead(_ number: Int) {
        next.withLock { next in
            guard next?.page != number else { return }
            next?.task.cancel()
            next = (number, Task { try await self.fetch(number) })
        }
    }

    func page(_ number: Int) async throws -> PhotoPage {
        let pending = next.withLock { next -> Task<PhotoPage, Error>? in
            guard let ahead = next, ahead.page == number else { return nil }
            next = nil
            return ahead.task
        }
        if let pending { return try await pending.value }
        return try await fetch(number)
    }

    func cancel() {
        next.withLock { next in
            next?.task.cancel()
            next = nil
        }
    }

    private func fetch(_ number: Int) async throws -> PhotoPage {
        try await client.recentGeotaggedPhotos(page: number, perPage: perPage, minUploadDate: minimumUpload)
    }
}
