import Foundation

/// A store whose commits can be followed: the SQLite `Store`, or another database's store
/// of the same schema (the PostgreSQL store). A results controller runs on any of them.
///
/// Every commit that changed something has a history token, greater than every earlier
/// commit's; `observe` hands each commit to the observer once, in token order, whoever
/// made it, and `history(since:)` reads the commits after a token again.
public protocol ObservableStore: StoreWriting {
    /// The entities the store holds.
    var schema: Schema { get }

    /// `write`, also returning the commit's history token (nil when nothing changed).
    @discardableResult
    func commit<T>(author: String?, _ body: (Transaction) throws -> T) throws -> Commit<T>

    /// Calls `handler` once for every commit, in token order (see `Store.observe`).
    func observe(_ handler: @escaping @Sendable (StoreEvent) -> Void) -> StoreObservation

    /// The token of the newest commit (0 before the first).
    func currentToken() throws -> Int64

    /// A number that changes when any process has committed to the store since it was last
    /// read, read without waiting for the store's locks or the network: a cache of reads
    /// compares it before it answers, so that once a commit has returned anywhere, no
    /// answer made before it is given (read-after-commit). A SQLite file's is its
    /// `data_version`; a database's, the commits this process made or heard of (its own
    /// at once, others' as their notifications arrive).
    func commitCounter() -> UInt64

    /// The commits after `token`, oldest first; throws `historyTrimmed` when some are gone.
    func history(since token: Int64) throws -> [HistoryEntry]

    /// The value cached under `name`, or nil (a store that keeps no cache: always nil).
    func cachedValue(named name: String) throws -> CachedValue?

    /// Keeps `value` under `name`, replacing what was there.
    func setCachedValue(_ value: CachedValue, named name: String) throws

    /// Forgets the value cached under `name`.
    func deleteCachedValue(named name: String) throws
}

extension ObservableStore {
    /// `commit(author: nil, body)`.
    @discardableResult
    public func commit<T>(_ body: (Transaction) throws -> T) throws -> Commit<T> {
        try commit(author: nil, body)
    }
}

extension Store: ObservableStore {}
