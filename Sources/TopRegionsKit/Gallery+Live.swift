import Flickr
import Foundation
import ResultsController
import Store

// The gallery's lists followed live (`LiveList`), for `watch` and the HTTP change streams.
extension GalleryObserving {
    /// The top regions, live; rows ranked from 1. `byCountry`: every region, in a section
    /// per country, each row's `rank` its place within its country.
    public func liveTopRegions(limit: Int = Gallery.topRegionsLimit, byCountry: Bool = false) throws -> LiveList<RegionRow> {
        try live(topRegionsController(limit: limit, byCountry: byCountry, delivery: newDeliveryQueue("regions"))) { _, pairs in
            pairs.map { path, region in
                RegionRow(rank: path.row + 1, id: region.placeID, name: region.name, country: region.country,
                          photographers: Int(region.photographerCount), photos: Int(region.photoCount))
            }
        }
    }

    /// A region's photos, live. The list ends when the region is deleted (pruning removes a
    /// region left without photos): its row id may be given to another region later. A
    /// commit that says it deleted the region is checked against the store first (a write
    /// from `psql` may put it back under the same id in the same transaction).
    public func liveRegionPhotos(regionID: Int64, imageBase: URL = FlickrConfiguration.defaultImageBase) throws -> LiveList<PhotoRow> {
        let controller = try regionPhotosController(regionID: regionID, delivery: newDeliveryQueue("region-photos"))
        let list = try live(controller) { context, pairs in
            try Gallery.summaries(pairs.map(\.record), in: context, imageBase: imageBase).map(PhotoRow.init)
        }
        let region = try observableStore.read { try $0.fetchOne(RegionRecord.self, id: regionID) }
        let name = region?.name ?? "with row id \(regionID)"
        let store = observableStore
        list.endWhen(store.observe { [weak list] event in
            switch event {
            case .committed(let entry, _):
                guard entry.changes[RegionRecord.table.entity.name].deleted.contains(regionID) else { return }
            case .historyGap:
                break  // What was missed may have deleted it, and another region taken its id.
            }
            if let reason = Self.regionGone(regionID, placeID: region?.placeID, name: name, in: store) { list?.end(.gone(reason)) }
        })
        return list
    }

    /// Why a region's live photos end, or nil while row `id` is still the region of
    /// `placeID` (or the store cannot be read now: the next commit asks again).
    private static func regionGone(_ id: Int64, placeID: String?, name: String, in store: any ObservableStore) -> String? {
        do {
            let (now, elsewhere) = try store.read { context in
                (try context.fetchOne(RegionRecord.self, id: id),
                 try placeID.flatMap { try context.fetch(RegionRecord.self, where: Key("placeID") == $0).first })
            }
            guard now?.placeID != placeID else { return nil }
            if let elsewhere, let moved = elsewhere.id {
                return "region \(name) now has row id \(moved) (written outside topregions): watch it again"
            }
            return "region \(name) has no photos any more (pruned): watch it again when a sync brings it back"
        } catch {
            return nil
        }
    }

    /// `user`'s Recents, live, newest first.
    public func liveRecents(for user: GalleryUser) throws -> LiveList<RecentRow> {
        try live(recentsController(for: user, delivery: newDeliveryQueue("recents")), rows: Gallery.recentRows)
    }

    /// `user`'s Favorites, live, in the user's order.
    public func liveFavorites(for user: GalleryUser) throws -> LiveList<FavoriteRow> {
        try live(favoritesController(for: user, delivery: newDeliveryQueue("favorites")), rows: Gallery.favoriteRows)
    }

    private func newDeliveryQueue(_ list: String) -> DispatchQueue {
        DispatchQueue(label: "topregions.live.\(list)")
    }

    private func live<R: Record, Row>(_ controller: ResultsController<R>,
                                     rows: @escaping @Sendable (ReadContext, [(path: IndexPath, record: R)]) throws -> [Row]) throws -> LiveList<Row> {
        guard let queue = controller.deliveryQueue else { preconditionFailure("a live list's controller delivers on its queue") }
        let list = LiveList(controller: controller, queue: queue, store: observableStore, rows: rows)
        try list.start()
        return list
    }
}

extension GalleryObserving {
    /// Calls `handler` after each commit to the store, whoever made it (this process's at
    /// once, others' within the observation interval), until the observation is cancelled
    /// or released: for caches of what the gallery answers.
    public func observeCommits(_ handler: @escaping @Sendable () -> Void) -> StoreObservation {
        observableStore.observe { _ in handler() }
    }

    /// Calls `handler` after each commit that changed a user (added, removed, a token
    /// rotated), whoever made it: for what holds a user's token for a while (a change
    /// stream), to ask again whether it still names its user.
    public func observeUserChanges(_ handler: @escaping @Sendable () -> Void) -> StoreObservation {
        observableStore.observe { event in
            switch event {
            case .committed(let entry, _):
                if !entry.changes[UserRecord.table.entity.name].isEmpty { handler() }
            case .historyGap:
                handler()  // what was missed may have been a user's change
            }
        }
    }
}
