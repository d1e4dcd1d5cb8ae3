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
    /// The daemons keeping the store fresh: a file's one, on this host; a database's, on
    /// any host (`PostgresDaemonPresence`).
    public var daemons: [RunningDaemon] = []
    /// How a watcher of this store notices other processes' commits: `inotify`, `polling
    /// every 50 ms`, or `LISTEN/NOTIFY`.
    public var observation: String = ""
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

    /// The columns `init(_:)` reads, in its order.
    static let columns = "result, startedAt, finishedAt, photosNew, photosUpdated, placesResolved, placesPending, placesFailed, calls, error"

    /// A row of `columns`.
    init(_ row: [SQLValue]) {
        let value = { (index: Int) in row.indices.contains(index) ? row[index] : .null }
        result = value(0).string ?? ""
        startedAt = Date(timeIntervalSince1970: value(1).double ?? 0)
        finishedAt = value(2).double.map(Date.init(timeIntervalSince1970:))
        photosNew = value(3).int64 ?? 0
        photosUpdated = value(4).int64 ?? 0
        placesResolved = value(5).int64 ?? 0
        placesPending = value(6).int64 ?? 0
        placesFailed = value(7).int64 ?? 0
        calls = value(8).int64 ?? 0
        error = value(9).string
    }
}

extension Gallery {
    /// The store's counts and its last sync, read in one transaction so they agree.
    public func status(now: Date = Date()) throws -> GalleryStatus {
        let syncRunning = SyncLock.holder(of: store) != nil
        let daemons = daemonPID.map { [RunningDaemon(pid: $0, host: RunningDaemon.thisHost)] } ?? []
        var status = try store.read { context in
            try Self.status(now: now, syncRunning: syncRunning, daemons: daemons) { try context.rows($0).map(\.values) }
        }
        status.observation = store.observationDescription
        return status
    }

    /// The status through `rows`, which runs a query without parameters on either kind of
    /// store (names unquoted, values written in: a status's only values are a status name
    /// and a time).
    static func status(now: Date, syncRunning: Bool, daemons: [RunningDaemon], rows: (String) throws -> [[SQLValue]]) throws -> GalleryStatus {
        func count(_ sql: String) throws -> Int64 { try rows(sql).first?.first?.int64 ?? 0 }
        let hourAgo = String(now.timeIntervalSince1970 - 3600)
        let rateSetting = try rows("SELECT value FROM Setting WHERE key = '\(SettingKey.rateLimit.rawValue)'").first?.first?.string
        return GalleryStatus(
            photos: try count("SELECT count(*) FROM Photo"),
            regions: try count("SELECT count(*) FROM Region WHERE photoCount > 0"),
            photographers: try count("SELECT count(*) FROM Photographer"),
            pendingPlaces: try count("SELECT count(*) FROM Place WHERE status = '\(PlaceStatus.pending.rawValue)'"),
            callsLastHour: try count("SELECT count(*) FROM APICall WHERE at >= \(hourAgo)"),
            lastSync: try rows("SELECT \(SyncRunSummary.columns) FROM SyncRun ORDER BY startedAt DESC, id DESC LIMIT 2")
                .first { !(syncRunning && $0[2].isNull) }.map(SyncRunSummary.init),
            rateLimit: rateSetting.flatMap(Int.init), rateLimitIsNone: rateSetting == "none", daemons: daemons)
    }
}
