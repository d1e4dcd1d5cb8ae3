import Foundation

/// The strict JSON reader the Flickr client uses (RFC 8259, no trailing commas, no
/// comments, valid UTF-8, bounded depth), for other modules' small documents: a request
/// body, say. Members come in document order, so a repeated key can be told.
public enum StrictJSON {
    /// A member's value, as far as a caller needs to tell them apart.
    public enum Value: Sendable, Equatable {
        case string(String)
        case integer(Int64)
        case number(Double)
        case other
    }

    /// Why a document was refused, with the byte where it went wrong.
    public struct Error: Swift.Error, CustomStringConvertible {
        public let description: String
    }

    /// The members of a document that is one JSON object, in order.
    public static func objectMembers(_ data: Data) throws(Error) -> [(key: String, value: Value)] {
        let document: JSONValue
        do { document = try JSONParser.parse(data) } catch { throw Error(description: error.description) }
        guard let object = document.objectMembers else { throw Error(description: "the document is not a JSON object") }
        return zip(object.keys, object.values).map { key, value in
            switch value {
            case .string(let text): return (key, .string(text))
            case .integer(let number): return (key, .integer(number))
            case .number(let number): return (key, .number(number))
            default: return (key, .other)
            }
        }
    }
}
