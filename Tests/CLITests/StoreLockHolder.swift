import Foundation

/// Another program holding a store's write lock, as a second process would: python3's
/// sqlite3 module in `BEGIN IMMEDIATE`, after running `sql` in that transaction (not
/// committed). The lock is held from `init` until `release` (or deinit).
final class StoreLockHolder {
    private let process = Process()
    private let input = Pipe()

    /// `exclusive`: the lock readers wait for too (`PRAGMA locking_mode = EXCLUSIVE`, then a
    /// write), as a program that keeps a store to itself would hold it.
    init(store: String, sql: String = "", exclusive: Bool = false) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            if sys.argv[3] == 'exclusive': db.execute('PRAGMA locking_mode = EXCLUSIVE')
            db.execute('BEGIN EXCLUSIVE' if sys.argv[3] == 'exclusive' else 'BEGIN IMMEDIATE')
            if sys.argv[3] == 'exclusive': db.execute('CREATE TABLE IF NOT EXISTS holder_lock (x)')
            if sys.argv[2]: db.execute(sys.argv[2])
            print('held', flush=True)
            sys.stdin.read()
            """, store, sql, exclusive ? "exclusive" : "shared"]
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
