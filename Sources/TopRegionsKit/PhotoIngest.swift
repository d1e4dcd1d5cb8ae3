import Flickr
import Foundation
import Store

/// Stores one page of photos, inside the caller's transaction, with a constant number of
/// queries: the photographers, places and photos already known are found with `IN`, then
/// each row is written.
enum PhotoIngest {
    struct Outcome: Sendable {
        var new = 0
        var updated = 0
        /// Every photo of the page was already stored (a sign to stop paging).
        var allKnown = true
        /// Photographers the page renamed: their photos stored before need their search
        /// terms again (`SearchIndex.refresh(photographerIDs:)`), which the caller does once
        /// for all its pages, so that a page costs the same queries whatever it holds.
        var renamedPhotographers: [Int64] = []
    }

    /// `namedThisPass`: photographers whose name this pass already set from a newer page;
    /// pages come newest first, so an older page does not rename them back.
    /// `holdsNewPhotos` is called, before the rows are written, when the page has a photo
    /// not stored yet (the sync then knows it will read the next page).
    static func store(_ page: [FlickrPhoto], downloadedAt: Date, namedThisPass: inout Set<String>,
                      in transaction: Transaction, holdsNewPhotos: () -> Void = {}) throws -> Outcome {
        var outcome = Outcome()
        // Pages shift while paging: the same photo can come twice.
        var seen = Set<String>()
        let photos = page.filter { seen.insert($0.id).inserted }
        guard !photos.isEmpty else { return outcome }
        let photographers = try upsertPhotographers(photos, namedThisPass: &namedThisPass, renamed: &outcome.renamedPhotographers,
                                                    in: transaction)
        let places = try knownPlaces(photos, in: transaction)
        let existing = try transaction.fetch(PhotoRecord.self, whereColumn: "flickrID", in: photos.map { .text($0.id) })
        var existingByFlickrID: [String: PhotoRecord] = [:]
        for record in existing { existingByFlickrID[record.flickrID] = record }
        if existingByFlickrID.count < photos.count { holdsNewPhotos() }
        var joined: [RegionCounts.Membership] = []
        var imageReplaced: [Int64] = []
        var arriving: [PhotoRecord] = []
        let regionNames = try regionsShown(photos, places: places, existing: existingByFlickrID, in: transaction)
        for photo in photos {
            let place = photo.placeID.flatMap { places[$0] }
            var record = PhotoRecord(
                flickrID: photo.id, title: PhotoText.bounded(PhotoText.title(photo.title, description: photo.description), to: PhotoText.Limit.title),
                subtitle: PhotoText.bounded(PhotoText.subtitle(photo.title, description: photo.description), to: PhotoText.Limit.title),
                photoDescription: PhotoText.bounded(photo.description, to: PhotoText.Limit.description),
                uploaded: photo.dateUpload, downloaded: downloadedAt, latitude: photo.latitude, longitude: photo.longitude,
                secret: photo.secret, server: photo.server, farm: photo.farm.map(Int64.init), originalSecret: photo.originalSecret,
                originalFormat: photo.originalFormat, license: photo.license, photographerID: photographers[photo.owner]?.id, placeID: place?.id,
                regionID: place?.status == .resolved ? place?.regionID : nil)
            func indexForSearch(_ record: inout PhotoRecord) {
                let region = record.regionID.flatMap { regionNames[$0] }
                record.searchTitle = SearchIndex.titleColumn(record.title)
                record.searchText = SearchIndex.textColumn(description: record.photoDescription, photographer: photographers[photo.owner]?.name,
                                                           region: region?.name, country: region?.country)
            }
            if let stored = existingByFlickrID[photo.id] {
                // Known photo: keep when it was first downloaded, and its region while its
                // place is the same; at another place its region is that place's (none
                // until the place is resolved, as for a new photo).
                record.id = stored.id
                record.downloaded = stored.downloaded
                // Another secret or server is another image (the photo was replaced on
                // Flickr): the thumbnail kept of the old one is dropped.
                if let id = stored.id, record.secret != stored.secret || record.server != stored.server || record.farm != stored.farm {
                    imageReplaced.append(id)
                }
                if record.placeID == stored.placeID { record.regionID = stored.regionID ?? record.regionID }
                record.searchTitle = stored.searchTitle
                record.searchText = stored.searchText
                if record.regionID != stored.regionID || record.photographerID != stored.photographerID {
                    if let region = stored.regionID {
                        try RegionCounts.detach([RegionCounts.Membership(region: region, photographer: stored.photographerID)], in: transaction)
                    }
                    if let region = record.regionID {
                        joined.append(RegionCounts.Membership(region: region, photographer: record.photographerID))
                    }
                }
                indexForSearch(&record)
                if try !transaction.update(record, from: stored).isEmpty { outcome.updated += 1 }
            } else {
                outcome.allKnown = false
                indexForSearch(&record)
                arriving.append(record)
                outcome.new += 1
                if let region = record.regionID {
                    joined.append(RegionCounts.Membership(region: region, photographer: record.photographerID))
                }
            }
        }
        // Together: on PostgreSQL a few statements for the page rather than one per photo.
        try transaction.insert(&arriving)
        try RegionCounts.attach(joined, in: transaction)
        if !imageReplaced.isEmpty {
            try transaction.delete("Thumbnail", ids: try transaction.fetchIDs(
                FetchRequest(ThumbnailRecord.self, predicate: Key("photo").isIn(imageReplaced))))
        }
        return outcome
    }

