import Foundation
import Store

/// A fixture executable built beside the test bundle (`store-fixture-writer`, `gallery-fixture`).
public func fixtureURL(_ name: String = "store-fixture-writer") throws -> URL {
    let testExecutable = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    var directory = testExecutable.deletingLastPathComponent()
    // The test bundle is `<build>/TopRegionsPackageTests.xctest` (a file on Linux).
    for _ in 0..<3 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw StoreError(.recordNotFound, "\(name) was not built next to \(testExecutable.path)")
}

/// A running fixture process whose stdout lines are collected as they arrive.
public final class FixtureProcess: @unchecked Sendable {
    public let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let input = Pipe()
    private let lock = NSLock()
    private var buffer = Data()
    private var lines: [String] = []

    public init(_ arguments: [String], executable: String = "store-fixture-writer") throws {
        process.executableURL = try fixtureURL(executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            self?.append(handle.availableData)
        }
        try process.run()
    }

    private func append(_ data: Data) {
        lock.lock()
        defer { lock.unlock() }
        buffer.append(data)
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
            buffer.removeSubrange(buffer.startIndex...newline)
        }
    }

    /// Writes a line to the process's standard input.
    public func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Closes the process's standard input (it sees end of file).
    public func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    /// Waits until the process has written more than `count` lines; returns the line after
    /// the first `count`, or nil when `timeout` passed or the process ended first.
    public func line(after count: Int, timeout: TimeInterval = 30) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let lines = outputLines
            if lines.count > count { return lines[count] }
            if !process.isRunning {
                Thread.sleep(forTimeInterval: 0.05)
                let final = outputLines
                return final.count > count ? final[count] : nil
            }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return nil
    }

    public var outputLines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    /// The batches the process reported as committed.
    public var committedBatches: [Int64] {
        outputLines.compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count >= 2 && fields[0] == "committed" ? Int64(fields[1]) : nil
        }
    }

    public func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Collect what was written before the kill.
        append(output.fileHandleForReading.readDataToEndOfFile())
        output.fileHandleForReading.readabilityHandler = nil
    }

    public func wait() -> Int32 {
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        append(output.fileHandleForReading.readDataToEndOfFile())
        return process.terminationStatus
    }

    public var standardError: String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}

/// Waits until `condition` holds or `timeout` passes; true when it held.
public func eventually(timeout: TimeInterval = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}
