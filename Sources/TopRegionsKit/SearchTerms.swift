import Foundation

/// How text becomes search terms, for what is stored and what is asked alike: folded
/// (case, accents and widths do not matter: "Liège" is `liege`, "QUÉBEC" is `quebec`), then
/// cut into runs of letters, digits and marks. Done here, in Swift, rather than by each
/// database's tokenizer, so SQLite's and PostgreSQL's full-text indexes hold the same terms
/// and answer the same hits.
public enum SearchTerms {
    /// The most terms a query is read for: more words narrow nothing a person needs.
    public static let maximumQueryTerms = 8
    /// A term's most characters (longer runs are cut).
    static let maximumTermLength = 64

    /// The terms of `text`, in order (repeats kept).
    public static func terms(_ text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased()
        var terms: [String] = []
        var current = String.UnicodeScalarView()
        func finish() {
            if !current.isEmpty { terms.append(String(String(current).prefix(maximumTermLength))) }
            current = String.UnicodeScalarView()
        }
        for scalar in folded.unicodeScalars {
            if isTermScalar(scalar) { current.append(scalar) } else { finish() }
        }
        finish()
        return terms
    }

    /// The terms of a stored text, each once, space-separated: what a search column holds.
    public static func column(_ texts: String?...) -> String {
        var seen = Set<String>()
        var kept: [String] = []
        for text in texts {
            for term in terms(text ?? "") where seen.insert(term).inserted { kept.append(term) }
        }
        return kept.joined(separator: " ")
    }

    /// The distinct terms of a query, at most `maximumQueryTerms`, in the order typed.
    public static func query(_ text: String) -> [String] {
        var seen = Set<String>()
        return Array(terms(text).filter { seen.insert($0).inserted }.prefix(maximumQueryTerms))
    }

    /// Letters, digits, marks and private-use characters make terms; every other character
    /// separates them. SQLite's FTS5 is told the same (`categories 'L* N* M* Co'`).
    static func isTermScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber,
             .nonspacingMark, .spacingMark, .enclosingMark, .privateUse:
            return true
        default:
            return false
        }
    }
}
