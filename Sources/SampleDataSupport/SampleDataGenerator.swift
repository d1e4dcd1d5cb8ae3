import Foundation

/// Runs SampleData's generator, `SampleData/generate.py`, which writes Flickr responses of
/// any size with the bundled set's shapes (and its non-ASCII titles). Tests and the
/// benchmark harness share it so that both generate data the same way.
public enum SampleDataGenerator {
    /// The generator script in the checkout's `SampleData` folder.
    public static let script = Repository.sampleData.appendingPathComponent("generate.py")

    /// `photos` photos as JSON pages of 500, no images, into `directory`: the shape of a
    /// large sync's input (`sync.ingest`, the bulk-load crash test).
    public static func generateJSONPages(photos: Int, into directory: URL) throws {
        try run(["--photos", "\(photos)", "--per-page", "500", "--formats", "json", "--images", "0", "--out", directory.path])
    }

    /// Runs the generator with `arguments`; a failure names its exit status and what it
    /// wrote to standard error.
    public static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path] + arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // Read before waiting: a generator that fills the pipe would otherwise never exit.
        let errorOutput = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SampleDataGeneratorError(arguments: arguments, status: process.terminationStatus,
                                           standardError: String(decoding: errorOutput, as: UTF8.self))
        }
    }
}

/// SampleData's generator exited with a failure.
public struct SampleDataGeneratorError: Error, CustomStringConvertible {
    /// The arguments the generator was run with.
    public let arguments: [String]
    /// The generator's exit status.
    public let status: Int32
    /// Everything the generator wrote to standard error.
    public let standardError: String

    /// The command, its exit status, and the last three lines of its standard error.
    public var description: String {
        let reason = standardError.split(separator: "\n").suffix(3).joined(separator: " | ")
        return "SampleData's generator (\(SampleDataGenerator.script.path) \(arguments.joined(separator: " "))) exited with status \(status)"
            + (reason.isEmpty ? "" : ": \(reason)")
    }
}