    /// Photographers by Flickr owner id, inserted or renamed as this page says.
    private static func upsertPhotographers(_ photos: [FlickrPhoto], namedThisPass: inout Set<String>, renamed: inout [Int64],
                                            in transaction: Transaction) throws -> [String: (id: Int64?, name: String)] {
        var names: [String: String?] = [:]
        var aliases: [String: String] = [:]
        // Photos come newest first: an owner's first name on the page is the newest.
        for photo in photos where (names[photo.owner] ?? nil) == nil { names[photo.owner] = photo.ownerName }
        for photo in photos where aliases[photo.owner] == nil { aliases[photo.owner] = photo.pathAlias }
        let owners = Array(names.keys)
        let stored = try transaction.fetch(PhotographerRecord.self, whereColumn: "ownerID", in: owners.map { .text($0) })
        var byOwner: [String: PhotographerRecord] = [:]
        for photographer in stored { byOwner[photographer.ownerID] = photographer }
        var result: [String: (id: Int64?, name: String)] = [:]
        var arriving: [PhotographerRecord] = []
        for owner in owners {
            let name = PhotoText.bounded((names[owner] ?? nil) ?? byOwner[owner]?.name ?? owner, to: PhotoText.Limit.name)
            // An alias is kept once learned: a page without the extra says nothing of it.
            let alias = aliases[owner] ?? byOwner[owner]?.pathAlias
            if let existing = byOwner[owner] {
                if (existing.name != name || existing.pathAlias != alias) && !namedThisPass.contains(owner) {
                    var changed = existing
                    changed.name = name
                    changed.pathAlias = alias
                    try transaction.update(changed, from: existing)
                }
                if existing.name != name, !namedThisPass.contains(owner), let id = existing.id { renamed.append(id) }
                result[owner] = (existing.id, namedThisPass.contains(owner) ? existing.name : name)
            } else {
                arriving.append(PhotographerRecord(ownerID: owner, name: name, pathAlias: alias))
            }
            namedThisPass.insert(owner)
        }
        try transaction.insert(&arriving)
        for photographer in arriving { result[photographer.ownerID] = (photographer.id, photographer.name) }
        return result
    }

    /// The names and countries of the regions the page's photos will be in (their stored
    /// region, or their resolved place's), in one query: their search terms include them.
    private static func regionsShown(_ photos: [FlickrPhoto], places: [String: PlaceRecord], existing: [String: PhotoRecord],
                                     in transaction: Transaction) throws -> [Int64: (name: String, country: String?)] {
        var ids = Set<Int64>()
        for photo in photos {
            if let region = existing[photo.id]?.regionID { ids.insert(region) }
            if let place = photo.placeID.flatMap({ places[$0] }), place.status == .resolved, let region = place.regionID { ids.insert(region) }
        }
        guard !ids.isEmpty else { return [:] }
        var result: [Int64: (name: String, country: String?)] = [:]
        for region in try transaction.fetch(RegionRecord.self, ids: ids) {
            if let id = region.id { result[id] = (region.name, region.country) }
        }
        return result
    }

    /// Places by Flickr place id; those not seen before are added as pending.
    private static func knownPlaces(_ photos: [FlickrPhoto], in transaction: Transaction) throws -> [String: PlaceRecord] {
        let placeIDs = Array(Set(photos.compactMap(\.placeID)))
        var places: [String: PlaceRecord] = [:]
        for place in try transaction.fetch(PlaceRecord.self, whereColumn: "placeID", in: placeIDs.map { .text($0) }) {
            places[place.placeID] = place
        }
        var arriving = placeIDs.filter { places[$0] == nil }.map { PlaceRecord(placeID: $0) }
        try transaction.insert(&arriving)
        for place in arriving { places[place.placeID] = place }
        return places
    }
}
