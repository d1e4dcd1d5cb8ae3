import CSQLite
import Foundation

/// When a commit copies the WAL back into the database file (a checkpoint), in place of
/// SQLite's fixed `wal_autocheckpoint`.
///
/// A checkpoint copies the newest version of every page written since the last one and
/// syncs the WAL and the database file. A large sync dirties index pages all over the
/// store, commit after commit: the further apart the checkpoints, the more rewrites of
/// one page fold into one copy and the fewer syncs there are. But a WAL much larger than
/// the database buys nothing more and only takes disk. So the threshold is half the
/// database's size, between 10,000 and 40,000 pages, so a small store checkpoints as
/// often as SQLite's default would and a large sync folds many rewrites into one copy.
///
/// Once a checkpoint lets the WAL start over, SQLite truncates the file to
/// `restingWALBytes` (`journal_size_limit`), so a store at rest keeps at most that much
/// WAL on disk, as with the fixed 10,000 pages before.
enum CheckpointPolicy {
    static let minimumPages: Int64 = 10_000
    static let maximumPages: Int64 = 40_000
    static let restingWALBytes = 40 * 1024 * 1024

    /// The WAL's size in pages after which a commit checkpoints, for a database file of
    /// `databasePages` pages.
    static func thresholdPages(databasePages: Int64) -> Int64 {
        min(max(databasePages / 2, minimumPages), maximumPages)
    }

    /// Installs the policy on the writer connection (replacing `wal_autocheckpoint`, which
    /// is itself a WAL hook).
    static func install(on connection: Connection) throws {
        let pageSize = try connection.scalar("PRAGMA page_size")?.int64 ?? 4096
        try connection.execute("PRAGMA journal_size_limit = \(restingWALBytes)")
        // The hook's context is the page size itself, not a pointer: nothing to keep alive.
        sqlite3_wal_hook(connection.handle, { context, db, schemaName, walPages in
            let pageSize = Int64(Int(bitPattern: context))
            guard Int64(walPages) >= CheckpointPolicy.minimumPages, let db, let schemaName, pageSize > 0 else { return SQLITE_OK }
            let databasePages = CheckpointPolicy.fileSize(sqlite3_db_filename(db, schemaName)) / pageSize
            if Int64(walPages) >= CheckpointPolicy.thresholdPages(databasePages: databasePages) {
                // PASSIVE, as SQLite's own auto-checkpoint: copies what no reader still needs,
                // never waits; a busy result leaves the rest for a later commit.
                sqlite3_wal_checkpoint_v2(db, schemaName, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
            return SQLITE_OK
        }, UnsafeMutableRawPointer(bitPattern: Int(pageSize)))
    }

    /// The size in bytes of the file at `path`, or 0 when it cannot be read.
    private static func fileSize(_ path: UnsafePointer<CChar>?) -> Int64 {
        guard let path else { return 0 }
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : 0
    }
}
