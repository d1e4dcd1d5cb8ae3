import Foundation
import PostgreSQL
import Store

/// The PostgreSQL store read and written through fetch requests and records, as the SQLite
/// store is. Each `read` is one repeatable-read, read-only transaction, so its queries see
/// one snapshot; each `write` one serializable transaction, so writers on any number of
/// hosts act as if one at a time. A write PostgreSQL could not serialize (another
/// session's write conflicted) or a deadlock is run again from the start, a bounded number
/// of times (`PostgresConnection.transaction`): its body must do nothing but its writes.
///
/// One connection; calls from several threads take turns.
public final class PostgresRecordStore: StoreWriting, @unchecked Sendable {
    private let store: PostgresStore
    private let runner: PostgresQueryRunner
    private let lock = NSLock()

    /// Reads and writes `store`, which must hold this program's schema as it made it (else
    /// it throws, as `PostgresStore.requireIntact` does). Closing it closes the store.
    public init(_ store: PostgresStore) throws {
        try store.requireIntact()
        self.store = store
        runner = PostgresQueryRunner(connection: store.connection, schema: store.schema)
    }

    public func read<T>(_ body: (ReadContext) throws -> T) throws -> T {
        try lock.withLock {
            let connection = store.connection
            do {
                try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                defer { if connection.isInTransaction { _ = try? connection.execute("ROLLBACK") } }
                let value = try body(ReadContext(runner: runner, schema: store.schema.schema))
                try connection.execute("COMMIT")
                return value
            } catch let error as PostgresError {
                throw PostgresStoreError(error, doing: "cannot read", location: store.redactedLocation)
            }
        }
    }

    /// How many times a write is tried before it gives up as busy: enough for some twenty
    /// processes changing one user's list at the same moment (each try pauses up to 0.1 s).
    public static let writeAttempts = 16

    /// `author` is not kept: the PostgreSQL store keeps no change history yet.
    @discardableResult
    public func write<T>(author: String?, _ body: (Transaction) throws -> T) throws -> T {
        try lock.withLock {
            do {
                return try store.connection.transaction(.serializable, attempts: Self.writeAttempts) { _ in
                    try body(Transaction(runner: runner, schema: store.schema.schema))
                }
            } catch let error as PostgresError {
                throw PostgresStoreError(error, doing: "cannot write to", location: store.redactedLocation)
            }
        }
    }

    /// Closes the connection: later calls throw.
    public func close() {
        lock.withLock { store.close() }
    }
}
