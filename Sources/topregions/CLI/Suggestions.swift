import Foundation
import TopRegionsKit

/// Words as a POSIX shell reads them back, for command lines the tool prints for a person
/// to paste or a script to run (a next page, a suggestion).
enum ShellWord {
    /// The word as is when it holds only characters no shell treats specially, else in
    /// single quotes (a quote inside written `'\''`).
    static func quoted(_ word: String) -> String {
        let plain = !word.isEmpty && !word.hasPrefix("=") && !word.hasPrefix("~")
            && word.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:,@+%".contains($0) }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// What to suggest after a usage mistake: the option a person meant.
enum Suggestions {
    /// Option names other tools use (and people type first), and this tool's for the same
    /// thing, best first: the first one the command takes is suggested, before any name
    /// that is merely spelled alike (`--port` is not a misspelt `--pool`).
    static let wellKnown: [String: [String]] = [
        "port": ["listen"], "host": ["listen"], "bind": ["listen"], "address": ["listen"], "addr": ["listen"],
        "db": ["store"], "database": ["store"], "db-path": ["store"], "sqlite": ["store"],
        "count": ["limit"], "max": ["limit"], "top": ["limit"], "n": ["limit"], "page-size": ["limit", "per-page"],
        "cursor": ["after"], "next": ["after"], "page-token": ["after"], "start-after": ["after"],
        "username": ["user"], "as": ["user"],
        "place": ["region"], "place-id": ["region"], "region-id": ["region"],
        "every": ["interval", "sync-interval"], "period": ["interval", "sync-interval"],
        "age": ["older-than"], "max-age": ["older-than"],
        "out": ["output"], "o": ["output"], "output-file": ["output"],
        "dest": ["to"], "destination": ["to"], "target": ["to"], "source": ["from"], "src": ["from"],
        "origin": ["cors-origin"], "cors": ["cors-origin"],
        "silent": ["quiet"],
    ]

    /// "unknown option --x for COMMAND", with what the person most likely meant: a
    /// well-known option's counterpart here, else the closest name, the command's own
    /// options before the global ones. `rest` is the words after the command and `index`
    /// the word after the unknown option (its value, perhaps).
    static func unknownOption(_ word: String, name: String, inline: String?, command: Command, rest: [String], index: Int) -> String {
        let message = "unknown option \(word) for \(command.name)"
        let given = inline ?? (index < rest.count && !rest[index].hasPrefix("-") ? rest[index] : nil)
        if let target = wellKnown[name]?.lazy.compactMap({ command.option(named: $0) }).first {
            return message + "; did you mean \(synopsis(target, value: given, rest: rest))?"
        }
        return message + (closestOption(to: name, command: command).map { "; did you mean --\($0)?" } ?? "")
    }

    /// The option named most like `name`. A global option is an odd answer to a question
    /// about a command: it wins only when strictly closer than the command's own closest,
    /// and never when only half its letters match (`--port` is no `--pool`).
    static func closestOption(to name: String, command: Command) -> String? {
        let limit = max(2, name.count / 3)
        func closest(_ names: [String]) -> (name: String, distance: Int)? {
            names.map { ($0, distance(name, $0)) }.filter { $0.1 <= limit }.min { $0.1 < $1.1 }
        }
        let own = closest(command.options.map(\.name))
        let global = closest(GlobalOptions.all.filter { command.option(named: $0.name) != nil }.map(\.name))
            .flatMap { $0.distance >= 2 && $0.distance * 2 >= name.count ? nil : $0 }
        switch (own, global) {
        case let (own?, global?): return global.distance < own.distance ? global.name : own.name
        case let (own?, nil): return own.name
        case let (nil, global?): return global.name
        case (nil, nil): return nil
        }
    }

    /// `--name VALUE` as the suggestion writes it, with the value the person gave when
    /// there was one. `--listen` is made of a `--host` and a `--port` given anywhere.
    static func synopsis(_ option: Option, value: String?, rest: [String]) -> String {
        guard option.takesValue else { return "--\(option.name)" }
        if option.name == "listen" {
            return "--listen " + ShellWord.quoted(listenAddress(host: self.value(of: ["host", "bind", "address", "addr"], in: rest),
                                                                port: self.value(of: ["port"], in: rest)))
        }
        return "--\(option.name) " + (value.map(ShellWord.quoted) ?? option.valueName ?? "VALUE")
    }

    /// `HOST:PORT` for `--listen`, loopback and 8080 (its defaults) where not given; a port
    /// that is no number stays a placeholder rather than be made up.
    static func listenAddress(host: String?, port: String?) -> String {
        var address = host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        if address.contains(":") && !address.hasPrefix("[") { address = "[\(address)]" }
        let port = port.map { text in text.allSatisfy(\.isASCII) && Int(text).map { (0...65_535).contains($0) } == true ? text : "PORT" } ?? "8080"
        return "\(address):\(port)"
    }

    /// The value given to the first of these options in `words` (`--name VALUE` or `--name=VALUE`).
    private static func value(of names: Set<String>, in words: [String]) -> String? {
        for (index, word) in words.enumerated() where word.hasPrefix("-") {
            let (name, inline) = CommandLineWords.split(word)
            guard names.contains(name) else { continue }
            if let inline { return inline }
            if index + 1 < words.count, !words[index + 1].hasPrefix("-") { return words[index + 1] }
        }
        return nil
    }

    // MARK: A word where the command takes none

    /// "; did you mean --region yucatan?" for `photos yucatan`: a command that takes no
    /// positional arguments, given one word, probably lacks the option that word is the
    /// value of: the command's `loneWordOption` when the word fits it (and it is not given
    /// yet); for a command that names none, its only value option not given yet that the
    /// word fits. Empty when no option is a likely one.
    static func forLoneWord(_ positionals: [String], command: Command, given: Set<String>) -> String {
        guard command.arguments.isEmpty, positionals.count == 1, let word = positionals.first else { return "" }
        let candidates = command.options.filter { $0.takesValue && !given.contains($0.name) && fits(word, $0) }
        // A command that names its likely option suggests no other: `regions Mexico` is no cursor.
        let option = command.loneWordOption.map { name in candidates.first { $0.name == name } } ?? (candidates.count == 1 ? candidates.first : nil)
        guard let option else { return "" }
        if option.name == "listen" {
            let address = word.contains(":") ? word : listenAddress(host: nil, port: word)
            return "; did you mean --listen \(ShellWord.quoted(address))?"
        }
        return "; did you mean --\(option.name) \(ShellWord.quoted(word))?"
    }

    /// Whether `word` could be the option's value, judged by the kind of value it names.
    private static func fits(_ word: String, _ option: Option) -> Bool {
        guard case .some(let kind, let completions) = option.value else { return false }
        switch kind {
        case "N": return Int(word) != nil
        case "DURATION": return Duration.parse(word) != nil
        case "URL": return word.contains("://")
        case "ADDRESS:PORT": return word.contains(":") || (Int(word).map { (0...65_535).contains($0) } ?? false)
        default: return completions.isEmpty || completions == ["FILE"] || completions.contains(word)
        }
    }

    // MARK: Distance

    /// Edits from one name to the other: insertions, deletions, substitutions, and swaps
    /// of two neighbours (optimal string alignment), so that `--josn` is one edit from
    /// `--json`, as a person sees it.
    static func distance(_ left: String, _ right: String) -> Int {
        let a = Array(left), b = Array(right)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    // MARK: User names

    /// The gallery's check of a user name, as a usage error; a name that is only not lower
    /// case ("Alice") gets the name it can be ("alice").
    static func checkUserName(_ name: String, command: Command, prefix: String = "") throws {
        do { try Gallery.checkUserName(name) } catch let error as GalleryError {
            let lowered = name.lowercased()
            if lowered != name, (try? Gallery.checkUserName(lowered)) != nil {
                throw UsageError(prefix + "user names are lowercase (letters, digits, '.', '_' or '-'); did you mean \"\(lowered)\"?", command: command)
            }
            throw UsageError(prefix + error.message, command: command)
        }
    }
}
