/// The characters that make text from outside act, or read, as something it is not when it
/// is shown: one list for terminal output, logs and JSON.
public enum UnsafeCharacters {
    /// Controls (C0, DEL, C1), line and paragraph separators, bidirectional marks, embeddings,
    /// overrides and isolates (including the Arabic letter mark), and the invisible
    /// characters that make two different texts look the same: the soft hyphen, the
    /// Mongolian vowel separator, the zero-width space, the word joiner and invisible
    /// operators, the Hangul fillers, the byte order mark, and the tag characters (which
    /// can carry a hidden ASCII text). The zero-width joiner and non-joiner are not among
    /// them: emoji sequences and Persian words are made with them.
    public static func contains(_ value: UInt32) -> Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0xAD, 0x061C, 0x115F, 0x1160, 0x180E, 0x3164, 0xFEFF, 0xFFA0: return true
        case 0x200B, 0x200E, 0x200F, 0x2028...0x202E, 0x2060...0x2064, 0x2066...0x2069: return true
        case 0xE0000...0xE007F: return true
        default: return false
        }
    }

    /// A tag character that belongs to an emoji tag sequence (a subdivision flag: U+1F3F4,
    /// tag letters, U+E007F), shown as it is when it follows such a start.
    public static func isEmojiTag(_ value: UInt32) -> Bool {
        (0xE0020...0xE007F).contains(value)
    }

    /// The start of an emoji tag sequence (WAVING BLACK FLAG).
    public static let emojiTagBase: UInt32 = 0x1F3F4
}
