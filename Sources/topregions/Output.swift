import Foundation

/// Where results go: JSON or a table on stdout; diagnostics on stderr.
struct Output: Sendable {
    let json: Bool
    let isTerminal = isatty(STDOUT_FILENO) != 0
    let errorIsTerminal = isatty(STDERR_FILENO) != 0

    func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// One line on stderr, its text escaped for the terminal (it may quote a server).
    func diagnostic(_ text: String) {
        FileHandle.standardError.write(Data((TerminalText.escape(text) + "\n").utf8))
    }

    /// One JSON value on its own line.
    func emit(_ value: Any) {
        write(Self.jsonText(value) + "\n")
    }

    static func jsonText(_ value: Any) -> String {
        JSONText.of(value)
    }

    /// Rows as aligned columns that respect wide characters and the terminal width; cells
    /// are escaped for the terminal (they hold Flickr's text).
    func table(_ headers: [String], _ rows: [[String]]) {
        write(Self.table(headers, rows.map { $0.map(TerminalText.escape) }, width: terminalWidth))
    }

    /// A line of human output that quotes text from outside: escaped for the terminal.
    func line(_ text: String) {
        write(TerminalText.escape(text) + "\n")
    }

    var terminalWidth: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return Int(ProcessInfo.processInfo.environment["COLUMNS"] ?? "") ?? 100
    }

    static func table(_ headers: [String], _ rows: [[String]], width: Int) -> String {
        let all = [headers] + rows
        var widths = headers.indices.map { column in all.map { displayWidth($0[column]) }.max() ?? 0 }
        // Shrink the widest column until the table fits the terminal.
        let gaps = 2 * (headers.count - 1)
        while widths.reduce(0, +) + gaps > width, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > 8 {
            widths[widest] -= 1
        }
        return all.map { row in
            row.indices.map { pad(truncate(row[$0], to: widths[$0]), to: widths[$0]) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n") + "\n"
    }

    /// Columns a string takes on a terminal: East Asian wide and emoji characters take two.
    static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    static func width(of character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .control { return 0 }
        if character.unicodeScalars.count > 1 && character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation || $0.value == 0xFE0F }) { return 2 }
        if scalar.properties.isEmojiPresentation { return 2 }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    static func truncate(_ text: String, to limit: Int) -> String {
        guard displayWidth(text) > limit else { return text }
        var result = ""
        var used = 0
        for character in text {
            let next = width(of: character)
            if used + next > limit - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }

    static func pad(_ text: String, to limit: Int) -> String {
        text + String(repeating: " ", count: max(0, limit - displayWidth(text)))
    }
}

extension Date {
    /// ISO 8601 in UTC, as the JSON writes dates.
    var iso8601: String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: self)
    }
}
