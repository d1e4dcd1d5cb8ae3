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
    /// The longest a pass spends asking about places: a server whose lookups hang cannot
    /// hold the sync lock for longer. Places not answered by then wait for the next pass.
    public var placeLookupDeadline: TimeInterval = 120
    /// Upload dates later than the pass's start by more than this are not believed: they do
    /// not move the next pass's window (a server's dates are data, not a clock).
    public var futureDateTolerance: TimeInterval = 86_400
    /// A pass that has stored this many new photos, and may still read more photos than
    /// the store holds, loads the rest with Photo's indexes dropped and builds them after
    /// (`Store.deferIndexes(of:)`): SQLite builds an index over rows already stored
    /// faster than it keeps one up to date row by row, but the build covers the whole
    /// table, hence the two conditions. Meanwhile, queries by region scan the table.
    /// Nil: never. (`topregions sync`, at most 40 pages of 500, never defers.)
    public var bulkLoadMinimumPhotos: Int? = 10_000
    /// When the pass's clock reads; tests set it.
    public var now: @Sendable () -> Date = { Date() }
    /// Told what the pass is doing as it goes (pages read, places asked, waits), for a
    /// progress line or a log; called from the pass's tasks, so it must be quick.
    public var progress: (@Sendable (SyncProgress) -> Void)?

    /// Options for a pass of at most `pages` pages of `perPage` photos, the rest default.
    public init(pages: Int = 8, perPage: Int = 500) {
        self.pages = pages
        self.perPage = perPage
    }
}

/// What a pass is doing, as it goes.
public enum SyncProgress: Sendable, Equatable {
    /// Pages read so far (of how many there may be), and photos stored (new or updated).
    case pages(read: Int, of: Int, photosStored: Int)
    /// Places answered so far, of those the pass asks about.
    case places(answered: Int, of: Int)
    /// The rate limit holds the next call back this long (the limit: calls an hour).
    case waitingForRateLimit(seconds: Double, limit: Int)
    /// Another process holds the sync lock; the pass waits for it.
    case waitingForLock(pid: Int32?)
}

/// Why a pass failed, in a form scripts can act on.
public struct SyncFailure: Sendable, Equatable {
    /// Trying again later may help (a connection refused, a timeout, HTTP 429 or 5xx, Flickr
    /// being unavailable); permanent otherwise (a bad key, a bad request, a store that
    /// cannot be written).
    public var isTemporary: Bool
    /// What went wrong, in words.
    public var message: String
    /// The host or file the failure came from.
    public var source: String?
    /// What to do next, when the message does not say.
    public var hint: String?
}

/// What a pass did, like iOS's background fetch result, with counts.
public struct SyncResult: Sendable, Equatable {
    /// Whether the pass brought anything, as iOS's background fetch results say it.
    public enum Outcome: String, Sendable {
        /// Photos were stored or changed, or places resolved.
        case newData
        /// The pass finished and nothing changed.
        case noData
        /// The pass failed; `failure` says why.
        case failed
    }

    /// Whether the pass brought anything, or failed.
    public var outcome: Outcome
    /// Photos stored for the first time.
    public var photosNew = 0
    /// Photos already stored whose stored values changed.
    public var photosUpdated = 0
    /// Places Flickr answered for good, with a region or with none.
    public var placesResolved = 0
    /// Places in the store still waiting for an answer when the pass ended.
    public var placesPending = 0
    /// Places Flickr does not know (errors 2 and 3), not to be asked again.
    public var placesFailed = 0
    /// API calls the pass made, retries included.
    public var calls = 0
    /// How long the pass took, by its clock.
    public var seconds: Double = 0
    /// Records left out because they could not be photos (no id, no owner).
    public var recordsSkipped = 0
    /// Why, for the first few of them ("page 2: photo 7 has no owner").
    public var skippedRecords: [String] = []
    /// Photos whose upload date lay too far in the future to move the next pass's window.
    public var futureDatesIgnored = 0
    /// Places left pending because the pass's time for lookups ran out.
    public var placesLeftAtDeadline = 0
    /// Place lookups that failed for a reason that may pass (tried again next pass).
    public var placeLookupsFailed = 0
    /// Places not asked about because lookups failed many times in a row (the server
    /// refusing them); asked next pass.
    public var placesLeftAfterFailures = 0
    /// The first such failure.
    public var placeLookupFailure: String?
    /// Why the pass failed, when it did.
    public var error: String?
    /// The failure, classified, when the pass failed.
    public var failure: SyncFailure?
    /// What a person should know of a pass that did not fail: records skipped, dates not
    /// believed, lookups cut short.
    public var notes: [String] = []
}

