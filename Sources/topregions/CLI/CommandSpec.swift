import Foundation

/// One option of a command: its name, whether it takes a value, what it does, its
/// default, and the environment variable it falls back to. The table of options is the one
/// place they are spelled: parsing, `--help`, the man page and the shell completions all
/// come from it.
struct Option: Sendable {
    enum Value: Sendable {
        /// A flag: present or not.
        case none
        /// A value, named in help (`N`, `PATH`, `DURATION`), with the words a shell may
        /// complete it with (empty: any; `["FILE"]` a file name).
        case some(String, completions: [String] = [])
    }

    let name: String
    let value: Value
    let help: String
    var defaultText: String? = nil
    var environment: String? = nil

    var takesValue: Bool { if case .some = value { return true } else { return false } }
    var valueName: String? { if case .some(let name, _) = value { return name } else { return nil } }

    /// `--name VALUE` as usage and help write it.
    var synopsis: String { valueName.map { "--\(name) \($0)" } ?? "--\(name)" }

    static func flag(_ name: String, _ help: String) -> Option { Option(name: name, value: .none, help: help) }

    static func value(_ name: String, _ valueName: String, _ help: String, default defaultText: String? = nil,
                      environment: String? = nil, completions: [String] = []) -> Option {
        Option(name: name, value: .some(valueName, completions: completions), help: help, defaultText: defaultText, environment: environment)
    }
}

/// A positional argument of a command.
struct Argument: Sendable {
    let name: String
    let help: String
    var optional = false
    /// Takes every word left (the last argument only): `search sunset over quebec`.
    var variadic = false
}

/// An example in a command's help, run by the tests against a store synced from SampleData.
struct Example: Sendable {
    /// The words after `topregions`.
    let arguments: [String]
    let explanation: String

    var commandLine: String { (["topregions"] + arguments.map(Self.quoted)).joined(separator: " ") }

    private static func quoted(_ word: String) -> String {
        word.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:".contains($0) } && !word.isEmpty ? word : "'\(word)'"
    }
}

/// One command of the tool, in the spirit of swift-argument-parser: a one-line abstract,
/// its arguments and options, examples, and what it does.
struct Command: Sendable {
    let name: String
    let abstract: String
    var arguments: [Argument] = []
    var options: [Option] = []
    var examples: [Example] = []
    /// More than the abstract, for help and the man page.
    var discussion: String? = nil
    /// What the command writes when it is not JSON (an image's bytes, a script): then
    /// `--json` does not apply and is refused. Nil: `--json` applies.
    var writesInstead: String? = nil
    var writesJSON: Bool { writesInstead == nil }
    /// The option a lone word most likely is the value of, when the command takes no
    /// positional arguments: `photos yucatan` is told "did you mean --region yucatan?".
    /// Nil: the only value option the word fits, if just one does (`prune 7d`).
    var loneWordOption: String? = nil
    let run: @Sendable (inout Invocation) async throws -> Int32

    func option(named name: String) -> Option? {
        options.first { $0.name == name } ?? GlobalOptions.all.first { $0.name == name && (writesJSON || $0.name != "json") }
    }

    /// The usage line: the command, its options, its arguments.
    var usage: String {
        var words = ["topregions", name]
        words += options.map { "[\($0.synopsis)]" }
        words += arguments.map { ($0.optional ? "[\($0.name)]" : $0.name) + ($0.variadic ? "..." : "") }
        return words.joined(separator: " ")
    }
}

/// The options every command takes.
enum GlobalOptions {
    static let store = Option.value("store", "PATH", "the store: a SQLite file, or a postgresql:// URL", default: "$TOPREGIONS_STORE, else $XDG_DATA_HOME/topregions/store.sqlite",
                                    completions: ["FILE"])
    static let pool = Option.value("pool", "N", "connections this process keeps to a PostgreSQL store, 1 to 64",
                                   default: "1; 4 for serve", environment: "TOPREGIONS_POSTGRES_POOL")
    static let json = Option.flag("json", "print JSON on stdout and nothing else")
    static let quiet = Option.flag("quiet", "no progress line on stderr")
    static let help = Option.flag("help", "show this help")
    static let all = [store, pool, json, quiet, help]
}
