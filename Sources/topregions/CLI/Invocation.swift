import Foundation
import TopRegionsKit

/// A usage error: the message names what was wrong; the tool prints it with the command's
/// usage line and a pointer to its help, and exits 64 (EX_USAGE).
struct UsageError: Error, CustomStringConvertible {
    var description: String
    /// The command whose usage applies, when one was named.
    var command: Command?
    init(_ description: String, command: Command? = nil) {
        self.description = description
        self.command = command
    }
}

/// The command line, split: the global options, the command, and the command's options
/// and arguments, each checked against the command's table.
struct CommandLineWords {
    var command: String?
    var global: [String: String] = [:]
    var flags: Set<String> = []
    var version = false
    /// Words after the command, in order: options and positionals, `--` kept.
    var rest: [String] = []

    /// Splits `words`: global options may stand anywhere, the first other word is the
    /// command, everything after `--` is positional.
    init(_ words: [String]) throws {
        var index = 0
        var endOfOptions = false
        while index < words.count {
            let word = words[index]
            index += 1
            if endOfOptions || word == "-" || !word.hasPrefix("-") {
                if command == nil && !endOfOptions { command = word } else { rest.append(word) }
                continue
            }
            if word == "--" {
                endOfOptions = true
                rest.append(word)
                continue
            }
            let (name, inline) = Self.split(word)
            switch name {
            case "version", "json", "quiet", "help":
                guard inline == nil else { throw UsageError("--\(name) takes no value: leave out \"=\(inline ?? "")\"") }
                if name == "version" { version = true } else { flags.insert(name) }
            case "store", "pool":
                let valueName = name == "store" ? "PATH" : "N"
                guard let value = inline ?? (index < words.count ? words[index] : nil), !value.hasPrefix("--") else {
                    throw UsageError("--\(name) needs a value (\(valueName))")
                }
                if inline == nil { index += 1 }
                guard global[name] == nil else { throw UsageError("--\(name) is given twice") }
                global[name] = value
            default:
                rest.append(word)
            }
        }
    }

    /// `--name=value` as (name, value); `--name` as (name, nil); `-h` is `--help`.
    static func split(_ word: String) -> (String, String?) {
        if word == "-h" { return ("help", nil) }
        let body = word.drop { $0 == "-" }
        if let equals = body.firstIndex(of: "=") { return (String(body[..<equals]), String(body[body.index(after: equals)...])) }
        return (String(body), nil)
    }
}

/// A command's invocation: its options and arguments, parsed against its table, and the
/// context every command has (where output goes, the environment, the store).
struct Invocation {
    let command: Command
    let output: Output
    let environment: [String: String]
    let storeArgument: String?
    /// `--pool`, when given.
    let poolArgument: String?
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    let positionals: [String]

