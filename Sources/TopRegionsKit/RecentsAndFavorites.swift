import Foundation
import ResultsController
import Store

extension Gallery {
    /// Records a view of the photo: its Recents timestamp is set to `at` (it moves to the
    /// top), and the oldest beyond 20 are dropped, in one transaction.
    @discardableResult
    public func recordView(photoID: Int64, at date: Date = Date()) throws -> Date {
        try store.write { transaction in
            guard try transaction.fetchOne(PhotoRecord.self, id: photoID) != nil else {
                throw GalleryError(.notFound, "no photo has row id \(photoID)")
            }
            var recent = RecentRecord(lastViewed: date, photoID: photoID)
            try transaction.upsert(&recent, matching: ["photo_id"])
            let overflow = try transaction.fetchIDs(FetchRequest(RecentRecord.self, sortDescriptors: [SortKey("lastViewed", ascending: false)],
                                                                 fetchOffset: Self.recentsLimit))
            try transaction.delete("Recent", ids: overflow)
            return date
        }
    }

    /// Recents with their view times, newest first.
    public func recents() throws -> [(photo: PhotoRecord, lastViewed: Date)] {
        try store.read { context in
            let recents = try context.fetch(RecentRecord.self, sortedBy: [SortKey("lastViewed", ascending: false)], limit: Self.recentsLimit)
            let photos = Dictionary(try context.fetch(PhotoRecord.self, ids: recents.compactMap(\.photoID)).map { ($0.id ?? 0, $0) },
                                    uniquingKeysWith: { first, _ in first })
            return recents.compactMap { recent in recent.photoID.flatMap { photos[$0] }.map { ($0, recent.lastViewed) } }
        }
    }

    // MARK: Favorites

    /// The favorites in order.
    public func favorites() throws -> [PhotoRecord] {
        try store.read { try $0.fetch(Self.favoritesRequest, as: PhotoRecord.self) }
    }

    /// Adds the photo at the end of Favorites (nothing happens if it is there already).
    public func addFavorite(photoID: Int64) throws {
        try store.write { transaction in
            guard try transaction.fetchOne(PhotoRecord.self, id: photoID) != nil else {
                throw GalleryError(.notFound, "no photo has row id \(photoID)")
            }
            guard try transaction.fetch(FavoriteRecord.self, where: Key("photo") == photoID).isEmpty else { return }
            let last = try transaction.scalar("SELECT max(displayOrder) FROM Favorite")?.int64 ?? -1
            try transaction.inserted(FavoriteRecord(displayOrder: last + 1, photoID: photoID))
        }
    }

    /// Removes the photo from Favorites and closes the gap.
    public func removeFavorite(photoID: Int64) throws {
        try store.write { transaction in
            guard let favorite = try transaction.fetch(FavoriteRecord.self, where: Key("photo") == photoID).first else {
                let flickrID = try transaction.fetchOne(PhotoRecord.self, id: photoID)?.flickrID ?? "with row id \(photoID)"
                throw GalleryError(.notAFavorite, "photo \(flickrID) is not a favorite")
            }
            try transaction.delete(favorite)
            for var later in try transaction.fetch(FavoriteRecord.self, where: Key("displayOrder") > favorite.displayOrder) {
                later.displayOrder -= 1
                try transaction.update(later)
            }
        }
    }

    /// Moves the favorite at position `from` to position `to` (0-based), renumbering only
    /// the rows between them, in one transaction. With `controller`, the move is
    /// user-driven: that controller (whose view already shows it) is not told.
    public func moveFavorite(from: Int, to: Int, userDrivenBy controller: ResultsController<PhotoRecord>? = nil) throws {
        let body: (Transaction) throws -> Void = { transaction in
            let count = try transaction.count(FetchRequest(FavoriteRecord.self))
            guard (0..<count).contains(from), (0..<count).contains(to) else {
                throw GalleryError(.invalidArgument, count == 0 ? "Favorites is empty: nothing to move"
                                   : "Favorites has \(count) \(count == 1 ? "photo" : "photos"): cannot move from position \(from + 1) to \(to + 1)")
            }
            guard from != to else { return }
            let low = min(from, to), high = max(from, to)
            var rows = try transaction.fetch(FetchRequest(FavoriteRecord.self, sortDescriptors: [SortKey("displayOrder")],
                                                          fetchLimit: high - low + 1, fetchOffset: low), as: FavoriteRecord.self)
            let moving = rows.remove(at: from - low)
            rows.insert(moving, at: to - low)
            for (offset, var row) in rows.enumerated() {
                row.displayOrder = Int64(low + offset)
                try transaction.update(row)
            }
        }
        if let controller { try controller.performUserDrivenWrite(body) } else { try store.write(body) }
    }
}
