import Foundation
import PostgreSQL
import TestSupport
import Testing

@Suite("PostgreSQL notifications and advisory locks", postgresAvailable)
struct PostgresNotificationTests {
    /// Waits until `connection` has received `count` notifications, or `timeout` passed.
    private func collect(_ count: Int, from connection: PostgresConnection, timeout: TimeInterval = 10) throws -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        let deadline = Date().addingTimeInterval(timeout)
        while received.count < count, Date() < deadline {
            received += try connection.notifications(waitingUpTo: deadline.timeIntervalSinceNow)
        }
        return received
    }

    @Test("A notification sent in a transaction arrives when it commits, with its payload; a rolled-back one never does")
    func notificationsFollowCommits() throws {
        let (url, listener) = try freshDatabase()
        let sender = try PostgresConnection(url)
        try listener.listen("history")
        try sender.execute("BEGIN")
        try sender.notify("history", payload: "17")
        #expect(try listener.notifications(waitingUpTo: 0.3) == [])
        try sender.execute("COMMIT")
        #expect(throws: CancellationError.self) {
            try sender.transaction(.readCommitted) { connection in
                try connection.notify("history", payload: "lost")
                throw CancellationError()
            }
        }
        try sender.notify("other-channel", payload: "not listened to")
        try sender.notify("history", payload: "18 \"quoted\" ünïcode")
        let received = try collect(2, from: listener)
        #expect(received.map(\.payload) == ["17", "18 \"quoted\" ünïcode"])
        #expect(received.allSatisfy { $0.channel == "history" && $0.senderProcessID == sender.backendProcessID })
        #expect(try listener.notifications(waitingUpTo: 0.2) == [])
    }

    @Test("A listener whose server restarts is told the connection is lost, and hears again after reconnecting")
    func listenersNoticeARestart() throws {
        let server = try PostgresTestServer()
        let listener = try PostgresConnection(server.url())
        try listener.listen("history")
        try server.restart()
        let error = #expect(throws: PostgresError.self) {
            for _ in 0..<50 { _ = try listener.notifications(waitingUpTo: 0.2) }
        }
        #expect(error?.kind == .connectionLost)
        #expect(!listener.isConnected)
        try listener.reconnect()
        try listener.listen("history")
        try PostgresConnection(server.url()).notify("history", payload: "after")
        #expect(try collect(1, from: listener).map(\.payload) == ["after"])
    }

    @Test("An advisory lock is held by one session of its database; a holder that is killed releases it with its connection")
    func advisoryLocksDieWithTheirHolder() throws {
        let (url, first) = try freshDatabase()
        let second = try PostgresConnection(url)
        let key: Int64 = 0x7470_5f73_796e_6321  // any 64-bit key: both halves are used
        #expect(try first.tryAdvisoryLock(key))
        #expect(try !second.tryAdvisoryLock(key))
        #expect(try second.advisoryLockHolder(key) == first.backendProcessID)
        // A lock of the same key in another database on the server is another lock:
        // neither held nor reported here.
        let (_, elsewhere) = try freshDatabase()
        #expect(try elsewhere.advisoryLockHolder(key) == nil)
        #expect(try elsewhere.tryAdvisoryLock(key))
        #expect(try elsewhere.advisoryUnlock(key))
        #expect(try first.advisoryUnlock(key))
        #expect(try second.advisoryLockHolder(key) == nil)

        // Another process takes it and sits idle between statements, as a daemon does
        // between passes, and is killed.
        let holder = Process()
        let commands = Pipe()
        holder.executableURL = URL(fileURLWithPath: try PostgresTestServer.shared().program("psql"))
        holder.arguments = [url, "-X", "-q"]
        holder.standardInput = commands
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        commands.fileHandleForWriting.write(Data("SELECT pg_advisory_lock(\(key));\n".utf8))
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        #expect(eventually(timeout: 20) { ((try? second.advisoryLockHolder(key)) ?? nil) != nil })
        #expect(try !second.tryAdvisoryLock(key))
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        #expect(eventually(timeout: 20) { (try? second.tryAdvisoryLock(key)) == true })
    }
}
