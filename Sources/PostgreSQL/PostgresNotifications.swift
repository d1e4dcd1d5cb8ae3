import CPostgreSQL
import Foundation

/// A notification sent with `NOTIFY` (or `pg_notify`) by any session of the database.
public struct PostgresNotification: Sendable, Hashable {
    /// The channel it was sent on.
    public let channel: String
    /// The text sent with it ("" when none).
    public let payload: String
    /// The server process of the session that sent it.
    public let senderProcessID: Int32
}

extension PostgresConnection {
    /// Starts listening on `channel`: every notification sent on it by a transaction that
    /// commits after this returns is delivered to `notifications(waitingUpTo:)`.
    public func listen(_ channel: String) throws {
        try execute("LISTEN \(Self.quotedIdentifier(channel))")
    }

    /// Stops listening on `channel`.
    public func unlisten(_ channel: String) throws {
        try execute("UNLISTEN \(Self.quotedIdentifier(channel))")
    }

    /// Sends a notification on `channel`; inside a transaction it is delivered when (and
    /// only if) the transaction commits.
    public func notify(_ channel: String, payload: String = "") throws {
        try query("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)])
    }

    /// The notifications that have arrived, waiting up to `timeout` seconds for the first
    /// one when none has. The wait sleeps in `poll(2)` on the connection's socket, so an
    /// idle listener uses no CPU. Throws `connectionLost` when the connection is gone
    /// (server restart, network cut, terminated backend): `reconnect()` and listen again.
    /// The wait also ends, with what has arrived, when `wakeDescriptor` (a pipe's read end,
    /// say) becomes readable: another thread's way to stop a listener.
    public func notifications(waitingUpTo timeout: TimeInterval, wakeDescriptor: Int32? = nil) throws -> [PostgresNotification] {
        let connection = try open()
        guard PQconsumeInput(connection) == 1 else { throw connectionError() }
        var arrived = drainNotifications(connection)
        if !arrived.isEmpty || timeout <= 0 { return arrived }
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw connectionError() }
        var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
        if let wakeDescriptor { descriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)) }
        let milliseconds = Int32(clamping: Int((min(timeout, 86_400) * 1000).rounded(.up)))
        let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        if ready > 0 && descriptors[0].revents != 0 {
            guard PQconsumeInput(connection) == 1, PQstatus(connection) == CONNECTION_OK else { throw connectionError() }
            arrived = drainNotifications(connection)
        }
        // ready == 0 is the timeout; ready < 0 (EINTR) returns what there is, for the caller
        // to wait again.
        return arrived
    }

    private func drainNotifications(_ connection: OpaquePointer) -> [PostgresNotification] {
        var arrived: [PostgresNotification] = []
        while let notice = PQnotifies(connection) {
            arrived.append(PostgresNotification(channel: String(cString: notice.pointee.relname),
                                                payload: notice.pointee.extra.map { String(cString: $0) } ?? "",
                                                senderProcessID: notice.pointee.be_pid))
            PQfreemem(notice)
        }
        return arrived
    }

    /// `name` as a double-quoted SQL identifier (for statements that take no parameters,
    /// such as LISTEN).
    static func quotedIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
