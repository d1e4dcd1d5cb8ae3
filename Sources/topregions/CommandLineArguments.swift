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

    mutating func duration(_ name: String, default value: TimeInterval) throws -> TimeInterval {
        guard let text = try option(name) else { return value }
        guard let seconds = Duration.parse(text) else {
            throw UsageError("--\(name) must be a duration like 90s, 20m, 1h or 7d, not \"\(text)\"")
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

/// Durations as the tool writes them: `90s`, `20m`, `1h`, `7d`.
enum Duration {
    static func parse(_ text: String) -> TimeInterval? {
        guard let unit = text.last, let number = Double(text.dropLast()), number > 0 else { return nil }
        switch unit {
        case "s": return number
        case "m": return number * 60
        case "h": return number * 3600
        case "d": return number * 86_400
        default: return nil
        }
    }
}
