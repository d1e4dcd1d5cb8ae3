import CSQLite
import Foundation
import Synchronization

/// A SQLite file's `PRAGMA data_version`, asked on a connection of its own: it changes
/// whenever another connection, in this process or another, has committed. Reading it
/// reads the WAL's shared-memory header and never waits for a lock (its busy timeout is
/// zero), so a cache may ask it before every answer.
final class DataVersionProbe: Sendable {
    private let connection: Mutex<Connection?>
    /// Bumped when the version cannot be read: a caller that cannot know treats the store
    /// as changed.
    private let failures = Atomic<UInt64>(0)

    init(path: String, readOnly: Bool) {
        let connection = try? Connection(path: path, flags: readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE)
        connection?.setBusyTimeout(milliseconds: 0)
        try? connection?.execute("PRAGMA query_only = 1")
        self.connection = Mutex(connection)
    }

    /// A number that differs from every earlier one after any commit.
    func current() -> UInt64 {
        let version = connection.withLock { connection in try? connection?.scalar("PRAGMA data_version")?.int64 }
        if let version { return UInt64(bitPattern: version) }
        // Unknown: a value never returned before (the high bit is never set by SQLite's).
        return (1 << 63) | failures.add(1, ordering: .relaxed).newValue
    }

    func close() {
        connection.withLock { $0 = nil }
    }
}
