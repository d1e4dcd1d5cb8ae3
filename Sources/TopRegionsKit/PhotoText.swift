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
    public static func bounded(_ text: String, to limit: Int) -> String {
        // Counting UTF-8 first: most texts are short, and counting characters is not cheap.
        guard text.utf8.count > limit, text.count > limit else { return text }
        return String(text.prefix(limit - 1)) + "…"
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
