import Foundation
import Store

/// What a prune removed.
public struct PruneResult: Sendable, Equatable {
    /// Photos deleted.
    public var photos = 0
    /// Photographers deleted, left with no photos.
    public var photographers = 0
    /// Places deleted, left with no photos.
    public var places = 0
    /// Regions deleted, left with no photos and no place.
    public var regions = 0
}

extension Gallery {
    /// How long a photo is kept after its download unless asked otherwise: seven days.
    public static let defaultRetention: TimeInterval = 7 * 24 * 3600
}

extension GalleryWriting {
    /// Deletes photos downloaded more than `retention` ago, except those in Recents or
    /// Favorites, then the photographers, places and regions left with no photos, counts
    /// kept exact, in one transaction.
    @discardableResult
    public func prune(olderThan retention: TimeInterval = Gallery.defaultRetention, now: Date = Date()) throws -> PruneResult {
        try writableStore.write { transaction in
            var result = PruneResult()
            let cutoff = now.addingTimeInterval(-retention).timeIntervalSince1970
            let doomed = try transaction.rows("""
                SELECT p.id, p.region_id, p.photographer_id FROM Photo p
                WHERE p.downloaded < \(transaction.dialect.parameter(1))
                  AND NOT EXISTS (SELECT 1 FROM Recent r WHERE r.photo_id = p.id)
                  AND NOT EXISTS (SELECT 1 FROM Favorite f WHERE f.photo_id = p.id)
                """, [.real(cutoff)])
            let memberships = doomed.compactMap { row in
                row[1].int64.map { RegionCounts.Membership(region: $0, photographer: row[2].int64) }
            }
            try RegionCounts.detach(memberships, in: transaction)
            result.photos = try transaction.delete("Photo", ids: doomed.compactMap { $0[0].int64 })
            let idle = { (sql: String) in try transaction.rows(sql).compactMap { $0[0].int64 } }
            result.photographers = try transaction.delete("Photographer", ids: try idle(
                "SELECT id FROM Photographer g WHERE NOT EXISTS (SELECT 1 FROM Photo p WHERE p.photographer_id = g.id)"))
            result.places = try transaction.delete("Place", ids: try idle(
                "SELECT id FROM Place l WHERE NOT EXISTS (SELECT 1 FROM Photo p WHERE p.place_id = l.id)"))
            result.regions = try transaction.delete("Region", ids: try idle(
                "SELECT id FROM Region r WHERE NOT EXISTS (SELECT 1 FROM Photo p WHERE p.region_id = r.id) AND NOT EXISTS (SELECT 1 FROM Place l WHERE l.region_id = r.id)"))
            return result
        }
    }
}

extension Gallery {
    /// Recomputes every count from the photos and runs SQLite's integrity and foreign key
    /// checks: the problems found, as sentences (empty when the store is sound). Indexes left unbuilt by
    /// a first sync that died during its bulk load are one, unless a sync is running (it
    /// builds them).
    public func check() throws -> [String] {
        var problems = try store.read { context in
            let rows = { (sql: String) in try context.rows(sql).map(\.values) }
            return try RegionCounts.check(rows: rows) + (try Self.photosAwayFromTheirPlaces(rows: rows))
        }
        let integrity = try store.integrityCheck()
        if integrity != ["ok"] { problems += integrity.map { "integrity: \($0)" } }
        problems += try store.foreignKeyViolations().map { "foreign key: \(try describe($0))" }
        let unbuilt: [String]
        do { unbuilt = try store.deferredIndexNames() } catch let error as StoreError {
            return problems + [error.message]  // the words, not the program's SQL
        }
        if !unbuilt.isEmpty && SyncLock.holder(of: store) == nil {
            problems.append("\(unbuilt.count) indexes dropped for a bulk load were not built again (the next sync builds them): "
                            + unbuilt.joined(separator: ", "))
        }
        return problems
    }

    /// Photos whose region is not their place's: a resolved place's region, none for any
    /// other place or no place.
    static func photosAwayFromTheirPlaces(rows query: (String) throws -> [[SQLValue]]) throws -> [String] {
        let rows = try query("""
            SELECT p.flickrID, count(*) OVER () FROM Photo p LEFT JOIN Place pl ON pl.id = p.place_id
            WHERE p.region_id IS DISTINCT FROM (CASE WHEN pl.status = 'resolved' THEN pl.region_id END)
            ORDER BY p.id LIMIT 5
            """)
        guard let total = rows.first?[1].int64 else { return [] }
        let examples = rows.compactMap { $0[0].string }.joined(separator: ", ")
        return ["\(total) \(total == 1 ? "photo's region is" : "photos' regions are") not their place's region (\(examples)\(total > 5 ? ", …" : ""))"]
    }

    /// A dangling reference in words a user can act on: a photo by its Flickr id (its
    /// store row id means nothing outside the store), other rows by table and id.
    private func describe(_ violation: Store.ForeignKeyViolation) throws -> String {
        let subject: String
        if violation.table == "Photo", let rowID = violation.rowID,
           let flickrID = try store.read({ try $0.scalar("SELECT flickrID FROM Photo WHERE id = ?", [.integer(rowID)]) })?.string {
            subject = "photo \(flickrID)"
        } else {
            subject = "\(violation.table) row \(violation.rowID.map(String.init) ?? "?")"
        }
        return "\(subject) refers to a \(violation.parent) that does not exist"
    }
}
