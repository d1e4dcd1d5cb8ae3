/// The course's title rules: the title is Flickr's title; if that is empty, the
/// description; if both are empty, "Unknown". The subtitle is the description, empty when
/// the description became the title. Empty means nothing but whitespace and newlines.
public enum PhotoText {
    /// The title of a photo with neither a title nor a description.
    public static let unknownTitle = "Unknown"

    /// The longest texts kept, in characters: what a server sends beyond them is cut (with
    /// "…"), so that a server cannot grow the store by megabytes a photo. Flickr's own
    /// titles and names are far shorter.
    public enum Limit {
        /// Titles and subtitles (a description shown as either).
        public static let title = 1_000
        /// Descriptions as kept.
        public static let description = 10_000
        /// Names: photographers, regions, countries.
        public static let name = 200
    }

    /// `text` cut to `limit` characters, the last one replaced by "…" when it was longer.
    /// Characters, so that a letter keeps its accents; but also at most `4 × limit` Unicode
    /// scalars, so that one "character" of a million combining marks is not one character's
    /// worth of store (a character longer than what is left is cut whole).
    public static func bounded(_ text: String, to limit: Int) -> String {
        // Counting UTF-8 first: most texts are short, and counting characters is not cheap.
        guard text.utf8.count > limit else { return text }
        let scalarLimit = 4 * limit
        // The end of what is kept if the text must be cut: room is left for "…".
        var cut = text.startIndex
        var characters = 0, scalars = 0
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(after: index)
            characters += 1
            scalars += text[index..<next].unicodeScalars.count
            if characters > limit || scalars > scalarLimit { return String(text[..<cut]) + "…" }
            if characters < limit && scalars < scalarLimit { cut = next }
            index = next
        }
        return text
    }

    /// The title shown: `title`, else `description`, else "Unknown" (blank counts as empty).
    public static func title(_ title: String, description: String) -> String {
        if !isBlank(title) { return title }
        return isBlank(description) ? unknownTitle : description
    }

    /// The subtitle shown: `description`, or empty when it became the title.
    public static func subtitle(_ title: String, description: String) -> String {
        isBlank(title) ? "" : description
    }

    /// Whether the text is only whitespace and newlines as Foundation's
    /// `.whitespacesAndNewlines` counts them: Unicode's White_Space property (the Z
    /// categories, U+0009–U+000D, U+0085) plus U+200B ZERO WIDTH SPACE. Checked by scalar
    /// (`PhotoTextTests` compares every scalar with Foundation): trimming with Foundation
    /// cost microseconds a photo.
    static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            if scalar.isASCII { return scalar == " " || (0x09...0x0D).contains(scalar.value) }
            return scalar.properties.isWhitespace || scalar == "\u{200B}"
        }
    }
}
