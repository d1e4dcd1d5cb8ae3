import Foundation
import PostgreSQL
import Store
import Synchronization

/// The PostgreSQL store read and written through fetch requests and records, and its
/// commits followed, as the SQLite store's are. Each `read` is one repeatable-read,
/// read-only transaction, so its queries see one snapshot; each `write` one serializable
/// transaction, so writers on any number of hosts act as if one at a time. A write
/// PostgreSQL could not serialize (another session's write conflicted) or a deadlock is
/// run again from the start, a bounded number of times (`PostgresConnection.transaction`):
/// its body must do nothing but its writes.
///
/// Every write that changed something appends its change set to the history and sends
/// its token on the history's channel in the same transaction (`PostgresHistory`); an
/// observer in any process on any host hears of it through `LISTEN`
/// (`PostgresCommitListener`) and reads it from the history, exactly once, in token order.
///
/// Reads and writes borrow connections from a small pool (`poolSize`, 1 to 64): calls
/// from several threads run at once up to that many, the others wait their turn (at most
/// the lock timeout). A connection the server ended is replaced before it is lent.
/// Observing adds a listening connection. Do not call the store from inside a `read` or
/// `write` closure of the same store.
///
/// `@unchecked Sendable`: connections are lent by `pool` (a lock); the notifier guards its
/// own state; the rest is immutable or a `Mutex`.
public final class PostgresRecordStore: ObservableStore, @unchecked Sendable {
    /// Identifies this store object in the history, as `Store.origin` does.
    public let origin = UUID().uuidString
    public var schema: Schema { store.schema.schema }

    private let store: PostgresStore
    private let pool: PostgresPool
    private let notifier: ChangeNotifier
    private let lastHistoryTrim = Mutex<Date>(.distantPast)
    /// How long the history keeps an entry.
    public let historyRetention: TimeInterval

    /// Reads and writes `store`, which must hold this program's schema as it made it (else
    /// it throws, as `PostgresStore.requireIntact` does), on up to `poolSize` connections,
    /// each waiting at most `lockTimeout` for a lock another session holds. Closing it
    /// closes the store.
    public init(_ store: PostgresStore, poolSize: Int = 1, lockTimeout: TimeInterval = PostgresStore.defaultLockTimeout,
                historyRetention: TimeInterval = StoreConfiguration().historyRetention) throws {
        try store.requireIntact()
        self.store = store
        self.historyRetention = historyRetention
        pool = try PostgresStoreError.wrapping("cannot connect to", location: store.redactedLocation) {
            try PostgresPool(store.location, size: poolSize, waitLimit: lockTimeout) { connection in
                try PostgresStore.configure(connection, lockTimeout: lockTimeout)
                try connection.execute(PostgresHistorySchema.sessionStatements)
            }
        }
        let reference = WeakReference<PostgresRecordStore>()
        notifier = ChangeNotifier(origin: origin, history: HistorySource(
            entries: { token in try reference.value?.history(since: token) ?? [] },
            currentToken: { try reference.value?.currentToken() ?? 0 }))
        notifier.remoteSource = PostgresCommitListener(location: store.location)
        reference.value = self
    }

    deinit { notifier.stop() }

    public func read<T>(_ body: (ReadContext) throws -> T) throws -> T {
        try snapshot { connection in
            try body(ReadContext(runner: PostgresQueryRunner(connection: connection, schema: store.schema), schema: schema))
        }
    }

