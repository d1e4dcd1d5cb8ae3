import Foundation
import PostgreSQL
import Store

/// A daemon's presence on a PostgreSQL store, seen from every host: a shared advisory
/// lock held on a connection of its own for the daemon's life, its session named
/// `topregions daemon PID@HOST` (`application_name`). `status` on any host lists the
/// sessions holding the lock; a daemon that dies leaves with its connection.
///
/// `@unchecked Sendable`: its connection is used under `lock` only.
final class PostgresDaemonPresence: SyncLockHold, @unchecked Sendable {
    /// The lock's key (another than the sync lock's): one per database.
    static let key: Int64 = 0x746f_7072_6461_656d  // "toprdaem"
    private static let namePrefix = "topregions daemon "
    /// PostgreSQL keeps the first 63 bytes of a session's name.
    private static let nameBytes = 63

    private let location: String
    private let lock = NSLock()
    private var connection: PostgresConnection?

    private init(location: String) {
        self.location = location
    }

    /// Shows this process as a daemon of the store at `location` until `release`.
    static func register(location: String) throws -> PostgresDaemonPresence {
        let presence = PostgresDaemonPresence(location: location)
        try presence.lock.withLock { try presence.connect() }
        return presence
    }

    private func connect() throws {
        let fresh = try PostgresConnection(location)
        do {
            _ = try fresh.query("SELECT set_config('application_name', $1, false)", [.text(Self.sessionName(pid: getpid(), host: RunningDaemon.thisHost))])
            try fresh.advisoryLockShared(Self.key)
        } catch {
            fresh.close()
            throw error
        }
        connection = fresh
    }

    /// Shows the daemon again when its connection was lost (a server restart): called
    /// before each pass and every few seconds of a sleep. Never throws: a daemon that
    /// cannot be shown still syncs.
    func confirm() {
        lock.withLock {
            if let connection, (try? connection.query("SELECT 1")) != nil { return }
            connection?.close()
            connection = nil
            try? connect()
        }
    }

    func release() {
        lock.withLock {
            if let connection { _ = try? connection.advisoryUnlock(Self.key); connection.close() }
            connection = nil
        }
    }

    deinit { release() }

    /// `topregions daemon PID@HOST`, the host cut to fit and kept to printable ASCII (the
    /// server would turn anything else into `?`).
    static func sessionName(pid: Int32, host: String) -> String {
        let head = namePrefix + "\(pid)@"
        let printable = host.unicodeScalars.filter(isHostCharacter).map(Character.init)
        return head + String(printable.prefix(max(0, nameBytes - head.utf8.count)))
    }

    /// The daemons of the database: the sessions holding the lock.
    static func running(in context: ReadContext) throws -> [RunningDaemon] {
        try context.rows(PostgresConnection.advisoryLockHoldersQuery, [.integer(key)]).map { parse($0.values.count > 1 ? $0.values[1].string : nil) }
    }

    /// A session's name as a daemon: its pid and host, or neither when it is not one this
    /// program gave (a session name is anyone's to set).
    static func parse(_ name: String?) -> RunningDaemon {
        guard let name, name.hasPrefix(namePrefix) else { return RunningDaemon(pid: nil, host: nil) }
        let rest = name.dropFirst(namePrefix.count)
        guard let at = rest.firstIndex(of: "@") else { return RunningDaemon(pid: nil, host: nil) }
        let pid = Int32(rest[..<at]).flatMap { $0 > 0 ? $0 : nil }
        let host = String(rest[rest.index(after: at)...])
        let isHost = !host.isEmpty && host.unicodeScalars.allSatisfy(isHostCharacter)
        return RunningDaemon(pid: pid, host: isHost ? host : nil)
    }

    /// What a host's name holds in a session's name, as `sessionName` writes it and `parse`
    /// reads it: printable ASCII, no spaces or commas (which the status line separates with).
    private static func isHostCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value > 0x20 && scalar.value < 0x7F && scalar != ","
    }
}
