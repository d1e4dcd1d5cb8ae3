import Foundation

/// A usage error: the message names what was wrong; the tool prints it with the command's
/// usage and exits 64 (EX_USAGE).
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The words of the command line, with the global options (`--store`, `--json`) taken
/// out wherever they stand, and the command's own options parsed on demand.
struct Arguments: Sendable {
    var store: String?
    var json = false
    var help = false
    var version = false
    var command: String?
    /// The command's words: positionals and options, in order.
    var words: [String] = []

    init(_ raw: [String]) throws {
        var index = 0
        while index < raw.count {
            let word = raw[index]
            switch word {
            case "--json": json = true
            case "--help", "-h": help = true
            case "--version": version = true
            case "--store":
                guard index + 1 < raw.count else { throw UsageError("--store needs a path") }
                store = raw[index + 1]
                index += 1
            default:
                if word.hasPrefix("--store=") {
                    store = String(word.dropFirst("--store=".count))
                } else if command == nil && !word.hasPrefix("-") {
                    command = word
                } else {
                    words.append(word)
                }
            }
            index += 1
        }
    }

    /// The value of `--name VALUE` or `--name=VALUE`, removed from the words.
    mutating func option(_ name: String) throws -> String? {
        for (index, word) in words.enumerated() {
            if word == "--\(name)" {
                guard index + 1 < words.count, !words[index + 1].hasPrefix("--") else { throw UsageError("--\(name) needs a value") }
                let value = words[index + 1]
                words.removeSubrange(index...(index + 1))
                return value
            }
            if word.hasPrefix("--\(name)=") {
                words.remove(at: index)
                return String(word.dropFirst(name.count + 3))
            }
        }
        return nil
    }

    /// Whether `--name` is present (removed from the words).
    mutating func flag(_ name: String) -> Bool {
        guard let index = words.firstIndex(of: "--\(name)") else { return false }
        words.remove(at: index)
        return true
    }

    mutating func integer(_ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = try option(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return number
    }

    /// A duration option within `range` (seconds): `90s`, `20m`, `1h30m`, `1.5d`.
    mutating func duration(_ name: String, default value: TimeInterval, range: ClosedRange<TimeInterval>) throws -> TimeInterval {
        guard let text = try option(name) else { return value }
        guard let seconds = Duration.parse(text) else {
            throw UsageError("--\(name) must be a duration like 90s, 20m, 1h30m or 7d, not \"\(text)\"")
        }
        guard seconds > 0 else { throw UsageError("--\(name) must be more than 0, not \"\(text)\"") }
        guard range.contains(seconds) else {
            throw UsageError("--\(name) must be from \(Duration.format(range.lowerBound)) to \(Duration.format(range.upperBound)), not \"\(text)\"")
        }
        return seconds
    }

    /// The remaining positionals; throws on a leftover option.
    mutating func positionals(_ expected: ClosedRange<Int>, _ what: String) throws -> [String] {
        if let unknown = words.first(where: { $0.hasPrefix("-") }) { throw UsageError("unknown option \(unknown)") }
        guard expected.contains(words.count) else {
            throw UsageError(words.count < expected.lowerBound ? "missing \(what)" : "unexpected argument \(words[expected.upperBound])")
        }
        defer { words = [] }
        return words
    }
}

/// Durations as the tool writes them: one or more amounts with a unit, largest first or
/// not (`90s`, `20m`, `1h30m`, `1.5h`, `7d`): s, m, h, d.
enum Duration {
    /// Seconds, or nil when the text is not a duration. Amounts are read as decimals, so
    /// no amount overflows; a total too large to be finite is no duration.
    static func parse(_ text: String) -> TimeInterval? {
        guard !text.isEmpty, text.utf8.count <= 40 else { return nil }
        var total: Double = 0
        var amount = ""
        for character in text {
            if character.isASCII && (character.isNumber || character == ".") {
                amount.append(character)
                continue
            }
            guard let number = Double(amount), let unit = seconds(per: character) else { return nil }
            total += number * unit
            amount = ""
        }
        guard amount.isEmpty, total.isFinite else { return nil }
        return total
    }

    private static func seconds(per unit: Character) -> Double? {
        switch unit {
        case "s": return 1
        case "m": return 60
        case "h": return 3600
        case "d": return 86_400
        default: return nil
        }
    }

    /// The shortest way the tool writes a whole number of seconds: `30d`, `1h`, `90s`.
    static func format(_ seconds: TimeInterval) -> String {
        for (unit, size) in [("d", 86_400.0), ("h", 3600.0), ("m", 60.0)] where seconds >= size && seconds.truncatingRemainder(dividingBy: size) == 0 {
            return "\(Int(seconds / size))\(unit)"
        }
        return "\(Int(seconds))s"
    }
}
