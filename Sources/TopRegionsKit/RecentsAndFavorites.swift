import Foundation
import ResultsController
import Store

// Each user's Recents (at most 20, newest first, a photo once) and Favorites (in the
// user's order). No call here can reach another user's rows: every query and write is
// bounded by the user's id.
extension GalleryWriting {
    /// Records `user`'s view of the photo: its Recents timestamp is set to `at` (it moves to
    /// the top), and that user's oldest beyond 20 are dropped, in one transaction. A photo
    /// whose region is not known counts as not downloaded (`notFound`).
    @discardableResult
    public func recordView(photoID: Int64, at date: Date = Date(), for user: GalleryUser) throws -> Date {
        try recordView(photoID, at: date, for: user, knownAs: nil)
    }

    /// `recordView(photoID:at:for:)`, its "no photo" naming the photo by `flickrID` when given.
    func recordView(_ photoID: Int64, at date: Date, for user: GalleryUser, knownAs flickrID: String?) throws -> Date {
        try writableStore.write { transaction in
            try Gallery.requireShownPhoto(photoID, knownAs: flickrID, transaction)
            let userID = try Gallery.checkedUserID(user, transaction)
            var recent = RecentRecord(lastViewed: date, photoID: photoID, userID: userID)
            try transaction.upsert(&recent, matching: ["user_id", "photo_id"])
            try transaction.delete("Recent", ids: try Gallery.recentsOverflow(userID: userID, transaction))
            return date
        }
    }

    // MARK: Favorites

    /// Adds the photo at the end of `user`'s Favorites (nothing happens if it is there
    /// already). A photo whose region is not known counts as not downloaded (`notFound`).
    public func addFavorite(photoID: Int64, for user: GalleryUser) throws {
        try addFavorite(photoID, for: user, knownAs: nil)
    }

    /// `addFavorite(photoID:for:)`, its "no photo" naming the photo by `flickrID` when given.
    func addFavorite(_ photoID: Int64, for user: GalleryUser, knownAs flickrID: String?) throws {
        try writableStore.write { transaction in
            try Gallery.requireShownPhoto(photoID, knownAs: flickrID, transaction)
            let userID = try Gallery.checkedUserID(user, transaction)
            guard try transaction.fetch(FavoriteRecord.self, where: Key("user") == userID && Key("photo") == photoID).isEmpty else { return }
            let last = try transaction.scalar("SELECT max(displayOrder) FROM Favorite WHERE user_id = \(transaction.dialect.parameter(1))",
                                              [.integer(userID)])?.int64 ?? -1
            try transaction.inserted(FavoriteRecord(displayOrder: last + 1, photoID: photoID, userID: userID))
        }
    }

    /// Removes the photo from `user`'s Favorites and closes the gap.
    public func removeFavorite(photoID: Int64, for user: GalleryUser) throws {
        try writableStore.write { transaction in
            let userID = try Gallery.checkedUserID(user, transaction)
            guard let favorite = try transaction.fetch(FavoriteRecord.self, where: Key("user") == userID && Key("photo") == photoID).first else {
                let flickrID = try transaction.fetchOne(PhotoRecord.self, id: photoID)?.flickrID ?? "with row id \(photoID)"
                throw GalleryError(.notAFavorite, "photo \(flickrID) is not a favorite")
            }
            // Every row written (the one deleted among those renumbered) in id order: two
            // writers of one list on PostgreSQL then wait for each other's rows in the same
            // order, and never deadlock.
            let later = try transaction.fetch(FavoriteRecord.self, where: Key("user") == userID && Key("displayOrder") > favorite.displayOrder)
            for var row in ([favorite] + later).sorted(by: { ($0.id ?? 0) < ($1.id ?? 0) }) {
                guard row.id != favorite.id else {
                    try transaction.delete(favorite)
                    continue
                }
                row.displayOrder -= 1
                try transaction.update(row)
            }
        }
    }

