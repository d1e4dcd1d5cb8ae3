/// A parsed JSON value, typed: what `JSONParser` produces and what `LooseValue` reads.
///
/// Integers that fit in 64 bits stay exact (`integer`); other numbers are `number`.
/// Decoding through a typed enum instead of `JSONSerialization`'s `Any` tree spares a
/// dynamic cast and a bridged object per field, which was most of the cost of a page.
enum JSONValue: Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    var objectFields: [String: JSONValue]? {
        if case .object(let fields) = self { return fields }
        return nil
    }

    var arrayElements: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}
