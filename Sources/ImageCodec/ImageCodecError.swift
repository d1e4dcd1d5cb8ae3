/// Why an image could not be decoded, encoded or resized, in words a person can act on.
public struct ImageCodecError: Error, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The bytes are not a whole image libjpeg can decode: not a JPEG, damaged, or cut short.
        case damaged
        /// More pixels than the caller allows.
        case tooLarge
        /// Memory could not be had.
        case noMemory
        /// A size or quality that cannot be.
        case invalidArgument
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
