/// The characters that make text from outside act, or read, as something it is not when it
/// is shown: one list for terminal output, logs and JSON.
public enum UnsafeCharacters {
    /// Controls (C0, DEL, C1), line and paragraph separators, the interlinear annotation
    /// controls, and Unicode's default-ignorable characters: bidirectional marks,
    /// embeddings, overrides and isolates (the Arabic letter mark too), and the invisible
    /// characters that make two different texts look the same (soft hyphen, combining
    /// grapheme joiner, Hangul and Khmer fillers, Mongolian vowel separator, zero-width
    /// space, word joiner and invisible operators, the byte order mark, tag characters,
    /// which can carry a hidden ASCII text). Not among them: the zero-width joiner and
    /// non-joiner and the variation selectors, which emoji sequences, Persian and Indic
    /// words, Mongolian and CJK text are made with.
    public static func contains(_ value: UInt32) -> Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x20...0xAC: return false
        case 0x2028, 0x2029, 0xFFF9...0xFFFB: return true
        case 0x200C, 0x200D, 0x180B...0x180D, 0x180F, 0xFE00...0xFE0F, 0xE0100...0xE01EF: return false
        default: return Unicode.Scalar(value)?.properties.isDefaultIgnorableCodePoint ?? false
        }
    }

    /// The tag characters of an emoji tag sequence: after the waving black flag, a region
    /// and subdivision code of 2 to 7 tag digits and small letters, ended by the cancel tag
    /// (🏴 gbsct, Scotland's flag). The number of scalars from `start` (the flag) that form
    /// one, or nil when none starts there.
    public static func emojiTagSequence(_ scalars: [Unicode.Scalar], at start: Int) -> Int? {
        guard start < scalars.count, scalars[start].value == 0x1F3F4 else { return nil }
        var index = start + 1
        while index < scalars.count, isTagSpec(scalars[index].value) { index += 1 }
        let letters = index - start - 1
        guard (2...7).contains(letters), index < scalars.count, scalars[index].value == 0xE007F else { return nil }
        return index - start + 1
    }

    private static func isTagSpec(_ value: UInt32) -> Bool {
        (0xE0030...0xE0039).contains(value) || (0xE0061...0xE007A).contains(value)
    }
}
