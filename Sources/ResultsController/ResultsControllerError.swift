/// A request the controller cannot serve, or a row it cannot give, with what to change.
public struct ResultsControllerError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What is wrong, in a form code can branch on.
    public enum Kind: Sendable, Equatable {
        /// The request has no sort key.
        case noSortKey
        /// The first sort key does not order by the section key.
        case sectionKeyNotFirst
        /// The request fetches another entity than the controller shows.
        case wrongEntity
        /// No row at the index path asked for.
        case noSuchRow
        /// The object was deleted from the store before it could be loaded.
        case objectGone
        /// The request pages (`startingAfter`): a controller follows a whole list.
        case pagedRequest
    }

    /// What is wrong.
    public var kind: Kind
    /// What is wrong and what to change, in words.
    public var message: String

    /// An error with these values.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
