import Store

/// The product's entities, their migrations, and the indexes its queries need.
public enum TopRegionsSchema {
    public static let photographer = Entity("Photographer", attributes: [
        Attribute("ownerID", .text, unique: true),
        Attribute("name", .text),
    ], relationships: [
        .toMany("photos", "Photo", inverse: "photographer", deleteRule: .nullify),
        .toMany("regionLinks", "RegionPhotographer", inverse: "photographer", deleteRule: .cascade),
    ])

    public static let region = Entity("Region", attributes: [
        Attribute("placeID", .text, unique: true),
        Attribute("name", .text),
        Attribute("country", .text, optional: true),
        Attribute("photographerCount", .integer, default: .integer(0)),
        Attribute("photoCount", .integer, default: .integer(0)),
    ], relationships: [
        .toMany("photos", "Photo", inverse: "region", deleteRule: .nullify),
        .toMany("places", "Place", inverse: "region", deleteRule: .nullify),
        .toMany("photographerLinks", "RegionPhotographer", inverse: "region", deleteRule: .cascade),
    ], indexes: [
        // The top-regions query reads this index in order and stops after the limit.
        TableIndex("region_top", [(column: "photographerCount", collation: nil), (column: "name", collation: .localizedStandard),
                                  (column: "placeID", collation: nil)], descending: ["photographerCount"]),
    ])

    /// A Flickr place: what `places.getInfo` said of it, once asked.
    public static let place = Entity("Place", attributes: [
        Attribute("placeID", .text, unique: true),
        Attribute("status", .text, default: .text(PlaceStatus.pending.rawValue)),
        Attribute("askedAt", .real, optional: true),
    ], relationships: [
        .toOne("region", "Region", inverse: "places"),
        .toMany("photos", "Photo", inverse: "place", deleteRule: .nullify),
    ], indexes: [TableIndex("place_status", columns: ["status"])])

    public static let photo = Entity("Photo", attributes: [
        Attribute("flickrID", .text, unique: true),
        /// The Flickr id as a number, for "then by photo id as a number".
        Attribute("flickrNumber", .integer),
        Attribute("title", .text),
        Attribute("subtitle", .text),
        Attribute("photoDescription", .text),
        Attribute("uploaded", .real, optional: true),
        Attribute("downloaded", .real),
        Attribute("latitude", .real, optional: true),
        Attribute("longitude", .real, optional: true),
        Attribute("secret", .text, optional: true),
        Attribute("server", .text, optional: true),
        Attribute("farm", .integer, optional: true),
        Attribute("originalSecret", .text, optional: true),
        Attribute("originalFormat", .text, optional: true),
    ], relationships: [
        .toOne("photographer", "Photographer", inverse: "photos"),
        .toOne("place", "Place", inverse: "photos"),
        .toOne("region", "Region", inverse: "photos"),
        .toOneInverse("recent", "Recent", inverse: "photo", deleteRule: .cascade),
        .toOneInverse("favorite", "Favorite", inverse: "photo", deleteRule: .cascade),
        .toOneInverse("thumbnail", "Thumbnail", inverse: "photo", deleteRule: .cascade),
    ], indexes: [
        TableIndex("photo_region_title", [(column: "region_id", collation: nil), (column: "title", collation: .localizedStandard),
                                          (column: "flickrNumber", collation: nil)]),
        TableIndex("photo_downloaded", columns: ["downloaded"]),
    ])

    /// How many photos a photographer has in a region: kept so counts stay exact as photos
    /// come and go.
    public static let regionPhotographer = Entity("RegionPhotographer", attributes: [
        Attribute("photoCount", .integer),
    ], relationships: [
        .toOne("region", "Region", inverse: "photographerLinks"),
        .toOne("photographer", "Photographer", inverse: "regionLinks"),
    ], indexes: [TableIndex("region_photographer_pair", columns: ["region_id", "photographer_id"], unique: true)])

    public static let recent = Entity("Recent", attributes: [Attribute("lastViewed", .real)],
                                      relationships: [.toOne("photo", "Photo", inverse: "recent")],
                                      indexes: [TableIndex("recent_photo", columns: ["photo_id"], unique: true),
                                                TableIndex("recent_last_viewed", columns: ["lastViewed"])])

    public static let favorite = Entity("Favorite", attributes: [Attribute("displayOrder", .integer)],
                                        relationships: [.toOne("photo", "Photo", inverse: "favorite")],
                                        indexes: [TableIndex("favorite_photo", columns: ["photo_id"], unique: true),
                                                  TableIndex("favorite_order", columns: ["displayOrder"])])

    public static let thumbnail = Entity("Thumbnail", attributes: [Attribute("bytes", .blob), Attribute("fetchedAt", .real)],
                                         relationships: [.toOne("photo", "Photo", inverse: "thumbnail")],
                                         indexes: [TableIndex("thumbnail_photo", columns: ["photo_id"], unique: true)])

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

    public static let entities = [photographer, region, place, photo, regionPhotographer, recent, favorite, thumbnail, syncRun, apiCall]
    public static let schema = Schema(entities)

    public static var migrator: Migrator {
        var migrator = Migrator.creating(entities, name: "topregions.v1")
        // Stores created before foreign keys led by a declared index stopped getting an index
        // of their own (Photo.region_id, RegionPhotographer.region_id, and the photo_id of
        // Recent, Favorite and Thumbnail): one B-tree less per insert. New stores never had them.
        migrator.register("topregions.v2.drop-covered-foreign-key-indexes") { transaction in
            for name in entities.flatMap(\.coveredForeignKeyIndexNames) {
                try transaction.execute("DROP INDEX IF EXISTS \"\(name)\"")
            }
        }
        return migrator
    }
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
