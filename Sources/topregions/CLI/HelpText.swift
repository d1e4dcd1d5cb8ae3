import Foundation

// Help, the man page and shell completions, all made from the command table.
enum HelpText {
    static let environment: [(String, String)] = [
        ("TOPREGIONS_STORE", "the store, when --store is not given: a SQLite file, or a postgresql:// URL"),
        ("TOPREGIONS_BUSY_TIMEOUT", "how long a write waits for another process's lock on the store before it exits 75 (default: 60s)"),
        ("TOPREGIONS_OBSERVATION", "polling: notice other processes' commits to a SQLite store by polling every 50 ms instead of inotify (automatic: inotify unless on a network file system)"),
        ("TOPREGIONS_POSTGRES_POOL", "connections a process keeps to a PostgreSQL store, 1 to 64 (default: 1; 4 for serve)"),
        ("PGPASSFILE, PGSSLMODE, PGHOST, …", "libpq's own settings, for a PostgreSQL store (keep the password out of the URL)"),
        ("XDG_DATA_HOME", "where the default store lives ($XDG_DATA_HOME/topregions/store.sqlite; ~/.local/share when unset or not absolute)"),
        ("XDG_CACHE_HOME", "where large images are cached ($XDG_CACHE_HOME/topregions/images; ~/.cache when unset or not absolute)"),
        ("FLICKR_ENDPOINT", "the Flickr REST endpoint"),
        ("FLICKR_API_KEY_FILE", "a file holding the Flickr API key"),
        ("FLICKR_API_KEY", "the Flickr API key (visible in the environment of the process)"),
        ("FLICKR_IMAGE_BASE", "the base of image URLs"),
        ("TOPREGIONS_SAMPLEDATA", "the bundled SampleData directory"),
        ("TOPREGIONS_LIBCURL", "the libcurl to load for HTTP (default: libcurl.so.4)"),
        ("MALLOC_ARENA_MAX", "glibc's malloc arenas for the daemon (default there: 2)"),
    ]

    static let exitStatuses: [(Int32, String)] = [
        (0, "success"),
        (ExitStatus.failure, "a failure at run time (network, store, not found): one line on stderr"),
        (ExitStatus.usage, "a usage error: the usage line and where to read more"),
        (ExitStatus.temporaryFailure, "try again later: another sync holds the store, a PostgreSQL server could not be reached or its connection was lost, or the source failed for a reason that may pass"),
    ]

    /// `topregions --help`.
    static func overview() -> String {
        var text = """
            topregions \(version): a photo-gallery backend that keeps Flickr's top regions.

            Usage: topregions [--store PATH] [--pool N] [--json] [--quiet] COMMAND [options]

            Commands:

            """
        for command in Commands.all { text += "  \(command.name.padding(toLength: 11, withPad: " ", startingAt: 0)) \(command.abstract)\n" }
        text += "\nGlobal options:\n" + optionLines(GlobalOptions.all) + "  --version          print the version\n"
        text += "\nExit status: " + exitStatuses.map { "\($0.0) \($0.1)" }.joined(separator: "; ") + ".\n"
        text += "`topregions help COMMAND` (or `topregions COMMAND --help`) tells more; `man topregions` tells all.\n"
        return text
    }

    /// `topregions COMMAND --help`.
    static func help(_ command: Command) -> String {
        var text = "\(command.abstract)\n\nUsage: \(command.usage)\n"
        if !command.arguments.isEmpty {
            text += "\nArguments:\n" + command.arguments.map { "  \($0.name.padding(toLength: 18, withPad: " ", startingAt: 0)) \($0.help)" }.joined(separator: "\n") + "\n"
        }
        if !command.options.isEmpty { text += "\nOptions:\n" + optionLines(command.options) }
        let globals = GlobalOptions.all.filter { command.writesJSON || $0.name != "json" }
        text += "\nGlobal options:\n" + optionLines(globals)
        if let discussion = command.discussion { text += "\n" + wrap(discussion, width: 88) + "\n" }
        if !command.examples.isEmpty {
            text += "\nExamples:\n" + command.examples.map { "  \($0.commandLine)\n      \($0.explanation)" }.joined(separator: "\n") + "\n"
        }
        return text
    }

    static func optionLines(_ options: [Option]) -> String {
        options.map { option in
            var line = "  " + option.synopsis.padding(toLength: max(18, option.synopsis.count), withPad: " ", startingAt: 0) + " " + option.help
            var notes: [String] = []
            if let value = option.defaultText { notes.append("default: \(value)") }
            if let variable = option.environment { notes.append("$\(variable)") }
            if !notes.isEmpty { line += " (" + notes.joined(separator: "; ") + ")" }
            return line
        }.joined(separator: "\n") + "\n"
    }

    static func wrap(_ text: String, width: Int) -> String {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            if line.count + word.count + 1 > width, !line.isEmpty { lines.append(line); line = "" }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n")
    }

    /// The short form after a usage error: the usage line and where to read more.
    static func usageHint(_ command: Command?) -> String {
        guard let command else { return "Usage: topregions [--store PATH] [--json] COMMAND [options]\nSee `topregions --help`.\n" }
        return "Usage: \(command.usage)\nSee `topregions \(command.name) --help`.\n"
    }

    // MARK: The man page