    /// Moves `user`'s favorite at position `from` to position `to` (0-based, in the list as
    /// shown), renumbering only the rows between them, in one transaction. Favorites not
    /// shown (their photo's region not known) keep their places among the others. With
    /// `controller`, the move is user-driven: that controller (whose view already shows
    /// it) is not told.
    public func moveFavorite(from: Int, to: Int, for user: GalleryUser, userDrivenBy controller: ResultsController<FavoriteRecord>? = nil) throws {
        let body: (Transaction) throws -> Void = { transaction in
            let userID = try Gallery.checkedUserID(user, transaction)
            let shown = try transaction.fetchIDs(Gallery.favoritesRequest(userID: userID))
            let count = shown.count
            guard (0..<count).contains(from), (0..<count).contains(to) else {
                throw GalleryError(.invalidArgument, count == 0 ? "Favorites is empty: nothing to move"
                                   : "Favorites has \(count) \(count == 1 ? "photo" : "photos"): cannot move from position \(from + 1) to \(to + 1)")
            }
            guard from != to else { return }
            // Places in the whole list (orders run 0, 1, 2 … over shown and hidden alike).
            var rows = try transaction.fetch(Gallery.allFavoritesRequest(userID: userID), as: FavoriteRecord.self)
            guard let fromPlace = rows.firstIndex(where: { $0.id == shown[from] }),
                  let toPlace = rows.firstIndex(where: { $0.id == shown[to] }) else { return }
            let moving = rows.remove(at: fromPlace)
            rows.insert(moving, at: toPlace)
            let low = min(fromPlace, toPlace), high = max(fromPlace, toPlace)
            var renumbered: [FavoriteRecord] = []
            for place in low...high where rows[place].displayOrder != Int64(place) {
                var row = rows[place]
                row.displayOrder = Int64(place)
                renumbered.append(row)
            }
            // In id order: two writers of one list on PostgreSQL then wait for each other's
            // rows in the same order, and never deadlock.
            for row in renumbered.sorted(by: { ($0.id ?? 0) < ($1.id ?? 0) }) { try transaction.update(row) }
        }
        if let controller { try controller.performUserDrivenWrite(body) } else { try writableStore.write(body) }
    }

}

// Reading the lists, from any store a gallery can be read from.
extension GalleryReading {
    /// `user`'s Recents with their view times, newest first.
    public func recents(for user: GalleryUser) throws -> [(photo: PhotoRecord, lastViewed: Date)] {
        try readableStore.read { context in
            let recents = try context.fetch(Gallery.recentsRequest(userID: user.id), as: RecentRecord.self)
            let photos = Dictionary(try context.fetch(PhotoRecord.self, ids: recents.compactMap(\.photoID)).map { ($0.id ?? 0, $0) },
                                    uniquingKeysWith: { first, _ in first })
            return recents.compactMap { recent in recent.photoID.flatMap { photos[$0] }.map { ($0, recent.lastViewed) } }
        }
    }

    /// `user`'s favorites in order.
    public func favorites(for user: GalleryUser) throws -> [PhotoRecord] {
        try readableStore.read { context in
            let favorites = try context.fetch(Gallery.favoritesRequest(userID: user.id), as: FavoriteRecord.self)
            let photos = Dictionary(try context.fetch(PhotoRecord.self, ids: favorites.compactMap(\.photoID)).map { ($0.id ?? 0, $0) },
                                    uniquingKeysWith: { first, _ in first })
            return favorites.compactMap { $0.photoID.flatMap { photos[$0] } }
        }
    }
}

extension Gallery {
    /// The user's Recents past the 20th shown one, newest first. Hidden ones (their photo's
    /// region not known) do not take a shown one's place: those newer than the 20th shown
    /// stay, to come back when their region is known, and the list shows 20 again.
    fileprivate static func recentsOverflow(userID: Int64, _ transaction: Transaction) throws -> [Int64] {
        var shownRequest = recentsRequest(userID: userID)
        shownRequest.fetchLimit = nil
        let shown = Set(try transaction.fetchIDs(shownRequest))
        guard shown.count > recentsLimit else { return [] }
        let all = try transaction.fetchIDs(FetchRequest(RecentRecord.self, predicate: Key("user") == userID,
                                                        sortDescriptors: shownRequest.sortDescriptors))
        var shownSoFar = 0
        return all.filter { id in
            guard shownSoFar < recentsLimit else { return true }
            if shown.contains(id) { shownSoFar += 1 }
            return false
        }
    }

    /// Throws `notFound` unless the photo is there and its region known (it may have gone
    /// since the caller looked its id up: pruned, or its region lost), naming it by the
    /// Flickr id the person gave when there is one.
    fileprivate static func requireShownPhoto(_ photoID: Int64, knownAs flickrID: String?, _ transaction: Transaction) throws {
        guard try transaction.fetchOne(PhotoRecord.self, id: photoID)?.regionID != nil else {
            throw GalleryError(.notFound, flickrID.map { "no photo has id \($0)" } ?? "no photo has row id \(photoID)")
        }
    }

    /// The user's id, after checking the user is still there (a removed user's lists are gone).
    static func checkedUserID(_ user: GalleryUser, _ transaction: Transaction) throws -> Int64 {
        guard try transaction.fetchOne(UserRecord.self, id: user.id) != nil else {
            throw GalleryError(.notFound, "no user is called \(user.name)")
        }
        return user.id
    }
}
