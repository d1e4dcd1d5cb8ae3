import CSQLite
import Foundation
import Synchronization

/// Whether another connection, in this process or another, has committed to a SQLite file
/// since the last look, cheaply enough for a cache to ask before every answer.
///
/// In WAL mode it reads the WAL-index header in shared memory (mapped through SQLite's
/// own VFS by a connection of its own): a writer rewrites it at every commit, before the
/// commit returns; reading it takes no lock and no system call. Otherwise (no shared
/// memory) it asks `PRAGMA data_version` on that connection, with a busy timeout of zero.
final class DataVersionProbe: Sendable {
    private let connection: Mutex<Connection?>
    /// The mapped WAL-index, as an address (valid while the connection is open).
    private let walIndex: Int
    /// Readers of the mapped header now; `close` waits for them before it unmaps.
    private let readers = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)
    /// Bumped when the state cannot be read: a caller that cannot know treats the store as
    /// changed.
    private let failures = Atomic<UInt64>(0)

    init(path: String, readOnly: Bool) {
        let connection = try? Connection(path: path, flags: readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE)
        connection?.setBusyTimeout(milliseconds: 0)
        try? connection?.execute("PRAGMA query_only = 1")
        _ = try? connection?.scalar("PRAGMA data_version")  // opens the WAL-index, if any
        walIndex = connection.flatMap { topregions_sqlite_wal_index($0.handle) }.map { Int(bitPattern: $0) } ?? 0
        self.connection = Mutex(connection)
    }

    /// Whether it reads the WAL-index header (else `data_version`).
    var readsSharedMemory: Bool { walIndex != 0 }

    /// A number that differs from every earlier one after any commit.
    func current() -> UInt64 {
        if walIndex != 0, let state = headerState() { return state }
        let version = connection.withLock { connection in try? connection?.scalar("PRAGMA data_version")?.int64 }
        if let version { return UInt64(bitPattern: version) }
        return unknown()
    }

    /// The header's state, when the two copies agree within a few tries.
    private func headerState() -> UInt64? {
        readers.add(1, ordering: .sequentiallyConsistent)
        defer { readers.subtract(1, ordering: .releasing) }
        guard !closed.load(ordering: .sequentiallyConsistent), let header = UnsafePointer<UInt8>(bitPattern: walIndex) else { return nil }
        for _ in 0..<3 {
            let state = topregions_sqlite_wal_index_state(header)
            if state != 0 { return state }
        }
        return unknown()  // a commit is being written: changed, or about to be
    }

    /// A value never returned before (the high bit is never set by the other sources'
    /// values that matter: a change is all a caller looks for).
    private func unknown() -> UInt64 {
        (1 << 63) | failures.add(1, ordering: .relaxed).newValue
    }

    func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
        while readers.load(ordering: .sequentiallyConsistent) > 0 { sched_yield() }  // a read of 96 bytes
        connection.withLock { $0 = nil }
    }
}
