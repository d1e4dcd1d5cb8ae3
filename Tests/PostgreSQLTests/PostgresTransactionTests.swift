import Foundation
import Synchronization
import PostgreSQL
import TestSupport
import Testing

private struct Refused: Error {}

@Suite("PostgreSQL transactions", postgresAvailable)
struct PostgresTransactionTests {
    /// A counter table, and a second connection to the same database to collide with.
    private func counter() throws -> (PostgresConnection, PostgresConnection) {
        let (url, connection) = try freshDatabase()
        try connection.execute("CREATE TABLE counter (id int PRIMARY KEY, value bigint NOT NULL); INSERT INTO counter VALUES (1, 0)")
        return (connection, try PostgresConnection(url))
    }

    private func increment(_ connection: PostgresConnection) throws {
        try connection.query("UPDATE counter SET value = value + 1 WHERE id = 1")
    }

    private func value(_ connection: PostgresConnection) throws -> Int64? {
        try connection.query("SELECT value FROM counter WHERE id = 1").integer(0, "value")
    }

    @Test("With retry turns, a transaction holds the turns' lock from its second try until it is done; one that succeeds at once never takes it")
    func retriesTakeTurns() throws {
        let (connection, other) = try counter()
        let key: Int64 = 0x7475_726e_7300_0001
        let holder = { try other.advisoryLockHolder(key) }
        var heldDuring: [Int32?] = []
        try connection.transaction(retryTurns: key) { transaction in
            heldDuring.append(try holder())
            let seen = try value(transaction) ?? -1
            if heldDuring.count == 1 { try increment(other) }  // commits between our read and our write
            try transaction.query("UPDATE counter SET value = $1 WHERE id = 1", [.integer(seen + 1)])
        }
        #expect(heldDuring == [nil, connection.backendProcessID], "not on the first try; on the second")
        #expect(try holder() == nil, "released when done")
        #expect(try value(other) == 2)

        try connection.transaction(retryTurns: key) { transaction in heldDuring.append(try holder()) }
        #expect(heldDuring.last == .some(nil), "a first try that commits takes no turn")

        // Every try failing: the lock goes with the error too.
        #expect(throws: PostgresError.self) {
            try connection.transaction(attempts: 3, retryTurns: key) { transaction in
                try transaction.execute("DO $$ BEGIN RAISE EXCEPTION 'collided' USING ERRCODE = '40001'; END $$")
            }
        }
        #expect(try holder() == nil, "released after the last try failed")
    }

    @Test("A serialization failure runs the transaction again from the start, on what the other committed")
    func serializationFailuresAreRetried() throws {
        let (connection, other) = try counter()
        var attempts = 0
        let written = try connection.transaction { transaction -> Int64 in
            attempts += 1
            let seen = try value(transaction) ?? -1
            if attempts == 1 { try increment(other) }  // commits between our read and our write
            try transaction.query("UPDATE counter SET value = $1 WHERE id = 1", [.integer(seen + 1)])
            return seen + 1
        }
        #expect(attempts == 2)
        #expect(written == 2)
        #expect(try value(other) == 2)
    }

    @Test("Past its attempts a transaction throws the serialization failure, having changed nothing")
    func attemptsAreBounded() throws {
        let (connection, other) = try counter()
        var attempts = 0
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction(attempts: 3) { transaction in
                attempts += 1
                let seen = try value(transaction) ?? -1
                try increment(other)
                try transaction.query("UPDATE counter SET value = $1 WHERE id = 1", [.integer(seen + 100)])
            }
        }
        #expect(attempts == 3)
        #expect(error?.isRetryableTransactionFailure == true)
        #expect(try value(other) == 3)  // the other connection's three increments only
    }

    @Test("Any other error rolls back and is thrown at once")
    func otherErrorsRollBack() throws {
        let (connection, _) = try counter()
        var attempts = 0
        #expect(throws: Refused.self) {
            try connection.transaction { transaction in
                attempts += 1
                try increment(transaction)
                throw Refused()
            }
        }
        #expect(attempts == 1)
        #expect(try value(connection) == 0)
        // The connection is usable again, outside any transaction.
        try connection.transaction { try increment($0) }
        #expect(try value(connection) == 1)
    }

    @Test("Concurrent serializable increments from four connections, each on its own thread, lose none")
    func concurrentIncrementsLoseNone() throws {
        let (connection, _) = try counter()
        let database = try #require(try connection.query("SELECT current_database() AS name").text(0, "name"))
        let url = try PostgresTestServer.shared().url(database: database)
        let perWorker = 25
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let worker = try PostgresConnection(url)
                for _ in 0..<perWorker {
                    // Enough attempts that four contenders always get through; the bound itself
                    // is tested above.
                    try worker.transaction(attempts: 200) { transaction in
                        let seen = try transaction.query("SELECT value FROM counter WHERE id = 1").integer(0, "value") ?? -1
                        try transaction.query("UPDATE counter SET value = $1 WHERE id = 1", [.integer(seen + 1)])
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try value(connection) == Int64(4 * perWorker))
    }
}
