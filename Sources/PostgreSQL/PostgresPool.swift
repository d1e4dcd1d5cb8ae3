import Foundation

/// A small set of connections to one database, shared by a process's threads: each call
/// borrows one, and gives it back when it returns.
///
/// Connections open on demand, up to `size`; a borrower finding all of them busy waits, for
/// `waitLimit` seconds at most. A connection comes back clean or not at all: one left in a
/// transaction is rolled back, and one whose server went away (restart, network cut) is
/// dropped: an idle connection the server has closed is noticed before it is lent, and
/// the borrower gets a new one. A call that loses its connection while it runs throws
/// `connectionLost`; the pool does not run it again, since only the caller knows whether
/// it may.
///
/// `@unchecked Sendable`: its state is guarded by `condition`, and a connection is used by
/// one borrower at a time.
public final class PostgresPool: @unchecked Sendable {
    /// The location with any password replaced by `***`.
    public let redactedLocation: String
    /// Connections open at most.
    public let size: Int
    /// Seconds a borrower waits for a connection to come free.
    public let waitLimit: TimeInterval
    /// The sizes a pool may have: a server's `max_connections` is shared by every host.
    public static let sizes = 1...64

    private let location: String
    private let configure: (PostgresConnection) throws -> Void
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var openCount = 0
    private var isClosed = false

    /// A pool for `location` (a URL or key=value string, as `PostgresConnection` takes).
    /// One connection is opened now, so that a location that cannot be reached is told at
    /// once (`cannotConnect`). `configure` runs on each connection the pool opens, before it
    /// is lent (session settings); what it throws is the borrower's error.
    public init(_ location: String, size: Int = 4, waitLimit: TimeInterval = 30,
                configure: @escaping (PostgresConnection) throws -> Void = { _ in }) throws {
        guard Self.sizes.contains(size) else {
            throw PostgresError(.invalidParameter, "a connection pool's size is \(Self.sizes.lowerBound) to \(Self.sizes.upperBound), not \(size)")
        }
        self.location = location
        self.redactedLocation = PostgresLocation.redacted(location)
        self.size = size
        self.waitLimit = max(0, waitLimit)
        self.configure = configure
        idle = [try Self.open(location, configure)]
        openCount = 1
    }

    private static func open(_ location: String, _ configure: (PostgresConnection) throws -> Void) throws -> PostgresConnection {
        let connection = try PostgresConnection(location)
        do {
            try configure(connection)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    deinit { close() }

    /// Runs `body` with a connection of the pool, and takes it back afterwards.
    public func withConnection<Result>(_ body: (PostgresConnection) throws -> Result) throws -> Result {
        let connection = try borrow()
        defer { giveBack(connection) }
        return try body(connection)
    }

    /// `withConnection` around one `transaction`: retried on serialization failures and
    /// deadlocks as `PostgresConnection.transaction` is.
    public func transaction<Result>(_ isolation: PostgresIsolation = .serializable,
                                    attempts: Int = PostgresConnection.defaultTransactionAttempts,
                                    _ body: (PostgresConnection) throws -> Result) throws -> Result {
        try withConnection { try $0.transaction(isolation, attempts: attempts, body) }
    }

    /// Connections open now, busy or idle.
    public var openConnections: Int {
        condition.lock()
        defer { condition.unlock() }
        return openCount
    }

    /// Closes the idle connections now and each busy one as it comes back; later borrowers
    /// get `closed`.
    public func close() {
        condition.lock()
        isClosed = true
        let closing = idle
        idle = []
        openCount -= closing.count
        condition.broadcast()
        condition.unlock()
        for connection in closing { connection.close() }
    }

    private func borrow() throws -> PostgresConnection {
        let deadline = Date().addingTimeInterval(waitLimit)
        condition.lock()
        while true {
            if isClosed {
                condition.unlock()
                throw PostgresError(.closed, "the connection pool for \(redactedLocation) is closed")
            }
            if let connection = idle.popLast() {
                if connection.isAlive() {
                    condition.unlock()
                    return connection
                }
                openCount -= 1
                continue
            }
            if openCount < size {
                openCount += 1
                condition.unlock()
                do {
                    return try Self.open(location, configure)
                } catch {
                    condition.lock()
                    openCount -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            if !condition.wait(until: deadline) {
                condition.unlock()
                throw PostgresError(.poolExhausted, "all \(size) connections to \(redactedLocation) stayed busy for \(waitLimit) s")
            }
        }
    }

    private func giveBack(_ connection: PostgresConnection) {
        if connection.isConnected && connection.isInTransaction { _ = try? connection.execute("ROLLBACK") }
        let reusable = connection.isConnected && !connection.isInTransaction
        condition.lock()
        let kept = reusable && !isClosed
        if kept { idle.append(connection) } else { openCount -= 1 }
        condition.signal()
        condition.unlock()
        if !kept { connection.close() }
    }
}