extension Gallery {
    /// Pages stored in one transaction at most (each page whole or not at all). A commit
    /// writes every index page its rows touched, so few large commits are much cheaper than
    /// many small ones. 16 keeps one transaction short even in a large store (other
    /// writers wait for it) and the pages read past a catch-up's end few.
    static let pagesPerTransaction = 16

    /// A pass's failure, with whether it may pass and what to do.
    static func failure(_ error: Error, client: FlickrClient) -> SyncFailure {
        let host = client.configuration.endpoint.host
        if error is CancellationError {
            return SyncFailure(isTemporary: true, message: "cancelled: the process was told to stop", source: nil,
                               hint: "run it again: the next pass reads on from what this one stored")
        }
        if let error = error as? FlickrError {
            switch error.kind {
            case .api(100):
                return SyncFailure(isTemporary: false, message: "Flickr says the API key is invalid (\(error))", source: host,
                                   hint: "set FLICKR_API_KEY_FILE or --api-key-file to a valid key")
            case .notInSampleData:
                return SyncFailure(isTemporary: false, message: "\(error)", source: "SampleData", hint: nil)
            default:
                return SyncFailure(isTemporary: error.isTransient, message: "\(error)", source: host,
                                   hint: error.isTransient ? "try again later (a daemon tries again at its next pass)" : nil)
            }
        }
        if let error = error as? RateLedgerError {
            return SyncFailure(isTemporary: error.isTemporary, message: "\(error)", source: "the rate ledger",
                               hint: error.isTemporary ? "try again later (a daemon tries again at its next pass)" : nil)
        }
        if let error = error as? GalleryError {
            switch error.kind {
            case .busy, .syncRunning, .storeUnreachable:
                return SyncFailure(isTemporary: true, message: error.message, source: "the store", hint: error.hint ?? "try again later")
            default:
                return SyncFailure(isTemporary: false, message: error.message, source: "the store", hint: error.hint)
            }
        }
        if let error = error as? StoreError {
            return SyncFailure(isTemporary: error.resultCode?.primary == .busy, message: "\(error)", source: error.sql == nil ? nil : "the store",
                               hint: error.resultCode?.primary == .full ? "free some disk space" : nil)
        }
        return SyncFailure(isTemporary: false, message: "\(error)", source: nil, hint: nil)
    }

    /// Sentences for what a pass left out or did not believe.
    static func notes(_ result: SyncResult, options: SyncOptions) -> [String] {
        var notes: [String] = []
        if result.recordsSkipped > 0 {
            notes.append("\(result.recordsSkipped) \(result.recordsSkipped == 1 ? "record was" : "records were") skipped: no photo id or owner, or one that is not a Flickr id")
        }
        if result.futureDatesIgnored > 0 {
            notes.append("\(result.futureDatesIgnored) upload \(result.futureDatesIgnored == 1 ? "date lies" : "dates lie") in the future; not used for the next pass's window")
        }
        if result.placesLeftAfterFailures > 0 {
            notes.append("place lookups stopped after \(PlaceResolution.failuresBeforeStopping) failed in a row; \(result.placesLeftAfterFailures) \(result.placesLeftAfterFailures == 1 ? "place waits" : "places wait") for the next pass")
        }
        if result.placeLookupsFailed > 0 {
            notes.append("\(result.placeLookupsFailed) place \(result.placeLookupsFailed == 1 ? "lookup" : "lookups") failed and will be tried again next pass; the first: \(result.placeLookupFailure ?? "unknown")")
        }
        if result.placesLeftAtDeadline > 0 {
            notes.append("place lookups stopped after \(Int(options.placeLookupDeadline)) s; \(result.placesLeftAtDeadline) \(result.placesLeftAtDeadline == 1 ? "place waits" : "places wait") for the next pass")
        }
        return notes
    }

