// topregions-bench: measures TopRegions against the baseline a user would otherwise pick,
// in the same run. One JSON object per line per figure on stdout.
//
//   swift run -c release topregions-bench [SCENARIO …] [--quick]
//
// SCENARIO is a name or a prefix (`store` runs store.insert and store.fetch); none runs all.
import Foundation

let scenarios: [Scenario] = StoreBenchmarks.scenarios + ControllerBenchmarks.scenarios + ProductBenchmarks.scenarios + [IngestCeiling.scenario] + DecodeBenchmarks.scenarios + [ProductBenchmarks.daemonScenario]
    + HTTPBenchmarks.scenarios + ScaleBenchmarks.scenarios + [StallBenchmark.scenario] + ObserveBenchmarks.scenarios + LedgerBenchmarks.scenarios + [SearchBenchmarks.scenario, PostgresCopyBenchmarks.scenario, PostgresQueryBenchmarks.scenario, PostgresIngestBenchmarks.scenario, PostgresStoreBenchmarks.scenario, FanoutBenchmarks.scenario]

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print("usage: topregions-bench [SCENARIO …] [--quick]\n\nscenarios:")
    for scenario in scenarios { print("  \(scenario.name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(scenario.summary)") }
    exit(0)
}
let quick = arguments.contains("--quick")
arguments.removeAll { $0 == "--quick" }
if let unknown = arguments.first(where: { $0.hasPrefix("-") }) {
    FileHandle.standardError.write(Data("topregions-bench: unknown option \(unknown)\n".utf8))
    exit(64)
}
let selected = arguments.isEmpty ? scenarios : scenarios.filter { scenario in
    arguments.contains { scenario.name == $0 || scenario.name.hasPrefix($0 + ".") }
}
if selected.isEmpty {
    FileHandle.standardError.write(Data("topregions-bench: no scenario matches \(arguments.joined(separator: " ")); see --help\n".utf8))
    exit(64)
}
#if DEBUG
FileHandle.standardError.write(Data("topregions-bench: this is a debug build; figures mean little (use swift run -c release)\n".utf8))
#endif
var failed = false
for scenario in selected {
    do {
        for figure in try scenario.run(quick) { print(figure.json) }
    } catch {
        FileHandle.standardError.write(Data("topregions-bench: \(scenario.name) failed: \(error)\n".utf8))
        failed = true
    }
}
exit(failed ? 1 : 0)
