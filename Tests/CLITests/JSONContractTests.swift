import Foundation
import SampleDataSupport
import TestSupport
import Testing

/// docs/cli.md states each command's JSON keys; the tool's output must have exactly those.
@Suite("The JSON contract in docs/cli.md")
struct JSONContractTests {
    /// Command → the keys docs/cli.md lists for it, from the block between its markers.
    private static func documentedKeys() throws -> [String: Set<String>] {
        let text = try String(contentsOf: Repository.root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        guard let start = text.range(of: "<!-- json-contract:begin -->"), let end = text.range(of: "<!-- json-contract:end -->") else { return [:] }
        var keys: [String: Set<String>] = [:]
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("- `") {
            let command = line.dropFirst(3).prefix { $0 != "`" }
            let rest = line.drop { $0 != ":" }
            let object = rest.firstIndex(of: "{").map { rest[$0...] }.flatMap { $0.firstIndex(of: "}").map { end in rest[rest.firstIndex(of: "{")!...end] } } ?? ""
            keys[String(command)] = Set(object.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
        }
        if var view = keys["photo"], keys["view"] != nil || text.contains("`view`: the same as `photo`") {
            view.insert("lastViewed")
            keys["view"] = view
        }
        return keys
    }

    @Test("Every command's --json output has the keys the document lists, no more, no fewer", arguments: StoreKind.available)
    func outputMatchesTheDocument(on kind: StoreKind) throws {
        let documented = try Self.documentedKeys()
        #expect(documented.count >= 10)
        let tool = try Tool(on: kind)
        let sync = try tool.run(["sync", "--json"])
        try tool.run(["favorites", "add", "53300015459"])
        // In order: the view comes before Recents is listed.
        let runs: [(String, [String])] = [
            ("regions", ["regions", "--json"]), ("photos", ["photos", "--region", "Yucatán", "--json"]), ("photo", ["photo", "53300015459", "--json"]),
            ("view", ["view", "53300015459", "--json"]), ("recents", ["recents", "--json"]), ("favorites", ["favorites", "--json"]),
            ("status", ["status", "--json"]), ("check", ["check", "--json"]), ("prune", ["prune", "--json"]),
            ("users", ["users", "--json"]), ("copy", ["copy", "--to", tool.directory.appendingPathComponent("copy.sqlite").path, "--json"]),
        ]
        #expect(sync.status == 0, "\(kind): \(sync.stderr)")
        var outputs: [String: Any] = ["sync": sync.json as Any]
        for (command, arguments) in runs { outputs[command] = try tool.run(arguments).json }
        for (command, keys) in documented {
            let value = outputs[command]
            let object = (value as? [[String: Any]])?.first ?? (value as? [String: Any])
            let found = try #require(object, "\(command) printed no JSON object: \(String(describing: value))")
            #expect(Set(found.keys) == keys, "\(kind), \(command): the tool prints \(found.keys.sorted()), docs/cli.md lists \(keys.sorted())")
        }
    }
}
