// topregions: the TopRegions command-line tool and sync daemon.
import Flickr
import Foundation
import Store
import TopRegionsKit

let version = "0.1.0"

func usage() -> String {
    var text = """
        topregions \(version): a photo-gallery backend that keeps Flickr's top regions.

        Usage: topregions [--store PATH] [--json] COMMAND [options]

        Commands:

        """
    for command in Commands.all { text += "  \(command.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(command.abstract)\n" }
    text += """

        Global options: --store PATH (default: $TOPREGIONS_STORE, else $XDG_DATA_HOME/topregions/store.sqlite),
        --json (JSON on stdout), --help, --version. `topregions COMMAND --help` tells more.
        Exit status: 0 success, 1 failure at run time, 64 usage error, 75 another sync holds the store.

        """
    return text
}

func fail(_ message: String, code: Int32, usage extra: String? = nil) -> Never {
    FileHandle.standardError.write(Data("topregions: \(TerminalText.escape(message))\n".utf8))
    if let extra { FileHandle.standardError.write(Data(("\n" + extra).utf8)) }
    exit(code)
}

var arguments: Arguments
do {
    arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error)", code: 64, usage: usage())
}
if arguments.version {
    print("topregions \(version)")
    exit(0)
}
guard let name = arguments.command else {
    if arguments.help {
        print(usage(), terminator: "")
        exit(0)
    }
    fail("no command given", code: 64, usage: usage())
}
guard let command = Commands.named(name) else {
    fail("unknown command \"\(name)\"", code: 64, usage: usage())
}
if arguments.help {
    print(command.help, terminator: "")
    exit(0)
}
func run(_ command: Command, _ arguments: Arguments) async -> Never {
    var context = Context(arguments: arguments, output: Output(json: arguments.json), environment: ProcessInfo.processInfo.environment)
    do {
        exit(try await command.run(&context))
    } catch let error as UsageError {
        fail(error.description, code: 64, usage: command.help)
    } catch let error as ProcessLock.Busy {
        fail(error.description, code: 75)
    } catch {
        fail("\(error)", code: 1)
    }
}

await run(command, arguments)
