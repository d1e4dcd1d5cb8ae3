import CSQLite
import Foundation
import Synchronization

/// The store's connections: one writer, and up to `maximumReaders` readers that WAL lets
/// read while the writer writes. An in-memory store has only the writer, which then
/// serves reads too.
///
/// `@unchecked Sendable`: connections are not thread-safe, so each is only ever used by the
/// thread that holds it, and handing one out and back happens under `condition`'s lock.
final class ConnectionPool: @unchecked Sendable {
    private let writer: Connection
    /// The writer's wait for other processes' locks, which `close` cuts short.
    private let writerWait: BusyWait?
    private let writerLock = NSLock()
    private let condition = NSCondition()
    private var idleReaders: [Connection] = []
    private var openReaders = 0
    private var isClosed = false
    private let maximumReaders: Int
    private let makeReader: (() throws -> Connection)?

    init(writer: Connection, maximumReaders: Int, makeReader: (() throws -> Connection)?) {
        self.writer = writer
        self.writerWait = writer.busyWait
        self.maximumReaders = max(1, maximumReaders)
        self.makeReader = makeReader
    }

    /// Runs `body` with the writer, one caller at a time.
    ///
    /// A second use from the thread already holding the writer (a write, or an in-memory
    /// store's read, inside a write's closure) would wait for itself for ever: it is
    /// refused instead, with `reentrantWrite`.
    func withWriter<T>(_ body: (Connection) throws -> T) throws -> T {
        let me = pthread_self()
        if writerOwner.withLock({ $0.map { pthread_equal($0, me) != 0 } ?? false }) {
            throw StoreError(.reentrantWrite, "The store was used from inside its own write on the same thread (a write or, in memory, a read within a write's closure); use the transaction the closure was given")
        }
        writerLock.lock()
        writerOwner.withLock { $0 = me }
        defer {
            writerOwner.withLock { $0 = nil }
            if isClosing { writer.close() }  // closed while this write ran
            writerLock.unlock()
        }
        try checkOpen()
        return try body(writer)
    }

    /// The thread that holds the writer, while one does.
    private let writerOwner = Mutex<pthread_t?>(nil)

    /// Runs `body` with a reader, waiting for one when all are busy.
    func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        guard let makeReader else { return try withWriter(body) }
        let reader = try takeReader(makeReader)
        defer { giveBack(reader) }
        return try body(reader)
    }

    /// Closes every connection: idle readers and an idle writer now, a writer in use once
    /// its write ends, readers in use when they come back. It does not wait for a write
    /// (one waiting for another process's lock may wait a minute).
    func close() {
        condition.lock()
        isClosed = true
        let idle = idleReaders
        idleReaders.removeAll()
        condition.unlock()
        for reader in idle { reader.close() }
        interruptWaits()
        if writerLock.try() {
            writer.close()
            writerLock.unlock()
        }
    }

    /// A write waiting for another process's lock gives up now, and later ones at once.
    func interruptWaits() {
        writerWait?.interrupt()
    }

    private var isClosing: Bool {
        condition.lock()
        defer { condition.unlock() }
        return isClosed
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
            reader.close()
        } else {
            idleReaders.append(reader)
        }
        condition.signal()
        condition.unlock()
    }
}