    init(command: Command, words: CommandLineWords, environment: [String: String]) throws {
        self.command = command
        self.environment = environment
        storeArgument = words.global["store"]
        poolArgument = words.global["pool"]
        if storeArgument?.isEmpty == true {
            throw UsageError("--store needs the store's path, not an empty word", command: command)
        }
        var positionals: [String] = []
        var index = 0
        var endOfOptions = false
        let rest = words.rest
        while index < rest.count {
            let word = rest[index]
            index += 1
            if endOfOptions || word == "-" || !word.hasPrefix("-") {
                positionals.append(word)
                continue
            }
            if word == "--" {
                endOfOptions = true
                continue
            }
            let (name, inline) = CommandLineWords.split(word)
            guard let option = command.options.first(where: { $0.name == name }) else {
                throw UsageError(Suggestions.unknownOption(word, name: name, inline: inline, command: command, rest: rest, index: index),
                                 command: command)
            }
            if option.takesValue {
                guard let value = inline ?? (index < rest.count ? rest[index] : nil), value == "-" || !value.hasPrefix("--") else {
                    throw UsageError("--\(name) needs a value (\(option.valueName ?? "VALUE"))", command: command)
                }
                if inline == nil { index += 1 }
                guard values[name] == nil else { throw UsageError("--\(name) is given twice", command: command) }
                values[name] = value
            } else {
                guard inline == nil else { throw UsageError("--\(name) takes no value", command: command) }
                guard !flags.contains(name) else { throw UsageError("--\(name) is given twice", command: command) }
                flags.insert(name)
            }
        }
        let required = command.arguments.filter { !$0.optional }.count
        guard positionals.count >= required else {
            throw UsageError("missing \(command.arguments[positionals.count].name): \(command.arguments[positionals.count].help)", command: command)
        }
        guard positionals.count <= command.arguments.count || command.arguments.last?.variadic == true else {
            let suggestion = Suggestions.forLoneWord(positionals, command: command, given: Set(values.keys).union(flags))
            throw UsageError("unexpected argument \"\(positionals[command.arguments.count])\"" + suggestion, command: command)
        }
        self.positionals = positionals
        if words.flags.contains("json"), let writes = command.writesInstead {
            throw UsageError("\(command.name) writes \(writes), not JSON: --json does not apply", command: command)
        }
        output = Output(json: words.flags.contains("json"), quiet: words.flags.contains("quiet"))
    }

    // MARK: Values

    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// Whether the option is on the command line (its environment variable not counted).
    func given(_ name: String) -> Bool { values[name] != nil || flags.contains(name) }

    /// The option's value, else its environment variable's (when not empty).
    func value(_ name: String) -> String? {
        if let value = values[name] { return value }
        guard let variable = command.options.first(where: { $0.name == name })?.environment,
              let value = environment[variable], !value.isEmpty else { return nil }
        return value
    }

    func positional(_ index: Int) -> String? { index < positionals.count ? positionals[index] : nil }

    func integer(_ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = self.value(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"", command: command)
        }
        return number
    }

    /// A duration option within `range` (seconds): `90s`, `20m`, `1h30m`, `1.5d`.
    func duration(_ name: String, default value: TimeInterval, range: ClosedRange<TimeInterval>) throws -> TimeInterval {
        guard let text = self.value(name) else { return value }
        guard let seconds = Duration.parse(text) else {
            throw UsageError("--\(name) must be a duration like 90s, 20m, 1h30m or 7d, not \"\(text)\"", command: command)
        }
        guard seconds > 0 else { throw UsageError("--\(name) must be more than 0, not \"\(text)\"", command: command) }
        guard range.contains(seconds) else {
            throw UsageError("--\(name) must be from \(Duration.format(range.lowerBound)) to \(Duration.format(range.upperBound)), not \"\(text)\"",
                             command: command)
        }
        return seconds
    }

    func choice(_ name: String, default value: String, among choices: [String]) throws -> String {
        guard let text = self.value(name) else { return value }
        guard choices.contains(text) else {
            throw UsageError("--\(name) must be \(choices.joined(separator: " or ")), not \"\(text)\"", command: command)
        }
        return text
    }
}

/// Durations as the tool writes them: one or more amounts with a unit (`90s`, `20m`,
/// `1h30m`, `1.5h`, `7d`): s, m, h, d.
enum Duration {
    /// Seconds, or nil when the text is not a duration. Amounts are read as decimals, so
    /// no amount overflows; a total too large to be finite is no duration.
    static func parse(_ text: String) -> TimeInterval? {
        guard !text.isEmpty, text.utf8.count <= 40 else { return nil }
        var total: Double = 0
        var amount = ""
        var previousUnit = Double.infinity
        for character in text {
            if character.isASCII && (character.isNumber || character == ".") {
                amount.append(character)
                continue
            }
            // Units from the largest down, each once: `1h30m`, not `1h1h` or `30m1h`.
            guard let number = Double(amount), let unit = seconds(per: character), unit < previousUnit else { return nil }
            total += number * unit
            previousUnit = unit
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
        return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }
}
