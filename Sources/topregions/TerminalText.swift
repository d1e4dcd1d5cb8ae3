import TopRegionsKit

/// Text from outside (Flickr's titles, names, messages) made safe to show a person: a
/// terminal acts on control characters (ESC starts sequences that clear the screen, set
/// the window title or write the clipboard; CR rewrites a line), so C0 and C1 controls
/// and DEL are shown escaped (`\x1b`), and so are the characters that reorder or break
/// lines (bidirectional marks and controls, line and paragraph separators, as
/// `\u{202e}`), and the invisible ones that make two different texts look the same
/// (`UnsafeCharacters`). Tag characters are shown as they are only inside a subdivision
/// flag (🏴, a region and subdivision code in tags, the cancel tag). Everything else is
/// shown as it is. JSON output needs none of this: JSON's own escaping makes every
/// character safe.
enum TerminalText {
    static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            if let flag = UnsafeCharacters.emojiTagSequence(scalars, at: index) {
                result.unicodeScalars.append(contentsOf: scalars[index..<(index + flag)])
                index += flag
                continue
            }
            let scalar = scalars[index]
            if !needsEscape(scalar) {
                result.unicodeScalars.append(scalar)
            } else if scalar.value < 0x100 {
                result += "\\x" + hex(scalar.value, digits: 2)
            } else {
                result += "\\u{" + hex(scalar.value, digits: 4) + "}"
            }
            index += 1
        }
        return result
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        UnsafeCharacters.contains(scalar.value)
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// A value for a `key=value` log line: bare when it is a plain word, else quoted with
    /// `"` and `\` escaped, controls escaped as above. A logged value never ends the line
    /// or starts another field.
    static func logValue(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            !needsEscape(scalar) && scalar != " " && scalar != "\"" && scalar != "=" && scalar != "\\"
        }
        if plain { return text }
        return "\"" + escape(backslashed(text)) + "\""
    }

    /// `text` with `\` and `"` preceded by a backslash.
    private static func backslashed(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 4)
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "\"" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(scalar)
        }
        return result
    }
}
