import HTTPServer

/// A request's query arguments, checked against what the endpoint takes: an unknown or
/// repeated name, or a value out of range, is a 400 that names it (never ignored).
struct QueryArguments {
    private var values: [String: String?] = [:]

    init(_ request: HTTPRequest, allowed: Set<String>) throws(APIError) {
        for (name, value) in request.arguments {
            guard allowed.contains(name) else {
                let known = allowed.sorted()
                throw .badRequest("unknown query parameter \"\(LogText.escaped(name, limit: 64))\""
                                  + (known.isEmpty ? "; this endpoint takes none" : "; this endpoint takes \(known.joined(separator: ", "))"))
            }
            guard values[name] == nil else { throw .badRequest("query parameter \(name) is given twice") }
            values[name] = .some(value)
        }
    }

    /// An integer in `range`, or `default` when absent.
    func integer(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(APIError) -> Int {
        guard let given = values[name] else { return fallback }
        // Digits only: Int("+3") would take a sign the documentation never offers.
        guard let text = given, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(text), range.contains(number) else {
            throw .badRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(LogText.escaped(given ?? "", limit: 32))\"")
        }
        return number
    }

    /// The text given, or nil when absent (a name alone is empty text).
    func text(_ name: String) -> String? {
        guard let given = values[name] else { return nil }
        return given ?? ""
    }

    /// Whether the argument was given at all.
    func has(_ name: String) -> Bool { values[name] != nil }

    /// One of the words `among`, or `default` when absent.
    func choice(_ name: String, default fallback: String, among allowed: [String]) throws(APIError) -> String {
        guard let given = values[name] else { return fallback }
        guard let word = given, allowed.contains(word) else {
            throw .badRequest("\(name) must be one of \(allowed.joined(separator: ", ")), not \"\(LogText.escaped(given ?? "", limit: 32))\"")
        }
        return word
    }

    /// `true`/`false` (also `1`/`0`; a name alone is true), or `default` when absent.
    func boolean(_ name: String, default fallback: Bool = false) throws(APIError) -> Bool {
        guard let given = values[name] else { return fallback }
        switch given {
        case nil, "true", "1": return true
        case "false", "0": return false
        default: throw .badRequest("\(name) must be true or false (or 1 or 0), not \"\(LogText.escaped(given ?? "", limit: 32))\"")
        }
    }
}
