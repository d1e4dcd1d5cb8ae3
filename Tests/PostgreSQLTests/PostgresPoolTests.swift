import Foundation
import Synchronization
import PostgreSQL
import TestSupport
import Testing

@Suite("A PostgreSQL connection pool", postgresAvailable)
struct PostgresPoolTests {
    /// The backends the pool opened: they, and only they, carry its application name.
    private func pooledBackends(_ observer: PostgresConnection) throws -> Int64 {
        try observer.query("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'pool_under_test' AND datname = current_database()")
            .integer(0, "n") ?? -1
    }

    @Test("Many threads share at most `size` connections, and every call's work is done")
    func threadsShareTheConnections() throws {
        let (url, observer) = try freshDatabase()
        try observer.execute("CREATE TABLE work (thread int, step int, PRIMARY KEY (thread, step))")
        let pool = try PostgresPool(url + "?application_name=pool_under_test", size: 3)
        let mostBackends = Mutex<Int64>(0)
        let counter = Mutex(try PostgresConnection(url))  // a libpq connection serves one caller at a time
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for step in 0..<25 {
                do {
                    try pool.withConnection { connection in
                        try connection.query("INSERT INTO work VALUES ($1, $2)", [.integer(Int64(thread)), .integer(Int64(step))])
                    }
                    if step % 5 == 0 {
                        let seen = try counter.withLock { try pooledBackends($0) }
                        mostBackends.withLock { $0 = max($0, seen) }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(try observer.query("SELECT count(*) AS n FROM work").integer(0, "n") == 200)
        #expect(pool.openConnections <= 3)
        #expect(mostBackends.withLock { $0 } <= 3)
    }

    @Test("A borrower waits for a busy pool only as long as its wait limit, then is told")
    func waitingIsBounded() throws {
        let (url, _) = try freshDatabase()
        let pool = try PostgresPool(url, size: 1, waitLimit: 0.3)
        let started = Date()
        let error = #expect(throws: PostgresError.self) {
            try pool.withConnection { _ in try pool.withConnection { _ in } }
        }
        #expect(error?.kind == .poolExhausted)
        #expect(error?.message.contains("all 1 connections") == true)
        #expect(Date().timeIntervalSince(started) < 5)
        let one = try pool.withConnection { try $0.query("SELECT 1 AS one").integer(0, "one") }
        #expect(one == 1, "the connection is lent again once it is free")
    }

    @Test("A connection comes back out of any transaction its borrower left open")
    func transactionsDoNotLeak() throws {
        let (url, observer) = try freshDatabase()
        try observer.execute("CREATE TABLE item (id int PRIMARY KEY)")
        let pool = try PostgresPool(url, size: 1)
        struct Abandoned: Error {}
        #expect(throws: Abandoned.self) {
            try pool.withConnection { connection in
                try connection.execute("BEGIN")
                try connection.query("INSERT INTO item VALUES (1)")
                throw Abandoned()
            }
        }
        let wasInTransaction = try pool.withConnection { connection in
            defer { _ = try? connection.query("INSERT INTO item VALUES (2)") }
            return connection.isInTransaction
        }
        #expect(!wasInTransaction)
        #expect(try observer.query("SELECT string_agg(id::text, ',') AS ids FROM item").text(0, "ids") == "2")
    }

    @Test("After the server restarts, the pool lends new connections, not the dead ones")
    func restartsAreSurvived() throws {
        let server = try PostgresTestServer()
        let pool = try PostgresPool(server.url(), size: 2)
        let before = try pool.withConnection { $0.backendProcessID }
        try server.restart()
        Thread.sleep(forTimeInterval: 0.2)  // the server's goodbye reaches the idle socket
        let after = try pool.withConnection { connection in
            try connection.query("SELECT 1 AS one").integer(0, "one")
            return connection.backendProcessID
        }
        #expect(after != before)
        #expect(pool.openConnections <= 2)
    }

    @Test("A size outside 1 to 64 is refused; a closed pool lends nothing")
    func sizeAndClose() throws {
        let (url, _) = try freshDatabase()
        for size in [0, 65] {
            let error = #expect(throws: PostgresError.self) { _ = try PostgresPool(url, size: size) }
            #expect(error?.kind == .invalidParameter)
        }
        let pool = try PostgresPool(url, size: 2)
        pool.close()
        let error = #expect(throws: PostgresError.self) { try pool.withConnection { _ in } }
        #expect(error?.kind == .closed)
        #expect(pool.openConnections == 0)
    }
}
