import Foundation

/// Shells running at once, each its commands one after another, each command printing its
/// exit status (`echo $?`): what several processes of the tool do to one store together.
enum ShellWorkers {
    /// Runs one shell per script (the tool's words for each command, run with `store`)
    /// and waits for all; how many commands ended with each exit status.
    static func exitStatuses(_ scripts: [[[String]]], store: String) throws -> [String: Int] {
        let executable = try Tool.executable().path
        var workers: [(Process, Pipe)] = []
        for script in scripts {
            let lines = script.map { words in
                ([executable, "--store", store] + words).map { "'\($0)'" }.joined(separator: " ") + " >/dev/null 2>&1; echo $?"
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", lines.joined(separator: "\n")]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            workers.append((process, out))
        }
        var statuses: [String: Int] = [:]
        for (process, out) in workers {
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            for status in text.split(separator: "\n") { statuses[String(status), default: 0] += 1 }
        }
        return statuses
    }
}