    /// Thrown by a pass whose task was cancelled, after it recorded `result` (failed,
    /// cancelled, with what it stored and the calls it made). A cancellation before the pass
    /// began (while it waited for the sync lock) is a `CancellationError`.
    public struct SyncStopped: Error, CustomStringConvertible {
        public let result: SyncResult
        public var description: String { result.error ?? "cancelled: the process was told to stop" }
    }

    /// Why a pass's `SyncRun` row says `failed` until the pass records its result: a
    /// process that dies mid-pass leaves it so, and the next pass knows to read on.
    public static let unfinishedPassError = "the pass did not finish: its process ended before it recorded a result"
}

extension GallerySyncing {
    private static var pagesPerTransaction: Int { Gallery.pagesPerTransaction }

    /// One sync pass: recent geotagged photos, page by page, then the places not known yet,
    /// asked once each, then photos attached to their regions. Holds the store's sync lock
    /// for the pass: throws `SyncLock.Busy` (with the holder's pid) when another pass runs.
    ///
    /// Pages are stored in groups, each in one transaction (each page whole or not at all).
    /// A first pass (no pass has succeeded yet) reads every page, so it groups
    /// `pagesPerTransaction` pages from the start. A pass that stops once it reaches a page
    /// of photos it already has starts with one page and doubles its groups (2, 4, 8, up
    /// to `pagesPerTransaction`) while every page holds new photos: a pass that is caught up
    /// at once asks for one page, and a long catch-up pays few commits, for at most about
    /// two groups' worth of pages read past the point where it catches up.
    ///
    /// `holding`: the sync lock, taken already by the caller (who then knows, before the
    /// pass begins, that it runs); the pass releases it when it ends.
    public func sync(client: FlickrClient, options: SyncOptions = SyncOptions(), waitForLock: Bool = false,
                     holding held: (any SyncLockHold)? = nil) async throws -> SyncResult {
        let lock: any SyncLockHold
        if let held {
            lock = held
        } else {
            do {
                lock = try await acquireSyncLock(wait: waitForLock) { busy in options.progress?(.waitingForLock(pid: busy.pid)) }
            } catch let busy as SyncLock.Busy {
                throw GalleryError(.syncRunning(pid: busy.pid), busy.description)
            }
        }
        defer { lock.release() }
        let started = options.now()
        let callsBefore = client.statistics.calls
        var result = SyncResult(outcome: .noData)
        // A pass after one that failed or died reads on past pages it knows: the pages
        // beyond where that pass stopped were never read.
        let (previous, resumesUnfinishedPass) = try await previousPasses()
        let run = try await recordStart(started)
        // The window never starts after the previous pass did: a window poisoned by a date
        // from the future (stored before dates were checked) heals. Starting earlier only
        // reads photos again, which are known by their ids.
        let previousNewest = previous.flatMap { pass in
            pass.newestUpload.flatMap { $0.timeIntervalSince1970.isFinite ? min($0, pass.startedAt) : nil }
        }
        let minimumUpload = previousNewest.map { $0.addingTimeInterval(-options.overlap) }
        var newestUpload = previousNewest
        let latestBelievable = started.addingTimeInterval(options.futureDateTolerance)
        var pageError: Error?
        var namedThisPass = Set<String>()
        var bulkLoad = BulkLoad.notYet
        do {
            // Indexes a pass that died during its bulk load left unbuilt (we hold the lock:
            // no other pass is loading).
            try await buildDeferredIndexes()
            let lastPage = max(1, options.pages)
            let reader = PageReader(client: client, perPage: options.perPage, minimumUpload: minimumUpload)
            defer { reader.cancel() }
            var next = 1
            var group = previous == nil ? Self.pagesPerTransaction : 1
            while next <= lastPage {
                let batch = await reader.pages(from: next, through: lastPage, atMost: group)
                next += batch.pages.count
                if !batch.pages.isEmpty {
                    let following = next, goesOn = !batch.isLast
                    let stored = try await storePages(batch.pages, downloadedAt: started, namedThisPass: &namedThisPass, lock: lock) {
                        // A page holds a new photo: the pass will read the next one.
                        if goesOn { reader.readAhead(following...following) }
                    }
                    result.photosNew += stored.new
                    result.photosUpdated += stored.updated
                    options.progress?(.pages(read: next - 1, of: max(next - 1, min(lastPage, batch.pages.last?.pages ?? lastPage)),
                                             photosStored: result.photosNew + result.photosUpdated))
                    let skipped = batch.pages.flatMap(\.skipped)
                    result.recordsSkipped += skipped.count
                    result.skippedRecords += skipped.prefix(max(0, 10 - result.skippedRecords.count)).map(\.description)
                    let dates = batch.pages.flatMap(\.photos).compactMap(\.dateUpload)
                    let believable = dates.filter { $0 <= latestBelievable }
                    result.futureDatesIgnored += dates.count - believable.count
                    if let newest = believable.max() { newestUpload = max(newestUpload ?? newest, newest) }
                    // Caught up with the previous pass: older pages hold nothing new. (After
                    // a failed or first pass, keep going: the pages were never all read.)
                    if previous != nil && !resumesUnfinishedPass && stored.reachedKnownPage { break }
                    group = min(group * 2, Self.pagesPerTransaction)
                    if bulkLoad == .notYet && !batch.isLast && batch.readError == nil {
                        bulkLoad = try await decideBulkLoad(newThisPass: result.photosNew, pagesLeft: lastPage - next + 1, options: options)
                    }
                }
                // A page that cannot be read ends the reading, not the pass: what was stored
                // still gets its places.
                if let readError = batch.readError {
                    pageError = readError
                    break
                }
                if batch.isLast { break }
            }
            // Before the places: attaching photos to regions finds them by place.
            if bulkLoad == .loading { try await buildDeferredIndexes() }
            // A pass that lost its lock asks the source nothing more.
            try lock.confirm()
            let places = try await PlaceResolution.resolvePending(in: writableStore, client: client, options: options,
                                                                  beforeCommit: { try lock.confirm() })
            result.placesResolved = places.resolved
            result.placesFailed = places.failed
            result.placesLeftAtDeadline = places.leftAtDeadline
            result.placeLookupsFailed = places.failedForNow
            result.placesLeftAfterFailures = places.leftAfterFailures
            result.placeLookupFailure = places.firstFailure
            if let pageError { throw pageError }
            // Told to stop during the place lookups (which leave what they did not ask for
            // the next pass): on record as a pass that did not finish.
            try Task.checkCancellation()
        } catch {
            result.outcome = .failed
            result.error = error is CancellationError ? "cancelled: the process was told to stop" : "\(error)"
            result.failure = Gallery.failure(error, client: client)
            // The pages stored before the failure are indexed too; if this fails as well,
            // the next pass builds them first.
            if bulkLoad == .loading { try? await buildDeferredIndexes() }
        }
        result.placesPending = try await writableStore.reading { Int(try $0.scalar("SELECT count(*) FROM Place WHERE status = 'pending'")?.int64 ?? 0) }
        result.calls = client.statistics.calls - callsBefore
        if result.outcome != .failed {
            result.outcome = result.photosNew + result.photosUpdated + result.placesResolved > 0 ? .newData : .noData
        }
        result.notes = Gallery.notes(result, options: options)
        result.seconds = options.now().timeIntervalSince(started)
        try await record(result, run: run, newestUpload: result.outcome == .failed ? previousNewest : newestUpload,
                         finished: options.now())
        // A pass stopped by its caller (a process told to stop) says so, after its record.
        if Task.isCancelled { throw Gallery.SyncStopped(result: result) }
        return result
    }

