import Flickr
import Foundation
import Store

// The gallery's lists as rows (`ListRows.swift`), for the CLI and the HTTP API alike.
extension GalleryReading {
    /// The top regions as rows, ranked from 1. `byCountry` keeps each region's rank and
    /// orders the rows by country (the store's collation), then rank.
    public func topRegionRows(limit: Int = Gallery.topRegionsLimit, byCountry: Bool = false) throws -> [RegionRow] {
        let rows = try topRegions(limit: limit).enumerated().map { index, region in
            RegionRow(rank: index + 1, id: region.placeID, name: region.name, country: region.country,
                      photographers: region.photographers, photos: region.photos)
        }
        guard byCountry else { return rows }
        return rows.sorted { left, right in
            let order = Collation.localizedStandard.compare(left.country ?? "", right.country ?? "")
            return order == .orderedSame ? left.rank < right.rank : order == .orderedAscending
        }
    }

    /// A region's photos as rows, by title; `byPhotographer` orders them by photographer
    /// first (by name, each photographer's photos together), keeping title order within.
    public func photoRows(inRegion regionID: Int64, byPhotographer: Bool = false,
                          imageBase: URL = FlickrConfiguration.defaultImageBase) throws -> [PhotoRow] {
        let request = Gallery.regionPhotosRequest(regionID: regionID, byPhotographer: byPhotographer)
        let records = try readableStore.read { try $0.fetch(request, as: PhotoRecord.self) }
        return try summaries(records, imageBase: imageBase).map(PhotoRow.init)
    }

    /// One photo in full, by its Flickr id; nil when the store has none.
    public func photoDetail(flickrID: String, imageBase: URL = FlickrConfiguration.defaultImageBase) throws -> PhotoDetail? {
        try photo(flickrID: flickrID, imageBase: imageBase).map(PhotoDetail.init)
    }

    /// `user`'s Recents as rows, newest first.
    public func recentRows(for user: GalleryUser) throws -> [RecentRow] {
        try recents(for: user).map { RecentRow(id: $0.photo.flickrID, title: $0.photo.title, subtitle: $0.photo.subtitle, lastViewed: $0.lastViewed) }
    }

    /// `user`'s Favorites as rows, in the user's order.
    public func favoriteRows(for user: GalleryUser) throws -> [FavoriteRow] {
        try favorites(for: user).enumerated().map { FavoriteRow(position: $0.offset + 1, id: $0.element.flickrID, title: $0.element.title) }
    }
}

extension PhotoRow {
    /// The list row of this photo.
    public init(_ summary: PhotoSummary) {
        self.init(id: summary.flickrID, title: summary.title, subtitle: summary.subtitle, photographer: summary.photographer,
                  photographerURL: summary.photographerURL, pageURL: summary.pageURL, license: summary.license, uploaded: summary.uploaded, thumbnailURL: summary.thumbnailURL, imageURL: summary.imageURL)
    }
}

extension PhotoDetail {
    /// The detail of this photo, with no view time.
    public init(_ summary: PhotoSummary) {
        self.init(photo: PhotoRow(summary), region: summary.region, regionID: summary.regionPlaceID, country: summary.country,
                  latitude: summary.latitude, longitude: summary.longitude)
    }
}
