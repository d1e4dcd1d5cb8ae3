import Foundation
import PostgreSQL

/// The sync lock of a gallery in PostgreSQL: a session advisory lock, held on a connection
/// of its own for the length of a pass. Whatever host the holder runs on, a second pass
/// finds it taken; a holder that dies (killed, its host gone) releases it with its
/// connection, and nothing is left behind to clean up.
///
/// `@unchecked Sendable`: the connection and `released` are used under `lock` only.
final class PostgresSyncLock: SyncLockHold, @unchecked Sendable {
    /// The lock's key: one per database (the store lives in one schema of it).
    static let key: Int64 = 0x746f_7072_6567_6e73  // "topregns"

    private let connection: PostgresConnection
    private let lock = NSLock()
    private var released = false

    private init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Takes the lock at once, or throws `SyncLock.Busy`.
    static func acquire(location: String) throws -> PostgresSyncLock {
        let connection = try PostgresConnection(location)
        do {
            guard try connection.tryAdvisoryLock(key) else {
                throw SyncLock.Busy(pid: nil, holder: "sync")
            }
        } catch {
            connection.close()
            throw error
        }
        return PostgresSyncLock(connection: connection)
    }

    /// The lock is its session's: a session that still answers still holds it (only
    /// `release` unlocks it).
    func confirm() throws {
        try lock.withLock {
            guard !released, (try? connection.query("SELECT 1")) != nil else {
                throw GalleryError(.storeUnreachable, "the sync lock was lost with its connection to the database (a restart, or a session ended): "
                                   + "the pass stops here, whole page groups stored", hint: "the next pass reads on from there")
            }
        }
    }

    func release() {
        lock.withLock {
            guard !released else { return }
            released = true
            _ = try? connection.advisoryUnlock(Self.key)
            connection.close()
        }
    }

    deinit { release() }
}
