import Foundation

/// What `status --json` prints and `GET /api/status` answers (a contract: see docs/cli.md).
public struct StatusReport: Encodable, Sendable {
    /// The last sync pass.
    public struct LastSync: Encodable, Sendable {
        /// How the pass ended: `newData`, `noData` or `failed`.
        public var result: String
        /// When the pass started.
        public var startedAt: Date
        /// When the pass ended; null for a pass whose process died.
        public var finishedAt: Date?
        /// Photos the pass stored: `new` and `updated`.
        public var photos: [String: Int64]
        /// Places the pass dealt with: `resolved`, `pending` (still waiting at its end) and `failed`.
        public var places: [String: Int64]
        /// Flickr API calls the pass made, retries included.
        public var calls: Int64
        /// Why the pass failed; null when it did not.
        public var error: String?

        enum CodingKeys: String, CodingKey { case result, startedAt, finishedAt, photos, places, calls, error }
        /// Encodes every key, null ones included, as the contract asks.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(result, forKey: .result)
            try container.encode(startedAt, forKey: .startedAt)
            try container.encode(finishedAt, forKey: .finishedAt)
            try container.encode(photos, forKey: .photos)
            try container.encode(places, forKey: .places)
            try container.encode(calls, forKey: .calls)
            try container.encode(error, forKey: .error)
        }
    }

    /// The store: its path for the CLI, its file name (or `memory`) for the API.
    public var store: String
    /// Photos stored, with a region or not yet.
    public var photos: Int64
    /// Regions that have photos.
    public var regions: Int64
    /// Photographers stored.
    public var photographers: Int64
    /// Places that `places.getInfo` has not answered yet.
    public var pendingPlaces: Int64
    /// The latest sync pass that ended or died; null before the first.
    public var lastSync: LastSync?
    /// A running daemon (one on this host first, when several share a database); null when
    /// none runs.
    public var daemon: Daemon?
    /// The rate limit, and the calls made under it.
    public var rateLimit: RateLimit
    /// How a watcher notices other processes' commits: `inotify`, `polling every 50 ms`,
    /// or `LISTEN/NOTIFY`.
    public var observation: String

    /// A running daemon: its pid on its host.
    public struct Daemon: Encodable, Sendable {
        /// Null when the daemon's database session does not say.
        public var pid: Int32?
        public var host: String?
        enum CodingKeys: String, CodingKey { case pid, host }
        /// Encodes both keys, null ones included.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(pid, forKey: .pid)
            try container.encode(host, forKey: .host)
        }
    }

    /// The rate limit and the calls made under it.
    public struct RateLimit: Encodable, Sendable {
        /// Flickr API calls recorded in the last hour.
        public var callsLastHour: Int64
        /// Calls an hour the last sync ran under; null for none (or not known yet).
        public var limit: Int?
        enum CodingKeys: String, CodingKey { case callsLastHour, limit }
        /// Encodes both keys, a null `limit` included.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(callsLastHour, forKey: .callsLastHour)
            try container.encode(limit, forKey: .limit)
        }
    }

    enum CodingKeys: String, CodingKey { case store, photos, regions, photographers, pendingPlaces, lastSync, daemon, rateLimit, observation }
    /// Encodes every key, null ones included, as the contract asks.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(store, forKey: .store)
        try container.encode(photos, forKey: .photos)
        try container.encode(regions, forKey: .regions)
        try container.encode(photographers, forKey: .photographers)
        try container.encode(pendingPlaces, forKey: .pendingPlaces)
        try container.encode(lastSync, forKey: .lastSync)
        try container.encode(daemon, forKey: .daemon)
        try container.encode(rateLimit, forKey: .rateLimit)
        try container.encode(observation, forKey: .observation)
    }

    /// The report of `status` for the store at `store` (a path, or what the API shows);
    /// `showingHosts` false leaves the daemon's host out (null), as the API does: a host's
    /// name is not for every client.
    public init(_ status: GalleryStatus, store: String, showingHosts: Bool = true) {
        self.store = store
        photos = status.photos
        regions = status.regions
        photographers = status.photographers
        pendingPlaces = status.pendingPlaces
        lastSync = status.lastSync.map { run in
            LastSync(result: run.result, startedAt: run.startedAt, finishedAt: run.finishedAt,
                     photos: ["new": run.photosNew, "updated": run.photosUpdated],
                     places: ["resolved": run.placesResolved, "pending": run.placesPending, "failed": run.placesFailed], calls: run.calls, error: run.error)
        }
        daemon = RunningDaemon.shown(of: status.daemons).map { Daemon(pid: $0.pid, host: showingHosts ? $0.host : nil) }
        rateLimit = RateLimit(callsLastHour: status.callsLastHour, limit: status.rateLimit)
        observation = status.observation
    }
}
