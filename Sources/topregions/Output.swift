import Foundation
import TopRegionsKit

/// Where results go: JSON or tables on stdout; diagnostics and progress on stderr.
struct Output: Sendable {
    let json: Bool
    let quiet: Bool
    let isTerminal = isatty(STDOUT_FILENO) != 0
    let errorIsTerminal = isatty(STDERR_FILENO) != 0

    func write(_ text: String) {
        StandardStreams.out(Data(text.utf8))
    }

    /// One line on stderr, its text escaped for the terminal (it may quote a server).
    func diagnostic(_ text: String) {
        StandardStreams.err(Data((TerminalText.escape(text) + "\n").utf8))
    }

    /// A line of human output that quotes text from outside: escaped for the terminal.
    func line(_ text: String) {
        write(TerminalText.escape(text) + "\n")
    }

    /// One value as a line of JSON (`GalleryJSON`'s rules).
    func emit(_ value: some Encodable) throws {
        write(try GalleryJSON.text(value) + "\n")
    }

    /// A table: fitted to the terminal's width when stdout is one, never cut otherwise.
    func table(_ table: Table) {
        write(table.text(width: isTerminal ? terminalWidth : nil))
    }

    var terminalWidth: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return Int(ProcessInfo.processInfo.environment["COLUMNS"] ?? "") ?? 100
    }

    /// The width of the terminal stderr writes to (the progress line's).
    var errorTerminalWidth: Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return terminalWidth
    }

    var terminalHeight: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 { return Int(size.ws_row) }
        return Int(ProcessInfo.processInfo.environment["LINES"] ?? "") ?? 24
    }
}

/// Rows as aligned columns. Keys (ids, URLs, dates) are never cut; numbers are right-
/// aligned; only free text (titles, names) shrinks, widest first, to fit a terminal.
/// Cells are escaped for the terminal (they hold Flickr's text).
struct Table {
    enum Kind {
        /// Never cut: an id, a URL, a date.
        case key
        /// Never cut, aligned right.
        case number
        /// May be shortened with "…" to fit.
        case text
    }

    struct Column {
        var header: String
        var kind: Kind
    }

    let columns: [Column]
    private(set) var rows: [[String]] = []
    /// The column the rows are ordered by, if not the first: it is shrunk but never dropped
    /// to fit a terminal (the order would make no sense without it).
    var orderedBy: Int?
    /// Lines that stand between rows (a section's heading), by the row they precede.
    private(set) var headings: [Int: String] = [:]

    init(_ columns: [(String, Kind)]) {
        self.columns = columns.map { Column(header: $0.0, kind: $0.1) }
    }

    mutating func append(_ row: [String]) { rows.append(row.map(TerminalText.escape)) }
    mutating func heading(_ text: String) { headings[rows.count] = TerminalText.escape(text) }

    /// The fewest columns free text shrinks to ("Caf…"): with ids and dates whole, a row of
    /// Recents or regions still fits 40 columns.
    static let narrowestText = 4

    /// The table's text; with `width`, free text shrinks to fit it, and when even the
    /// narrowest free text does not fit, free-text columns after the first are left out
    /// (the last first), so that keys stay whole on one line.
    func text(width: Int?) -> String {
        let all = [columns.map(\.header)] + rows
        let natural = columns.indices.map { column in all.map { Self.displayWidth($0[column]) }.max() ?? 0 }
        var widths = natural
        var shown = Array(columns.indices)
        if let width {
            shrink(&widths, shown: shown, toFit: width)
            // The first free-text column (the title, the name) stays, unless the rows are
            // ordered by another, which then stays in its place.
            let texts = columns.indices.filter { columns[$0].kind == .text }
            let droppable = orderedBy.map { kept in texts.filter { $0 != kept } } ?? Array(texts.dropFirst())
            for column in droppable.reversed() where Self.totalWidth(widths, shown) > width {
                shown.removeAll { $0 == column }
                widths = natural  // the columns left share the room again
                shrink(&widths, shown: shown, toFit: width)
            }
        }
        var lines: [String] = []
        for (index, row) in all.enumerated() {
            if index > 0, let heading = headings[index - 1] { lines.append(heading) }
            let cells = shown.map { column -> String in
                let cell = columns[column].kind == .text ? Self.truncate(row[column], to: widths[column]) : row[column]
                return columns[column].kind == .number ? Self.padLeft(cell, to: widths[column]) : Self.pad(cell, to: widths[column])
            }
            // Trailing padding dropped by hand: a regular expression's `\s+$` rescans each
            // run of padding inside the line, which is quadratic in a long title's width.
            var line = cells.joined(separator: "  ")
            while let last = line.last, last.isWhitespace { line.removeLast() }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Shrinks the widest free-text column, one column at a time, down to `narrowestText`.
    private func shrink(_ widths: inout [Int], shown: [Int], toFit width: Int) {
        let shrinkable = shown.filter { columns[$0].kind == .text }
        while Self.totalWidth(widths, shown) > width,
              let widest = shrinkable.max(by: { widths[$0] < widths[$1] }), widths[widest] > Self.narrowestText {
            widths[widest] -= 1
        }
    }

    /// The columns' widths and the two-space gaps between them.
    private static func totalWidth(_ widths: [Int], _ shown: [Int]) -> Int {
        shown.map { widths[$0] }.reduce(0, +) + 2 * max(0, shown.count - 1)
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

    static func padLeft(_ text: String, to limit: Int) -> String {
        String(repeating: " ", count: max(0, limit - displayWidth(text))) + text
    }
}

extension Date {
    /// ISO 8601 in UTC, as the JSON writes dates.
    var iso8601: String { GalleryJSON.iso8601(self) }
}

/// Counts in words: "1 call", "3 calls".
func plural(_ count: Int, _ singular: String, _ pluralForm: String? = nil) -> String {
    "\(count.formatted()) \(count == 1 ? singular : (pluralForm ?? singular + "s"))"
}
