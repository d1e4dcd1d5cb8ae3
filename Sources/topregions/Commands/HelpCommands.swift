import TopRegionsKit
import Foundation

extension Commands {
    static let help = Command(
        name: "help", abstract: "Show the help of a command, or the man page (--man).",
        arguments: [Argument(name: "COMMAND", help: "the command to tell about", optional: true)],
        options: [.flag("man", "print the man page (roff), the same as `man topregions` shows")],
        examples: [Example(arguments: ["help", "photos"], explanation: "how to list a region's photos")],
        writesInstead: "help text for people"
    ) { invocation in
        if invocation.flag("man") {
            invocation.output.write(HelpText.manPage())
            return 0
        }
        guard let name = invocation.positional(0) else {
            invocation.output.write(HelpText.overview())
            return 0
        }
        guard let command = Commands.named(name) else { throw UsageError(Commands.unknown(name)) }
        invocation.output.write(HelpText.help(command))
        return 0
    }

    static let completion = Command(
        name: "completion", abstract: "Print the shell completion script for bash, zsh or fish.",
        arguments: [Argument(name: "SHELL", help: "bash, zsh or fish")],
        examples: [Example(arguments: ["completion", "bash"], explanation: "the script for bash (installed by scripts/install)")],
        writesInstead: "a shell script"
    ) { invocation in
        let shell = invocation.positional(0) ?? ""
        guard let script = HelpText.completion(shell) else {
            throw UsageError("completion takes bash, zsh or fish, not \"\(shell)\"", command: invocation.command)
        }
        invocation.output.write(script)
        return 0
    }
}

/// The tool's commands, in the order help lists them.
enum Commands {
    static let all: [Command] = [sync, daemon, serve, regions, photos, photo, search, view, recents, favorites, thumbnail, image, watch, users, prune, status, check, migrate, copy,
                                 help, completion]

    static func named(_ name: String) -> Command? { all.first { $0.name == name } }

    /// "unknown command", with the closest command's name when one is close.
    static func unknown(_ name: String) -> String {
        let closest = all.map { ($0.name, EditDistance.between(name, $0.name)) }.filter { $0.1 <= max(2, name.count / 3) }.min { $0.1 < $1.1 }
        return "unknown command \"\(name)\"" + (closest.map { "; did you mean \"\($0.0)\"?" } ?? "")
    }
}
