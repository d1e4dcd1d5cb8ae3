import Flickr
import Foundation
import Store

// What a person does to the gallery, by the ids they see (Flickr ids, positions from 1),
// on either store.
extension GalleryWriting {
    /// Records `user`'s view of the photo (see `recordView(photoID:at:for:)`) and returns it
    /// in full, with when it was viewed.
    public func view(flickrID: String, at date: Date = Date(), for user: GalleryUser,
                     imageBase: URL = FlickrConfiguration.defaultImageBase) throws -> PhotoDetail {
        let id = try photoRowID(flickrID: flickrID)
        let viewed = try recordView(id, at: date, for: user, knownAs: flickrID)
        guard var detail = try photoDetail(flickrID: flickrID, imageBase: imageBase) else {
            throw GalleryError(.notFound, "no photo has id \(flickrID)")
        }
        detail.lastViewed = viewed
        return detail
    }

    /// Adds the photo at the end of `user`'s Favorites (nothing happens if it is there already).
    public func addFavorite(flickrID: String, for user: GalleryUser) throws {
        let id = try photoRowID(flickrID: flickrID)
        try addFavorite(id, for: user, knownAs: flickrID)
    }

    /// Removes the photo from `user`'s Favorites; `notAFavorite` when it is not there.
    public func removeFavorite(flickrID: String, for user: GalleryUser) throws {
        try removeFavorite(photoID: try photoRowID(flickrID: flickrID, evenWithoutRegion: true), for: user)
    }

    /// Moves `user`'s favorite at position `from` to position `to`, counting from 1.
    public func moveFavorite(fromPosition from: Int, toPosition to: Int, for user: GalleryUser) throws {
        try moveFavorite(from: from - 1, to: to - 1, for: user)
    }
}

extension Gallery {
    // MARK: The daemon

    /// Takes the daemon lock (`STORE.daemon-lock`) for the caller's lifetime; `busy` when
    /// another daemon runs on this store.
    public func holdDaemonLock() throws -> ProcessLock {
        guard let path else { return .unshared }
        do {
            return try ProcessLock.acquire(path: path + ".daemon-lock", holder: "daemon", wait: false)
        } catch let busy as ProcessLock.Busy {
            throw GalleryError(.busy(pid: busy.pid), busy.description)
        }
    }

    /// The pid of the daemon running on this store, or nil.
    public var daemonPID: Int32? {
        path.flatMap { ProcessLock.holderPID(path: $0 + ".daemon-lock") }
    }
}