    static func manPage() -> String {
        func roff(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
                .split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : String($0) }.joined(separator: "\n")
        }
        var page = ".TH TOPREGIONS 1 \"\" \"topregions \(version)\" \"User Commands\"\n"
        page += ".SH NAME\ntopregions \\- a photo-gallery backend that keeps Flickr's top regions\n"
        page += ".SH SYNOPSIS\n.B topregions\n[\\-\\-store PATH] [\\-\\-pool N] [\\-\\-json] [\\-\\-quiet] COMMAND [options]\n"
        page += ".SH DESCRIPTION\n" + roff("topregions syncs recent geotagged Flickr photo metadata into a store, groups the photos by region, keeps Recents and Favorites, and shows the top regions, a region's photos and the user's lists, also live.") + "\n"
        page += ".SH COMMANDS\n"
        for command in Commands.all {
            page += ".SS \(roff(command.name))\n" + roff(command.abstract) + "\n.PP\n.B " + roff(command.usage) + "\n"
            for argument in command.arguments { page += ".TP\n.I \(roff(argument.name))\n\(roff(argument.help))\n" }
            for option in command.options {
                page += ".TP\n.B \(roff(option.synopsis))\n\(roff(option.help))" + (option.defaultText.map { roff(" (default: \($0))") } ?? "")
                    + (option.environment.map { roff(" ($\($0))") } ?? "") + "\n"
            }
            if let discussion = command.discussion { page += ".PP\n" + roff(discussion) + "\n" }
            for example in command.examples { page += ".PP\n.nf\n\(roff(example.commandLine))\n.fi\n\(roff(example.explanation))\n" }
        }
        page += ".SH GLOBAL OPTIONS\n"
        for option in GlobalOptions.all { page += ".TP\n.B \(roff(option.synopsis))\n\(roff(option.help))\n" }
        page += ".TP\n.B \\-\\-version\nprint the version\n"
        page += ".SH ENVIRONMENT\n" + environment.map { ".TP\n.B \(roff($0.0))\n\(roff($0.1))\n" }.joined()
        page += ".SH FILES\n.TP\n.I STORE.sync\\-lock, STORE.daemon\\-lock\nlocks held during a sync pass and while a daemon runs; harmless when stale (a PostgreSQL store uses advisory locks instead)\n"
        page += ".SH EXIT STATUS\n" + exitStatuses.map { ".TP\n.B \($0.0)\n\(roff($0.1))\n" }.joined()
        return page
    }

    // MARK: Shell completions

    static func completion(_ shell: String) -> String? {
        let names = Commands.all.map(\.name)
        switch shell {
        case "bash":
            var script = "# bash completion for topregions\n_topregions() {\n    local cur prev command\n    cur=\"${COMP_WORDS[COMP_CWORD]}\"\n    prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
            script += "    command=\"\"\n    for word in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do case \"$word\" in -*) ;; *) command=\"$word\"; break ;; esac; done\n"
            script += "    case \"$prev\" in\n        --store|--output|--api-key-file) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n        --format) COMPREPLY=($(compgen -W \"json xml\" -- \"$cur\")); return ;;\n    esac\n"
            script += "    case \"$command\" in\n"
            for command in Commands.all {
                let words = command.options.map { "--" + $0.name } + GlobalOptions.all.map { "--" + $0.name }
                script += "        \(command.name)) COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\")) ;;\n"
            }
            script += "        *) COMPREPLY=($(compgen -W \"\(names.joined(separator: " ")) --store --json --quiet --help --version\" -- \"$cur\")) ;;\n    esac\n}\ncomplete -F _topregions topregions\n"
            return script
        case "zsh":
            var script = "#compdef topregions\n_topregions() {\n    local -a commands\n    commands=(\n"
            for command in Commands.all { script += "        '\(command.name):\(command.abstract.replacingOccurrences(of: "'", with: "'\\''"))'\n" }
            script += "    )\n    if (( CURRENT == 2 )); then _describe command commands; return; fi\n    case ${words[2]} in\n"
            for command in Commands.all {
                let specs = (command.options + GlobalOptions.all).map { option -> String in
                    let help = option.help.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "(").replacingOccurrences(of: "]", with: ")")
                    return "'--\(option.name)[\(help)]" + (option.takesValue ? ":\(option.valueName ?? "value"):\((option.name == "store" || option.name == "output") ? "_files" : "")'" : "'")
                }
                script += "        \(command.name)) _arguments \(specs.joined(separator: " ")) ;;\n"
            }
            script += "    esac\n}\n_topregions \"$@\"\n"
            return script
        case "fish":
            var script = "# fish completion for topregions\ncomplete -c topregions -f\n"
            for command in Commands.all {
                script += "complete -c topregions -n '__fish_use_subcommand' -a \(command.name) -d '\(command.abstract.replacingOccurrences(of: "'", with: "\\'"))'\n"
                for option in command.options {
                    script += "complete -c topregions -n '__fish_seen_subcommand_from \(command.name)' -l \(option.name)" + (option.takesValue ? " -r" : "")
                        + " -d '\(option.help.replacingOccurrences(of: "'", with: "\\'"))'\n"
                }
            }
            for option in GlobalOptions.all { script += "complete -c topregions -l \(option.name)" + (option.takesValue ? " -r" : "") + " -d '\(option.help)'\n" }
            return script
        default:
            return nil
        }
    }
}