    /// One pass from `source` (see `sync(client:options:waitForLock:)`): calls are counted
    /// in the gallery's ledger, rate limit or not, and the source's image base and limit are
    /// remembered for the commands that come later (images, status).
    public func sync(from source: GallerySource, options: SyncOptions = SyncOptions(), waitForLock: Bool = false,
                     holding held: (any SyncLockHold)? = nil) async throws -> SyncResult {
        // A pass that fails before it begins still lets the lock go.
        var handedOver = false
        defer { if !handedOver { held?.release() } }
        let progress = options.progress
        let client = try source.client(ledger: source.ledger(orElse: callLedger)) { seconds, limit in
            progress?(.waitingForRateLimit(seconds: seconds, limit: limit))
        }
        try await setSettings([.imageBase: source.recordedImageBase, .rateLimit: source.rateLimit.map(String.init) ?? "none"])
        handedOver = true
        return try await sync(client: client, options: options, waitForLock: waitForLock, holding: held)
    }

    /// Decides, once the pass has stored enough new photos, whether it loads the rest with
    /// Photo's indexes dropped (and drops them if so).
    private func decideBulkLoad(newThisPass: Int, pagesLeft: Int, options: SyncOptions) async throws -> BulkLoad {
        guard let minimum = options.bulkLoadMinimumPhotos, newThisPass >= minimum else { return .notYet }
        let held = try await writableStore.reading { try $0.scalar("SELECT count(*) FROM Photo")?.int64 ?? 0 }
        guard pagesLeft > 0, Int64(pagesLeft) * Int64(options.perPage) >= held else { return .declined }
        return try await deferPhotoIndexes() ? .loading : .declined
    }

