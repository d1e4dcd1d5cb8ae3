import Foundation
import Store
import StoreTestSupport
import Testing

/// A fresh directory under the system's temporary directory, removed when the test ends.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("store-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The fixture executable built beside the test bundle.
func fixtureWriterURL() throws -> URL {
    let testExecutable = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    var directory = testExecutable.deletingLastPathComponent()
    // The test bundle is `<build>/TopRegionsPackageTests.xctest` (a file on Linux).
    for _ in 0..<3 {
        let candidate = directory.appendingPathComponent("store-fixture-writer")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw StoreError(.recordNotFound, "store-fixture-writer was not built next to \(testExecutable.path)")
}

/// A running fixture process whose stdout lines are collected as they arrive.
final class FixtureProcess: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let lock = NSLock()
    private var buffer = Data()
    private var lines: [String] = []

    init(_ arguments: [String]) throws {
        process.executableURL = try fixtureWriterURL()
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
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

    var outputLines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    /// The batches the process reported as committed.
    var committedBatches: [Int64] {
        outputLines.compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count >= 2 && fields[0] == "committed" ? Int64(fields[1]) : nil
        }
    }

    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Collect what was written before the kill.
        append(output.fileHandleForReading.readDataToEndOfFile())
        output.fileHandleForReading.readabilityHandler = nil
    }

    func wait() -> Int32 {
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        append(output.fileHandleForReading.readDataToEndOfFile())
        return process.terminationStatus
    }

    var standardError: String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}

/// Waits until `condition` holds or `timeout` passes; true when it held.
func eventually(timeout: TimeInterval = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

/// Collects store events from an observer, thread-safely.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [(event: StoreEvent, receivedAt: Date)] = []

    func append(_ event: StoreEvent) {
        lock.lock()
        storage.append((event, Date()))
        lock.unlock()
    }

    var events: [StoreEvent] {
        lock.lock()
        defer { lock.unlock() }
        return storage.map(\.event)
    }

    var timedEvents: [(event: StoreEvent, receivedAt: Date)] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    var committedEntries: [HistoryEntry] {
        events.compactMap { event in
            if case .committed(let entry, _) = event { return entry }
            return nil
        }
    }
}

func makeMemoryStore() throws -> Store {
    try Store(inMemorySchema: TestSchema.schema, migrator: TestSchema.migrator)
}
