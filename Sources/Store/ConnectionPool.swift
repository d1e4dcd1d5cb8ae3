import CSQLite
import Foundation

/// The store's connections: one writer, and up to `maximumReaders` readers that WAL lets
/// read while the writer writes. An in-memory store has only the writer, which then
/// serves reads too.
///
/// `@unchecked Sendable`: connections are not thread-safe, so each is only ever used by the
/// thread that holds it, and handing one out and back happens under `condition`'s lock.
final class ConnectionPool: @unchecked Sendable {
    private let writer: Connection
    private let writerLock = NSLock()
    private let condition = NSCondition()
    private var idleReaders: [Connection] = []
    private var openReaders = 0
    private var isClosed = false
    private let maximumReaders: Int
    private let makeReader: (() throws -> Connection)?

    init(writer: Connection, maximumReaders: Int, makeReader: (() throws -> Connection)?) {
        self.writer = writer
        self.maximumReaders = max(1, maximumReaders)
        self.makeReader = makeReader
    }

    /// Runs `body` with the writer, one caller at a time.
    func withWriter<T>(_ body: (Connection) throws -> T) throws -> T {
        writerLock.lock()
        defer { writerLock.unlock() }
        try checkOpen()
        return try body(writer)
    }

    /// Runs `body` with a reader, waiting for one when all are busy.
    func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        guard let makeReader else { return try withWriter(body) }
        let reader = try takeReader(makeReader)
        defer { giveBack(reader) }
        return try body(reader)
    }

    func close() {
        condition.lock()
        isClosed = true
        idleReaders.removeAll()
        condition.unlock()
    }

    private func checkOpen() throws {
        condition.lock()
        defer { condition.unlock() }
        if isClosed { throw StoreError(.closed, "The store is closed") }
    }

    private func takeReader(_ makeReader: () throws -> Connection) throws -> Connection {
        condition.lock()
        while true {
            if isClosed {
                condition.unlock()
                throw StoreError(.closed, "The store is closed")
            }
            if let reader = idleReaders.popLast() {
                condition.unlock()
                return reader
            }
            if openReaders < maximumReaders {
                openReaders += 1
                condition.unlock()
                do {
                    return try makeReader()
                } catch {
                    condition.lock()
                    openReaders -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            condition.wait()
        }
    }

    private func giveBack(_ reader: Connection) {
        condition.lock()
        if isClosed {
            openReaders -= 1
        } else {
            idleReaders.append(reader)
        }
        condition.signal()
        condition.unlock()
    }
}