    /// Stores pages in one transaction, each with `PhotoIngest`; `holdsNewPhotos` is called
    /// (on the writer's thread) when a page holds a photo not stored yet.
    /// The lock is confirmed last, just before the commit: a pass that lost it stores
    /// nothing more.
    private func storePages(_ pages: [PhotoPage], downloadedAt: Date, namedThisPass: inout Set<String>, lock: any SyncLockHold,
                            holdsNewPhotos: @escaping @Sendable () -> Void) async throws -> StoredPages {
        let names = namedThisPass
        let (outcome, named) = try await writableStore.writing { transaction in
            var named = names
            var outcome = StoredPages()
            var renamed = Set<Int64>()
            for page in pages {
                let stored = try PhotoIngest.store(page.photos, downloadedAt: downloadedAt, namedThisPass: &named, in: transaction,
                                                   holdsNewPhotos: holdsNewPhotos)
                outcome.new += stored.new
                outcome.updated += stored.updated
                outcome.reachedKnownPage = outcome.reachedKnownPage || stored.allKnown
                renamed.formUnion(stored.renamedPhotographers)
            }
            // A renamed photographer's photos are found under the new name.
            try SearchIndex.refresh(photographerIDs: Array(renamed), in: transaction)
            try lock.confirm()
            return (outcome, named)
        }
        namedThisPass = named
        return outcome
    }

    /// The latest pass that did not fail, and whether the latest pass of all failed (or died).
    private func previousPasses() async throws -> (lastSuccessful: (startedAt: Date, newestUpload: Date?)?, latestFailed: Bool) {
        try await writableStore.reading { context in
            let latestFailed = try context.scalar("SELECT result FROM SyncRun ORDER BY startedAt DESC, id DESC LIMIT 1")?.string == "failed"
            guard let row = try context.rows("SELECT startedAt, newestUpload FROM SyncRun WHERE result != 'failed' ORDER BY startedAt DESC, id DESC LIMIT 1").first else {
                return (nil, latestFailed)
            }
            // By place: PostgreSQL names the columns in lower case.
            guard let startedAt = row[0].double else { throw GalleryError(.storeUnavailable, "a SyncRun row has no start time") }
            return ((Date(timeIntervalSince1970: startedAt), row[1].double.map(Date.init(timeIntervalSince1970:))),
                    latestFailed)
        }
    }

    /// Inserts the pass's `SyncRun` row, `failed` and unfinished until `record`; returns its id.
    private func recordStart(_ started: Date) async throws -> Int64 {
        try await writableStore.writing { transaction in
            let p = transaction.dialect.parameter
            let id = try transaction.scalar("INSERT INTO SyncRun (startedAt, result, error) VALUES (\(p(1)), 'failed', \(p(2))) RETURNING id",
                                            [.real(started.timeIntervalSince1970), .text(Gallery.unfinishedPassError)])?.int64
            guard let id else { throw GalleryError(.storeUnavailable, "the store gave no id for the pass's SyncRun row") }
            return id
        }
    }

