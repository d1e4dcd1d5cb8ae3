/// A request the controller cannot serve, with what to change.
public struct ResultsControllerError: Error, Sendable, CustomStringConvertible, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
