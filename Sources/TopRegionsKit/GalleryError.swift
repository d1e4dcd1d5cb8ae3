/// What went wrong in the gallery, as a case a caller can match and a message a person can
/// act on (with the next step, when there is one).
public struct GalleryError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What went wrong, in a form a caller can match.
    public enum Kind: Sendable, Equatable {
        /// There is no store at the path (and the command would not create one).
        case noStore
        /// The store cannot be opened or written: the message names the cause and the path.
        case storeUnavailable
        /// The store's database server cannot be reached, or the connection to it was lost
        /// (a PostgreSQL store): trying again later may help.
        case storeUnreachable
        /// No photo, region or user has that id or name.
        case notFound
        /// A name that several regions share.
        case ambiguous
        /// Something with that name exists already (a user).
        case alreadyExists
        /// The photo is not in Favorites.
        case notAFavorite
        /// An argument the gallery cannot use (a position past the end, an id that is no id).
        case invalidArgument
        /// The sync source failed; `temporary` when trying again later may help (a
        /// connection refused, a timeout, HTTP 5xx, Flickr's 105).
        case source(temporary: Bool)
        /// A photo has no image to give: Flickr sent no secret for it, or the SampleData its
        /// store was synced from is not the one found now.
        case noImage
        /// Another process (on any host) runs a sync pass: it holds the gallery's sync lock.
        case syncRunning(pid: Int32?)
        /// Another process holds a lock this one waited for too long: the store's (a
        /// write), or the daemon lock.
        case busy(pid: Int32?)
    }

    /// What went wrong.
    public var kind: Kind
    /// What went wrong, in words a person can act on.
    public var message: String
    /// What to do about it, when the message does not say.
    public var hint: String?

    /// An error with these values.
    public init(_ kind: Kind, _ message: String, hint: String? = nil) {
        self.kind = kind
        self.message = message
        self.hint = hint
    }

    /// The message, then the hint when there is one.
    public var description: String { hint.map { "\(message); \($0)" } ?? message }
}

extension GalleryError.Kind {
    /// Whether another pass holds the sync lock, whoever it is.
    public var isSyncRunning: Bool {
        if case .syncRunning = self { return true }
        return false
    }
}
