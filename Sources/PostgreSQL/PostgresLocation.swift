import CPostgreSQL
import Foundation

/// Where a PostgreSQL database is, as a user writes it, and how to name it safely.
public enum PostgresLocation {
    /// Whether `text` is a PostgreSQL connection URL (`postgresql://…` or `postgres://…`,
    /// the scheme in any case), as opposed to a file path.
    public static func isURL(_ text: String) -> Bool {
        let lowered = text.prefix(14).lowercased()
        return lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://")
    }

    /// `location` with every password replaced by `***`: the one in a URL's user
    /// information (`postgresql://user:secret@host`), a `password=` or `sslpassword=`
    /// query parameter (its name percent-encoded or not), and a `password=` keyword of a
    /// `key=value` connection string. Cut to `longestShown` characters.
    public static func redacted(_ location: String) -> String {
        let text = isURL(location) ? redactedURL(location) : redactedKeywords(location)
        return text.count > longestShown ? String(text.prefix(longestShown)) + "…" : text
    }

    /// The longest location messages show.
    public static let longestShown = 200

    /// The keywords whose values are secrets.
    static let secretKeywords: Set<String> = ["password", "sslpassword"]

    /// `location` as libpq is given it, and the secrets it holds (to keep out of libpq's
    /// messages), after libpq's own parser has read it: a URL's scheme in lower case (libpq
    /// knows `postgresql://` and `postgres://` only, and would take any other spelling for
    /// a database name). Throws `invalidParameter`, naming the location redacted, for one
    /// libpq cannot read, and for a URL whose user information holds an `@` not written
    /// `%40` (libpq would take what follows it for the host).
    public static func prepared(_ location: String) throws -> (location: String, secrets: [String]) {
        var location = location
        if isURL(location), let schemeEnd = location.range(of: "://") {
            location = location[..<schemeEnd.lowerBound].lowercased() + location[schemeEnd.lowerBound...]
            let afterScheme = location[schemeEnd.upperBound...]
            let authority = afterScheme.prefix { $0 != "/" && $0 != "?" }
            if authority.filter({ $0 == "@" }).count > 1 {
                throw PostgresError(.invalidParameter, "\(redacted(location)): write an @ in the user name or password as %40")
            }
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(location, &error) else {
            let reason = error.map { String(cString: $0) }?.prefix { $0 != "\n" } ?? ""
            if let error { PQfreemem(error) }
            let words = quotingOnlyNames(String(reason)).trimmingCharacters(in: CharacterSet(charactersIn: " :"))
            throw PostgresError(.invalidParameter, "\(redacted(location)) is not a PostgreSQL location libpq can read"
                                + (words.isEmpty ? "" : " (\(words))"))
        }
        defer { PQconninfoFree(options) }
        var secrets = hiddenParts(location)
        var option = options
        while let keyword = option.pointee.keyword {
            if secretKeywords.contains(String(cString: keyword)), let value = option.pointee.val, value.pointee != 0 {
                secrets.append(String(cString: value))
            }
            option += 1
        }
        var seen = Set<String>()
        return (location, secrets.filter { seen.insert($0).inserted })
    }

    /// libpq's complaint about a location with what it quotes kept only when it is a name
    /// (letters, digits, `_`, at most 40) or one character (`"]"`, `"="`): it quotes the
    /// location too, password and all, which becomes `"…"`.
    static func quotingOnlyNames(_ reason: String) -> String {
        let parts = reason.split(separator: "\"", omittingEmptySubsequences: false)
        return parts.enumerated().map { index, part in
            guard index % 2 == 1 else { return String(part) }
            let isName = part.count <= 40 && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            return isName || part.count == 1 ? String(part) : "…"
        }.joined(separator: "\"")
    }

    /// What `redacted` hides of a URL, and each piece of it (split at `/`, `?`, `@`, `:`,
    /// `&`, `=`): libpq may read a URL otherwise than as written (a `/` in a password ends
    /// its host) and quote a piece in its complaint (`invalid integer value "SEC" for
    /// connection option "port"`). A piece of three characters or more is hidden wherever
    /// it stands alone; a shorter one only quoted, as libpq quotes (else every "a" would go).
    static func hiddenParts(_ location: String) -> [String] {
        guard isURL(location), let schemeEnd = location.range(of: "://") else { return [] }
        let afterScheme = location[schemeEnd.upperBound...]
        var hidden: [String] = []
        if let at = afterScheme.lastIndex(of: "@"), let colon = afterScheme[..<at].firstIndex(of: ":") {
            hidden.append(String(afterScheme[afterScheme.index(after: colon)..<at]))
        }
        let shown = redacted(location)
        if let question = location.firstIndex(of: "?") {
            for parameter in location[location.index(after: question)...].split(separator: "&") {
                let parts = parameter.split(separator: "=", maxSplits: 1)
                if parts.count == 2, !shown.contains(String(parameter)) { hidden.append(String(parts[1])) }
            }
        }
        let pieces = hidden.flatMap { $0.split(whereSeparator: { "/?@:&=".contains($0) }).map(String.init) }.filter { !$0.isEmpty }
        return (hidden + pieces.filter { $0.count >= 3 } + pieces.filter { $0.count < 3 }.map { "\"\($0)\"" }).filter { !$0.isEmpty }
    }

    /// `message` with each of `secrets` replaced by `***` where it stands on its own: not
    /// inside a longer run of letters and digits, so that a short password does not turn
    /// "server" into "se***ve***" (and show where it matched). Quoted, after a `:` or `=`,
    /// or alone, it is always hidden.
    public static func scrubbed(_ message: String, of secrets: [String]) -> String {
        secrets.filter { !$0.isEmpty }.sorted { $0.count > $1.count }.reduce(message) { text, secret in
            replacingStandalone(secret, in: text)
        }
    }

    private static func replacingStandalone(_ secret: String, in text: String) -> String {
        func isWordCharacter(_ character: Character?) -> Bool { character.map { $0.isLetter || $0.isNumber } ?? false }
        var result = ""
        var rest = text[...]
        while let found = rest.range(of: secret) {
            let before = found.lowerBound > text.startIndex ? text[text.index(before: found.lowerBound)] : nil
            let after = found.upperBound < text.endIndex ? text[found.upperBound] : nil
            let embedded = (isWordCharacter(before) && isWordCharacter(secret.first)) || (isWordCharacter(after) && isWordCharacter(secret.last))
            result += rest[..<found.lowerBound]
            result += embedded ? String(rest[found]) : "***"
            rest = rest[found.upperBound...]
        }
        return result + rest
    }

    /// The URL with its user information's password and every query value that could be
    /// a secret hidden. What counts as user information is taken broadly, as libpq's
    /// parser and a person's typing may differ: everything up to the last `@` after the
    /// scheme, whatever `/` or `?` it holds (`user:pa/ss@host`). A query value is shown only
    /// for a keyword libpq knows and that is no secret; a misspelled `passwrd=` is hidden.
    private static func redactedURL(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let afterScheme = url[schemeEnd.upperBound...]
        var shownUntil = afterScheme.startIndex
        var userInformation = ""
        if let at = afterScheme.lastIndex(of: "@") {
            let written = afterScheme[..<at]
            userInformation = written.firstIndex(of: ":").map { String(written[...$0]) + "***" } ?? String(written)
            shownUntil = at
        }
        let rest = afterScheme[shownUntil...]
        guard let question = rest.firstIndex(of: "?") else {
            return String(url[..<schemeEnd.upperBound]) + userInformation + rest
        }
        let parameters = rest[rest.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decoded = (String(parts[0]).removingPercentEncoding ?? String(parts[0])).lowercased()
            guard parts.count == 2, !(showableKeywords.contains(decoded) && !secretKeywords.contains(decoded)) else { return String(parameter) }
            return parts[0] + "=***"
        }
        return String(url[..<schemeEnd.upperBound]) + userInformation + rest[...question] + parameters.joined(separator: "&")
    }

    /// The connection keywords libpq knows (`PQconndefaults`): their values may be shown,
    /// but for the secret ones.
    static let showableKeywords: Set<String> = {
        guard let defaults = PQconndefaults() else { return [] }
        defer { PQconninfoFree(defaults) }
        var keywords: Set<String> = []
        var option = defaults
        while let keyword = option.pointee.keyword {
            keywords.insert(String(cString: keyword))
            option += 1
        }
        return keywords
    }()

    /// `text` as a message may show it: every PostgreSQL URL in it redacted
    /// (`redactingURLs`), the password of any other URL's user information
    /// (`mysql://u:***@h`), and `password=` keywords (a key=value string taken for a path).
    public static func redactingSecrets(in text: String) -> String {
        redactedKeywords(redactingUserPasswords(in: redactingURLs(in: text)))
    }

    /// `text` with the password of every `scheme://user:password@` in it replaced by `***`.
    static func redactingUserPasswords(in text: String) -> String {
        var output = ""
        var rest = Substring(text)
        while let separator = rest.range(of: "://") {
            let word = rest[separator.upperBound...].prefix { !$0.isWhitespace && $0 != "\"" && $0 != "'" }
            output += rest[..<separator.upperBound]
            if let at = word.lastIndex(of: "@"), let colon = word[..<at].firstIndex(of: ":"), word[word.index(after: colon)..<at] != "***" {
                output += word[...colon] + "***" + word[at...]
            } else {
                output += word
            }
            rest = rest[word.endIndex...]
        }
        return output + rest
    }

    /// `text` with every PostgreSQL URL in it (a word beginning `postgresql://` or
    /// `postgres://`, in any case, up to white space or a quote) redacted: for messages
    /// that quote what a person typed, such as an unknown option's word.
    public static func redactingURLs(in text: String) -> String {
        var output = ""
        var index = text.startIndex
        while index < text.endIndex {
            let rest = text[index...]
            if isURL(String(rest.prefix(14))) {
                var end = rest.firstIndex { $0.isWhitespace || $0 == "\"" || $0 == "'" } ?? rest.endIndex
                // "URL: reason": the colon that ends the URL is the message's, not the URL's.
                if end < rest.endIndex, rest[end] == " ", end > rest.startIndex, rest[rest.index(before: end)] == ":" {
                    end = rest.index(before: end)
                }
                output += redacted(String(rest[..<end]))
                index = end
            } else {
                output.append(text[index])
                index = text.index(after: index)
            }
        }
        return output
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
