import Foundation
import Store

/// What a store holds and what its last sync did: `topregions status`, for a program.
public struct GalleryStatus: Sendable, Equatable {
    /// Photos stored, with a region or not yet.
    public var photos: Int64
    /// Regions that have photos (a region outlives its photos while a place still names it).
    public var regions: Int64
    /// Photographers stored.
    public var photographers: Int64
    /// Places that `places.getInfo` has not answered yet.
    public var pendingPlaces: Int64
    /// Flickr API calls recorded in the hour before the status was taken.
    public var callsLastHour: Int64
    /// The latest sync pass that ended, failed or not, or that died (failed, its error
    /// `Gallery.unfinishedPassError`); nil before the first. A pass still running is not it.
    public var lastSync: SyncRunSummary?
    /// The rate limit the last sync ran under, calls an hour; nil for none, or before the
    /// first sync that recorded it.
    public var rateLimit: Int?
    /// Whether a sync recorded that it ran without a rate limit.
    public var rateLimitIsNone: Bool
}

/// One row of `SyncRun`: a sync pass as it was recorded.
public struct SyncRunSummary: Sendable, Equatable {
    /// `SyncResult.Outcome`'s raw value: `newData`, `noData` or `failed`.
    public var result: String
    /// When the pass started.
    public var startedAt: Date
    /// Nil if its process died before it finished.
    public var finishedAt: Date?
    /// Photos the pass stored for the first time.
    public var photosNew: Int64
    /// Photos already stored that the pass changed.
    public var photosUpdated: Int64
    /// Places Flickr answered for good during the pass.
    public var placesResolved: Int64
    /// Places still waiting for an answer when the pass ended.
    public var placesPending: Int64
    /// Places Flickr did not know, not to be asked again.
    public var placesFailed: Int64
    /// API calls the pass made, retries included.
    public var calls: Int64
    /// Why the pass failed; nil when it did not.
    public var error: String?

    init(_ row: Row) {
        result = row["result"].string ?? ""
        startedAt = Date(timeIntervalSince1970: row["startedAt"].double ?? 0)
        finishedAt = row["finishedAt"].double.map(Date.init(timeIntervalSince1970:))
        photosNew = row["photosNew"].int64 ?? 0
        photosUpdated = row["photosUpdated"].int64 ?? 0
        placesResolved = row["placesResolved"].int64 ?? 0
        placesPending = row["placesPending"].int64 ?? 0
        placesFailed = row["placesFailed"].int64 ?? 0
        calls = row["calls"].int64 ?? 0
        error = row["error"].string
    }
}

extension Gallery {
    /// The store's counts and its last sync, read in one transaction so they agree.
    public func status(now: Date = Date()) throws -> GalleryStatus {
        let syncRunning = SyncLock.holder(of: store) != nil
        let rateSetting = try setting(.rateLimit)
        return try store.read { context in
            func count(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64 {
                try context.scalar(sql, arguments)?.int64 ?? 0
            }
            return GalleryStatus(
                photos: try count("SELECT count(*) FROM Photo"),
                regions: try count("SELECT count(*) FROM Region WHERE photoCount > 0"),
                photographers: try count("SELECT count(*) FROM Photographer"),
                pendingPlaces: try count("SELECT count(*) FROM Place WHERE status = ?", [.text(PlaceStatus.pending.rawValue)]),
                callsLastHour: try count("SELECT count(*) FROM APICall WHERE at >= ?", [.real(now.timeIntervalSince1970 - 3600)]),
                lastSync: try context.rows("SELECT * FROM SyncRun ORDER BY startedAt DESC, id DESC LIMIT 2")
                    .first { !(syncRunning && $0["finishedAt"].double == nil) }.map(SyncRunSummary.init),
                rateLimit: rateSetting.flatMap(Int.init), rateLimitIsNone: rateSetting == "none")
        }
    }
}
