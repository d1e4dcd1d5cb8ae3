/// Where a PostgreSQL database is, as a user writes it, and how to name it safely.
public enum PostgresLocation {
    /// Whether `text` is a PostgreSQL connection URL (`postgresql://…` or `postgres://…`,
    /// the scheme in any case), as opposed to a file path.
    public static func isURL(_ text: String) -> Bool {
        let lowered = text.prefix(14).lowercased()
        return lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://")
    }

    /// `location` with every password replaced by `***`: the one in a URL's user
    /// information (`postgresql://user:secret@host`), a `password=` query parameter, and a
    /// `password=` keyword of a `key=value` connection string.
    public static func redacted(_ location: String) -> String {
        isURL(location) ? redactedURL(location) : redactedKeywords(location)
    }

    private static func redactedURL(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let afterScheme = url[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? afterScheme.endIndex
        var authority = String(afterScheme[..<authorityEnd])
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            authority = String(authority[...colon]) + "***" + String(authority[at...])
        }
        var rest = String(afterScheme[authorityEnd...])
        if let question = rest.firstIndex(of: "?") {
            let parameters = rest[rest.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
                parameter.lowercased().hasPrefix("password=") ? "password=***" : String(parameter)
            }
            rest = String(rest[...question]) + parameters.joined(separator: "&")
        }
        return String(url[..<schemeEnd.upperBound]) + authority + rest
    }

    /// `password=value` (value bare or single-quoted, with backslash escapes) becomes
    /// `password=***`; everything else is kept as written.
    private static func redactedKeywords(_ text: String) -> String {
        var output = ""
        var index = text.startIndex
        while index < text.endIndex {
            let rest = text[index...]
            let atWordStart = index == text.startIndex || text[text.index(before: index)].isWhitespace
            guard atWordStart, let match = passwordKeyword(in: rest) else {
                output.append(text[index])
                index = text.index(after: index)
                continue
            }
            output += "password=***"
            index = endOfValue(in: text, from: match)
        }
        return output
    }

    /// Where the value starts, when `text` begins with `password` `=` (spaces allowed around `=`).
    private static func passwordKeyword(in text: Substring) -> String.Index? {
        guard text.lowercased().hasPrefix("password") else { return nil }
        var index = text.index(text.startIndex, offsetBy: 8)
        while index < text.endIndex, text[index] == " " { index = text.index(after: index) }
        guard index < text.endIndex, text[index] == "=" else { return nil }
        index = text.index(after: index)
        while index < text.endIndex, text[index] == " " { index = text.index(after: index) }
        return index
    }

    private static func endOfValue(in text: String, from start: String.Index) -> String.Index {
        var index = start
        guard index < text.endIndex, text[index] == "'" else {
            while index < text.endIndex, !text[index].isWhitespace { index = text.index(after: index) }
            return index
        }
        index = text.index(after: index)
        while index < text.endIndex {
            if text[index] == "\\" {
                index = text.index(after: index)
                if index < text.endIndex { index = text.index(after: index) }
                continue
            }
            if text[index] == "'" { return text.index(after: index) }
            index = text.index(after: index)
        }
        return index
    }
}
