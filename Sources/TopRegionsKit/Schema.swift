import Store

/// The product's entities (most declared by their records, in `Records.swift`), their
/// migrations, and the indexes its queries need.
public enum TopRegionsSchema {
    /// Flickr owners, by owner id.
    public static let photographer = PhotographerRecord.entity
    /// Regions, by Flickr place id, with their photo and photographer counts.
    public static let region = RegionRecord.entity
    /// The Flickr places photos were taken in, and what `places.getInfo` said of each.
    public static let place = PlaceRecord.entity
    /// The stored photos.
    public static let photo = PhotoRecord.entity

    /// How many photos a photographer has in a region: kept so counts stay exact as photos
    /// come and go.
    public static let regionPhotographer = Entity("RegionPhotographer", attributes: [
        Attribute("photoCount", .integer),
    ], relationships: [
        .toOne("region", "Region", inverse: "photographerLinks"),
        .toOne("photographer", "Photographer", inverse: "regionLinks"),
    ], indexes: [TableIndex("region_photographer_pair", columns: ["region_id", "photographer_id"], unique: true)])

    /// Recents: photos viewed, with when.
    public static let recent = RecentRecord.entity
    /// Favorites, in the user's order.
    public static let favorite = FavoriteRecord.entity
    /// Users, by name, with the hash of their API token.
    public static let user = UserRecord.entity
    /// Square thumbnails, downloaded once and kept.
    public static let thumbnail = ThumbnailRecord.entity

    /// One row per sync pass: written as it starts, filled in as it ends.
    public static let syncRun = Entity("SyncRun", attributes: [
        Attribute("startedAt", .real),
        Attribute("finishedAt", .real, optional: true),
        Attribute("result", .text),
        Attribute("photosNew", .integer, default: .integer(0)),
        Attribute("photosUpdated", .integer, default: .integer(0)),
        Attribute("placesResolved", .integer, default: .integer(0)),
        Attribute("placesPending", .integer, default: .integer(0)),
        Attribute("placesFailed", .integer, default: .integer(0)),
        Attribute("calls", .integer, default: .integer(0)),
        Attribute("newestUpload", .real, optional: true),
        Attribute("error", .text, optional: true),
    ])

    /// The times of Flickr API calls, for the rate limit across restarts.
    /// Not tracked: a ledger row per API call in the history would be all cost.
    public static let apiCall = Entity("APICall", attributes: [Attribute("at", .real)], indexes: [TableIndex("api_call_at", columns: ["at"])],
                                       tracked: false)

    /// What the gallery remembers of how it was filled (the last sync's image base and rate
    /// limit), by key.
    public static let setting = Entity("Setting", attributes: [Attribute("key", .text, unique: true), Attribute("value", .text)])

    /// Every entity of the store.
    public static let entities = [photographer, region, place, photo, regionPhotographer, recent, favorite, thumbnail, syncRun, apiCall, setting, user]
    /// The store's schema: every entity.
    public static let schema = Schema(entities)

    /// The migrations that bring any older store (or a new file) to this schema, in order.
    public static var migrator: Migrator {
        // v1 created every entity of its day; entities added since come with their own migration.
        var migrator = Migrator.creating(entities.filter { ![setting.name, user.name].contains($0.name) }, name: "topregions.v1")
        // Stores created before foreign keys led by a declared index stopped getting an index
        // of their own (Photo.region_id, RegionPhotographer.region_id, and the photo_id of
        // Recent, Favorite and Thumbnail): one B-tree less per insert. New stores never had them.
        migrator.register("topregions.v2.drop-covered-foreign-key-indexes") { transaction in
            for name in entities.flatMap(\.coveredForeignKeyIndexNames) {
                try transaction.execute("DROP INDEX IF EXISTS \"\(name)\"")
            }
        }
        migrator.register("topregions.v3.settings") { transaction in
            try transaction.execute("CREATE TABLE IF NOT EXISTS \"Setting\" (\"id\" INTEGER PRIMARY KEY, \"key\" TEXT NOT NULL UNIQUE, \"value\" TEXT NOT NULL)")
        }
        migrator.register("topregions.v4.users", UserMigration.apply)
        migrator.register(creditMigration) { transaction in
            for (table, column) in creditColumns where try !UserMigration.columnExists(column, in: table, transaction) {
                try transaction.execute("ALTER TABLE \"\(table)\" ADD COLUMN \"\(column)\" TEXT")
            }
        }
        migrator.register(SearchIndex.migration, SearchIndex.applySQLite)
        return migrator
    }

    /// The migration that adds what credit needs: a photo's licence, its owner's URL alias.
    /// Rows stored before it keep both unknown (null) until a sync sees the photo again.
    static let creditMigration = "topregions.v5.credit"
    static let creditColumns = [("Photo", "license"), ("Photographer", "pathAlias")]
}

/// What is known of a place.
public enum PlaceStatus: String, Sendable {
    /// Not asked yet, or asked and failed for a reason that may pass.
    case pending
    /// Resolved to a region.
    case resolved
    /// Resolved, but the place has no region (a country, a continent).
    case noRegion
    /// Flickr does not know the place (error 2 or 3): never asked again.
    case failed
}