    private func record(_ result: SyncResult, run: Int64, newestUpload: Date?, finished: Date) async throws {
        try await writableStore.writing { transaction in
            let p = transaction.dialect.parameter
            try transaction.execute("""
                UPDATE SyncRun SET finishedAt = \(p(1)), result = \(p(2)), photosNew = \(p(3)), photosUpdated = \(p(4)), placesResolved = \(p(5)),
                                   placesPending = \(p(6)), placesFailed = \(p(7)), calls = \(p(8)), newestUpload = \(p(9)), error = \(p(10))
                WHERE id = \(p(11))
                """, [.real(finished.timeIntervalSince1970), .text(result.outcome.rawValue),
                      .integer(Int64(result.photosNew)), .integer(Int64(result.photosUpdated)), .integer(Int64(result.placesResolved)),
                      .integer(Int64(result.placesPending)), .integer(Int64(result.placesFailed)), .integer(Int64(result.calls)),
                      newestUpload.map { .real($0.timeIntervalSince1970) } ?? .null, result.error.map { .text($0) } ?? .null, .integer(run)])
        }
    }
}

/// Where a pass stands with `SyncOptions.bulkLoadMinimumPhotos`.
private enum BulkLoad {
    /// Too few new photos so far to decide.
    case notYet
    /// Decided against: Photo's indexes stay.
    case declined
    /// Photo's indexes are dropped; they are built before the places are resolved.
    case loading
}

/// What storing a group of pages did.
private struct StoredPages: Sendable {
    var new = 0
    var updated = 0
    /// One of the pages held only photos already stored.
    var reachedKnownPage = false
}

/// Reads `photos.search` pages for a pass, and reads pages ahead when asked, so that
/// fetching and decoding overlap the writing. The sync asks only for pages it knows it
/// will read: a pass never makes a call it does not need.
private final class PageReader: Sendable {
    private let client: FlickrClient
    private let perPage: Int
    private let minimumUpload: Date?
    private let ahead = Mutex<[Int: Task<PhotoPage, Error>]>([:])

    init(client: FlickrClient, perPage: Int, minimumUpload: Date?) {
        self.client = client
        self.perPage = perPage
        self.minimumUpload = minimumUpload
    }

    /// Starts fetching the pages in `numbers` that are not already on their way. Called
    /// from the store's writer thread as well as from the pass.
    func readAhead(_ numbers: ClosedRange<Int>) {
        ahead.withLock { ahead in
            for number in numbers where ahead[number] == nil {
                ahead[number] = Task { try await self.fetch(number) }
            }
        }
    }

    /// Pages read in order from `first`: up to `atMost` of them, reading ahead as far as
    /// that once the first page tells how many there are. Stops at the last page, and at a
    /// page that fails to read, returning the pages before it and the error.
    func pages(from first: Int, through lastPage: Int, atMost: Int) async -> (pages: [PhotoPage], readError: Error?, isLast: Bool) {
        var pages: [PhotoPage] = []
        var number = first
        while pages.count < atMost {
            let photos: PhotoPage
            do {
                photos = try await page(number)
            } catch {
                return (pages, error, true)
            }
            pages.append(photos)
            guard !photos.photos.isEmpty && number < photos.pages && number < lastPage else { return (pages, nil, true) }
            if atMost > 1 { readAhead((number + 1)...min(photos.pages, lastPage, number + atMost)) }
            number += 1
        }
        return (pages, nil, false)
    }

    private func page(_ number: Int) async throws -> PhotoPage {
        let pending = ahead.withLock { $0.removeValue(forKey: number) }
        guard let pending else { return try await fetch(number) }
        // A page read ahead is a task of its own: the pass's cancellation (a daemon told to
        // stop while pages wait for the rate limit) must reach it and the pages after it.
        return try await withTaskCancellationHandler { try await pending.value } onCancel: {
            pending.cancel()
            cancel()
        }
    }

    func cancel() {
        ahead.withLock { ahead in
            for task in ahead.values { task.cancel() }
            ahead.removeAll()
        }
    }

    private func fetch(_ number: Int) async throws -> PhotoPage {
        try await client.recentGeotaggedPhotos(page: number, perPage: perPage, minUploadDate: minimumUpload)
    }
}