    /// Runs `body` in one repeatable-read, read-only transaction.
    private func snapshot<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try pool.withConnection { connection in
                try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                defer { if connection.isInTransaction { _ = try? connection.execute("ROLLBACK") } }
                let value = try body(connection)
                try connection.execute("COMMIT")
                return value
            }
        } catch let error as PostgresError {
            throw PostgresStoreError(error, doing: "cannot read", location: store.redactedLocation)
        }
    }

    /// How many times a write is tried before it gives up as busy: enough for a dozen
    /// processes moving and removing one user's Favorites at the same moment, each write
    /// also appending to the history (each try pauses up to 0.1 s: at most about 3 s).
    public static let writeAttempts = 32
    /// The session advisory lock a write that could not be serialized holds while it tries
    /// again (`PostgresConnection.transaction`'s `retryTurns`): one per database.
    public static let retryTurnsKey: Int64 = 0x746f_7072_7265_7472  // "toprretr"

    @discardableResult
    public func write<T>(author: String?, _ body: (Transaction) throws -> T) throws -> T {
        try commit(author: author, body).value
    }

    /// `write`, also returning the commit's history token (nil when nothing changed). The
    /// commit is delivered to this store's observers before it returns.
    @discardableResult
    public func commit<T>(author: String?, _ body: (Transaction) throws -> T) throws -> Commit<T> {
        defer { notifier.deliverPending() }
        let (value, entry): (T, HistoryEntry?)
        do {
            (value, entry) = try pool.withConnection { connection in
                try connection.transaction(.serializable, attempts: Self.writeAttempts, retryTurns: Self.retryTurnsKey) { connection in
                    let value = try body(Transaction(runner: PostgresQueryRunner(connection: connection, schema: store.schema), schema: schema))
                    let changes = try PostgresHistory.pendingChanges(schema: schema, on: connection)
                    guard !changes.isEmpty else { return (value, HistoryEntry?.none) }
                    return (value, try PostgresHistory.append(changes, origin: origin, author: author, on: connection))
                }
            }
        } catch let error as PostgresError {
            throw PostgresStoreError(error, doing: "cannot write to", location: store.redactedLocation)
        }
        if let entry { notifier.enqueueLocal(entry) }
        trimHistoryIfDue()
        return Commit(value: value, token: entry?.token)
    }

    /// Trims the history at most once a minute, after a commit; a failure is left for the
    /// next time (the entries are only kept longer).
    private func trimHistoryIfDue() {
        let now = Date()
        let due = lastHistoryTrim.withLock { last in
            guard now.timeIntervalSince(last) >= 60 else { return false }
            last = now
            return true
        }
        if due { _ = try? trimHistory(before: now.addingTimeInterval(-historyRetention)) }
    }

    // MARK: History and observation

    public func observe(_ handler: @escaping @Sendable (StoreEvent) -> Void) -> StoreObservation {
        StoreObservation(notifier: notifier, id: notifier.addObserver(handler))
    }

    public func currentToken() throws -> Int64 {
        try snapshot { try PostgresHistory.currentToken(on: $0) }
    }

    /// This object's commits and the notifications of others' it has heard (while observed).
    public func commitCounter() -> UInt64 {
        notifier.noticesAndLocalCommits
    }

    public func history(since token: Int64) throws -> [HistoryEntry] {
        try snapshot { try PostgresHistory.entries(since: token, schema: schema, on: $0) }
    }

    /// Deletes history committed before `date`. Returns how many entries were deleted.
    @discardableResult
    public func trimHistory(before date: Date) throws -> Int {
        try PostgresStoreError.wrapping("cannot trim the history of", location: store.redactedLocation) {
            try pool.transaction(.readCommitted) { try PostgresHistory.trim(before: date, on: $0) }
        }
    }

    /// How many observers are registered (for leak checks).
    public var observerCount: Int { notifier.observerCount }

    // MARK: Cache

    public func cachedValue(named name: String) throws -> CachedValue? {
        try snapshot { connection in
            var value: CachedValue?
            try connection.query("SELECT fingerprint, token, data FROM \(PostgresHistorySchema.cache) WHERE name = $1",
                                 [.text(name)]) { cursor in
                value = CachedValue(fingerprint: cursor.text(0) ?? "", token: cursor.integer(1) ?? 0, data: cursor.bytes(2) ?? [])
            }
            return value
        }
    }

    public func setCachedValue(_ value: CachedValue, named name: String) throws {
        try maintain("cannot keep a cached value in") { connection in
            try connection.query("""
                INSERT INTO \(PostgresHistorySchema.cache) (name, fingerprint, token, data) VALUES ($1, $2, $3, $4)
                ON CONFLICT (name) DO UPDATE SET fingerprint = excluded.fingerprint, token = excluded.token, data = excluded.data
                """, [.text(name), .text(value.fingerprint), .integer(value.token), .bytes(value.data)])
        }
    }

    public func deleteCachedValue(named name: String) throws {
        try maintain("cannot delete a cached value from") { connection in
            try connection.query("DELETE FROM \(PostgresHistorySchema.cache) WHERE name = $1", [.text(name)])
        }
    }

    /// Writes bookkeeping nobody observes, in a transaction of its own.
    private func maintain(_ doing: String, _ body: (PostgresConnection) throws -> Void) throws {
        try PostgresStoreError.wrapping(doing, location: store.redactedLocation) {
            try pool.transaction(.readCommitted, body)
        }
    }

    /// Closes the connections (and stops observing): later calls throw.
    public func close() {
        notifier.stop()
        pool.close()
        store.close()
    }
}

/// A reference that does not keep its object alive, for closures made before it exists.
///
/// `@unchecked Sendable`: `object` is guarded by `lock`.
private final class WeakReference<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private weak var object: Object?

    var value: Object? {
        get { lock.withLock { object } }
        set { lock.withLock { object = newValue } }
    }
}
