import Foundation

/// Another program holding a store's write lock, as a second process would: python3's
/// sqlite3 module in `BEGIN IMMEDIATE`, after running `sql` in that transaction (not
/// committed). The lock is held from `init` until `release` (or deinit).
final class StoreLockHolder {
    private let process = Process()
    private let input = Pipe()

    init(store: String, sql: String = "") throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute('BEGIN IMMEDIATE')
            if sys.argv[2]: db.execute(sys.argv[2])
            print('held', flush=True)
            sys.stdin.read()
            """, store, sql]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard said.hasPrefix("held") else {
            release()
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "python3 could not lock \(store): \(said)"])
        }
    }

    func release() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit { release() }
}
