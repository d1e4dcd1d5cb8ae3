import Flickr
import Foundation
import ResultsController
import Store

// The gallery's lists followed live (`LiveList`), for `watch` and the HTTP change streams.
extension Gallery {
    /// The top regions, live; rows ranked from 1.
    public func liveTopRegions(limit: Int = topRegionsLimit) throws -> LiveList<RegionRow> {
        try live(topRegionsController(limit: limit, delivery: newDeliveryQueue("regions"))) { paths, controller in
            paths.compactMap { path in
                (try? controller.object(at: path)).map { region in
                    RegionRow(rank: path.row + 1, id: region.placeID, name: region.name, country: region.country,
                              photographers: Int(region.photographerCount), photos: Int(region.photoCount))
                }
            }
        }
    }

    /// A region's photos, live.
    public func liveRegionPhotos(regionID: Int64, imageBase: URL = FlickrConfiguration.defaultImageBase) throws -> LiveList<PhotoRow> {
        let controller = try regionPhotosController(regionID: regionID, delivery: newDeliveryQueue("region-photos"))
        return try live(controller) { [self] paths, controller in
            let records = paths.compactMap { try? controller.object(at: $0) }
            return ((try? summaries(records, imageBase: imageBase)) ?? []).map(PhotoRow.init)
        }
    }

    /// Recents, live, newest first.
    public func liveRecents() throws -> LiveList<RecentRow> {
        try live(recentsController(delivery: newDeliveryQueue("recents"))) { [self] paths, controller in
            let records = paths.compactMap { try? controller.object(at: $0) }
            let viewed = (try? lastViewed(of: records.compactMap(\.id))) ?? [:]
            return records.compactMap { record in
                record.id.flatMap { viewed[$0] }.map { RecentRow(id: record.flickrID, title: record.title, subtitle: record.subtitle, lastViewed: $0) }
            }
        }
    }

    /// Favorites, live, in the user's order.
    public func liveFavorites() throws -> LiveList<FavoriteRow> {
        try live(favoritesController(delivery: newDeliveryQueue("favorites"))) { paths, controller in
            paths.compactMap { path in
                (try? controller.object(at: path)).map { FavoriteRow(position: path.row + 1, id: $0.flickrID, title: $0.title) }
            }
        }
    }

    private func newDeliveryQueue(_ list: String) -> DispatchQueue {
        DispatchQueue(label: "topregions.live.\(list)")
    }

    private func live<R: Record, Row>(_ controller: ResultsController<R>,
                                     rows: @escaping @Sendable ([IndexPath], ResultsController<R>) -> [Row]) throws -> LiveList<Row> {
        guard let queue = controller.deliveryQueue else { preconditionFailure("a live list's controller delivers on its queue") }
        let list = LiveList(controller: controller, queue: queue, rows: rows)
        try list.start()
        return list
    }

    /// When each of these photos was viewed (Recents), by photo row id.
    func lastViewed(of photoIDs: [Int64]) throws -> [Int64: Date] {
        try store.read { context in
            Dictionary(try context.fetch(RecentRecord.self, whereColumn: "photo_id", in: photoIDs.map { .integer($0) })
                .compactMap { recent in recent.photoID.map { ($0, recent.lastViewed) } }, uniquingKeysWith: { first, _ in first })
        }
    }
}
