// topregions: the TopRegions command-line tool and sync daemon.
import Foundation
import PostgreSQL
import TopRegionsKit

let version = "0.3.0"

/// Prints the message (and, for a usage error, the usage line) on stderr and exits.
func fail(_ message: String, code: Int32, usageHint: String? = nil) -> Never {
    // A URL a person typed may be quoted back (an unknown option's word): never its password.
    StandardStreams.err(Data("topregions: \(TerminalText.escape(PostgresLocation.redactingSecrets(in: message)))\n".utf8))
    if let usageHint { StandardStreams.err(Data(usageHint.utf8)) }
    exit(code)
}

StandardStreams.guardDescriptors()

let words: CommandLineWords
do {
    words = try CommandLineWords(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error)", code: ExitStatus.usage, usageHint: HelpText.usageHint(nil))
}
if words.version {
    StandardStreams.out(Data("topregions \(version)\n".utf8))
    exit(0)
}
guard let name = words.command else {
    if words.flags.contains("help") {
        StandardStreams.out(Data(HelpText.overview().utf8))
        exit(0)
    }
    if let option = words.rest.first(where: { $0.hasPrefix("-") }) {
        fail("unknown option \(option)", code: ExitStatus.usage, usageHint: HelpText.usageHint(nil))
    }
    fail("no command given", code: ExitStatus.usage, usageHint: HelpText.usageHint(nil))
}
guard let command = Commands.named(name) else {
    fail(Commands.unknown(name), code: ExitStatus.usage, usageHint: HelpText.usageHint(nil))
}
if words.flags.contains("help") {
    StandardStreams.out(Data(HelpText.help(command).utf8))
    exit(0)
}

func run(_ command: Command, _ words: CommandLineWords) async -> Never {
    do {
        var invocation = try Invocation(command: command, words: words, environment: ProcessInfo.processInfo.environment)
        // A bad --pool or TOPREGIONS_POSTGRES_POOL is a usage error whatever the command.
        _ = try invocation.postgresPoolSize(default: 1)
        exit(try await command.run(&invocation))
    } catch let error as UsageError {
        fail(error.description, code: ExitStatus.usage, usageHint: HelpText.usageHint(error.command ?? command))
    } catch {
        fail(ExitStatus.message(error), code: ExitStatus.of(error))
    }
}

await run(command, words)
