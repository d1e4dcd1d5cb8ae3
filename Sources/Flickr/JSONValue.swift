/// A parsed JSON value, typed: what `JSONParser` produces and what `LooseValue` reads.
///
/// Integers that fit in 64 bits stay exact (`integer`); other numbers are `number`; a number
/// that neither holds exactly (an integer of more than 64 bits, an exponent out of range)
/// is kept as the text the server sent (`numberText`), so that an id stays as sent.
/// Decoding through a typed enum instead of `JSONSerialization`'s `Any` tree spares a
/// dynamic cast and a bridged object per field, which was most of the cost of a page.
enum JSONValue: Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case number(Double)
    case numberText(String)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object(JSONObject)

    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var objectMembers: JSONObject? {
        if case .object(let members) = self { return members }
        return nil
    }

    var arrayElements: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}

/// A JSON object's members, in document order.
///
/// Flickr's objects are small (a photo has about twenty members) and each member is read
/// once or twice, so a list searched by key is cheaper than a `Dictionary`: hashing every
/// key into a table, and growing it, was half the time of parsing a page of photos.
/// A key that occurs twice reads as its last occurrence, as `JSONSerialization` has it.
struct JSONObject: Equatable, Sendable, ExpressibleByDictionaryLiteral {
    private(set) var keys: [String] = []
    private(set) var values: [JSONValue] = []

    init() {}

    init(_ dictionary: [String: JSONValue]) {
        for (key, value) in dictionary { append(key, value) }
    }

    init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (key, value) in elements { append(key, value) }
    }

    mutating func append(_ key: String, _ value: JSONValue) {
        keys.append(key)
        values.append(value)
    }

    subscript(key: String) -> JSONValue? {
        let length = key.utf8.count
        var index = keys.count - 1
        while index >= 0 {
            // Comparing lengths first (stored, so cheap) skips most calls to String's `==`.
            if keys[index].utf8.count == length, keys[index] == key { return values[index] }
            index -= 1
        }
        return nil
    }

    /// The members as a dictionary, a repeated key keeping its last value.
    var dictionary: [String: JSONValue] {
        Dictionary(zip(keys, values), uniquingKeysWith: { _, last in last })
    }

    /// Equal when they map the same keys to the same values, in any order.
    static func == (left: JSONObject, right: JSONObject) -> Bool {
        left.dictionary == right.dictionary
    }
}
