import CSQLite
import Foundation
import Synchronization

/// A persistent object store on one SQLite file: typed records, fetch requests, all-or-
/// nothing write transactions that produce change sets, persistent history that any
/// process can read, and observation of commits from this process and others.
///
/// One writer at a time (across processes too: a second writer waits its turn), many
/// concurrent readers (WAL). All methods may be called from any thread; do not call the
/// store from inside a `read` or `write` closure of the same store.
public final class Store: Sendable {
    /// The file, or nil for an in-memory store.
    public let path: String?
    /// The entities the store holds, validated when it opened.
    public let schema: Schema
    /// How the store was opened and behaves; fixed for its life.
    public let configuration: StoreConfiguration
    /// Identifies this store object in the history, so it can tell its own commits from
    /// those of other processes.
    public let origin: String
    /// Opened as an immutable snapshot (read-only, where WAL's shared memory cannot be
    /// made): it shows the file as it was, and sees no later commit.
    public let isSnapshot: Bool
    /// How this store notices other processes' commits while observed: `inotify`, or
    /// `polling every N ms` (a network file system, or `observationMethod = .polling`).
    public let observationDescription: String

    let pool: ConnectionPool
    let notifier: ChangeNotifier
    let executor: StoreExecutor
    /// The file's `data_version`, for `commitCounter`; nil in memory (one connection).
    private let dataVersion: DataVersionProbe?
    private let lastHistoryTrim = Mutex<Date>(.distantPast)

    /// Opens the store at `path`, creating it (mode 0600) when missing, and applies the
    /// migrations it has not applied yet.
    ///
    /// Throws `notADatabase` or `corrupt` for a file that is not a sound SQLite database and
    /// `newerSchema` for one written by a newer program; in each case the file is left
    /// untouched. A failing migration throws `migrationFailed`, with the store left at the
    /// last migration that succeeded.
    public init(path: String, schema: Schema, migrator: Migrator = Migrator(),
                configuration: StoreConfiguration = StoreConfiguration()) throws {
        try schema.validate()
        try StoreFile.prepare(at: path, create: configuration.access == .readWriteCreate)
        let busyMilliseconds = Int32(clamping: Int(configuration.busyTimeout * 1000))
        let readOnly = configuration.access == .readOnly
        let (writer, openPath) = try StoreOpening.open(path, readOnly: readOnly, busyMilliseconds: busyMilliseconds)
        let flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        try StoreOpening.refuseForeignDatabase(writer, path: path, create: configuration.access == .readWriteCreate)
        try StoreOpening.refuseNewerSchema(writer, migrator: migrator, path: path)
        if readOnly {
            try StoreOpening.refuseMigrationNeeded(writer, migrator: migrator, path: path)
            try writer.execute("PRAGMA query_only = 1")
        } else {
            try StoreOpening.configure(writer, path: path)
            try StoreOpening.migrate(writer, schema: schema, migrator: migrator)
            writer.changeRecorder = try ChangeRecorder(connection: writer, schema: schema)
        }
        self.path = path
        self.schema = schema
        self.configuration = configuration
        self.origin = UUID().uuidString
        self.isSnapshot = openPath != path
        self.pool = ConnectionPool(writer: writer, maximumReaders: configuration.maximumReaders) {
            let reader = try StoreOpening.connect(openPath, flags: flags, displayPath: path)
            reader.setBusyTimeout(milliseconds: busyMilliseconds)
            try reader.execute("PRAGMA query_only = 1")
            return reader
        }
        self.notifier = ChangeNotifier(origin: origin, history: Self.historySource(pool))
        self.executor = StoreExecutor(readers: configuration.maximumReaders)
        let watcher = RemoteCommitWatcher(path: openPath, readOnly: readOnly, interval: configuration.observationInterval,
                                          busyMilliseconds: busyMilliseconds, method: configuration.observationMethod)
        notifier.remoteSource = watcher
        observationDescription = watcher.methodDescription
        dataVersion = DataVersionProbe(path: openPath, readOnly: readOnly)
    }

    /// A store that lives in memory only, for tests: the same behaviour but no file, no
    /// other processes, and one connection for reads and writes.
    public init(inMemorySchema schema: Schema, migrator: Migrator = Migrator(),
                configuration: StoreConfiguration = StoreConfiguration()) throws {
        try schema.validate()
        let connection = try Connection(path: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        try connection.execute("PRAGMA foreign_keys = ON")
        try StoreOpening.migrate(connection, schema: schema, migrator: migrator)
        connection.changeRecorder = try ChangeRecorder(connection: connection, schema: schema)
        self.path = nil
        self.schema = schema
        self.configuration = configuration
        self.origin = UUID().uuidString
        self.isSnapshot = false
        self.pool = ConnectionPool(writer: connection, maximumReaders: 1, makeReader: nil)
        self.notifier = ChangeNotifier(origin: origin, history: Self.historySource(pool))
        self.executor = StoreExecutor(readers: 1)
        observationDescription = "this process only (in memory)"
        dataVersion = nil
    }

    deinit {
        notifier.stop()
    }

    /// The history as the notifier reads it to catch up on commits it was not handed.
    private static func historySource(_ pool: ConnectionPool) -> HistorySource {
        HistorySource(entries: { token in
            try pool.withReader { connection in
                try connection.execute("BEGIN DEFERRED")
                defer { try? connection.execute("COMMIT") }
                return try History.entries(since: token, on: connection)
            }
        }, currentToken: {
            try pool.withReader { try History.currentToken(on: $0) }
        })
    }

    /// Makes a write that waits for another process's lock give up now (as busy), and every
    /// later one at once: for a process that is stopping, which should not wait out the
    /// busy timeout first. The store stays open.
    public func interruptWaits() {
        pool.interruptWaits()
    }

    /// Closes the store: later calls throw `closed`; observers stop.
    public func close() {
        notifier.stop()
        dataVersion?.close()
        pool.close()
    }

    // MARK: Reading and writing

    /// Runs `body` in a read transaction: every read inside sees one snapshot.
    public func read<T>(_ body: (ReadContext) throws -> T) throws -> T {
        try pool.withReader { connection in
            try connection.execute("BEGIN DEFERRED")
            defer { try? connection.execute("COMMIT") }
            return try body(ReadContext(runner: connection, schema: schema))
        }
    }

    /// Runs `body` in a write transaction and commits it, or rolls it back when `body` or
    /// the commit throws. After the commit, observers receive its change set (with
    /// `author`), and the history keeps it.
    @discardableResult
    public func write<T>(author: String? = nil, _ body: (Transaction) throws -> T) throws -> T {
        try commit(author: author, body).value
    }

    /// `write`, also returning the commit's history token (nil when the transaction changed
    /// nothing): a caller can wait until a results controller has processed it
    /// (`ResultsController.waitUntilProcessed(through:timeout:)`).
    @discardableResult
    public func commit<T>(author: String? = nil, _ body: (Transaction) throws -> T) throws -> Commit<T> {
        if configuration.access == .readOnly {
            throw StoreError(.readOnly, "The store at \(path ?? "memory") is open read-only; nothing was written")
        }
        defer { notifier.deliverPending() }
        return try pool.withWriter { connection in
            try connection.execute("BEGIN IMMEDIATE")
            connection.changeRecorder?.reset()
            defer { connection.changeRecorder?.reset() }
            do {
                let transaction = Transaction(connection: connection, schema: schema)
                let result = try body(transaction)
                let changes = transaction.changes
                var entry: HistoryEntry?
                if !changes.isEmpty {
                    let token = try History.append(changes, origin: origin, author: author, on: connection)
                    entry = HistoryEntry(token: token, committedAt: Date(), origin: origin, author: author, changes: changes)
                }
                try trimHistoryIfDue(connection)
                try connection.execute("COMMIT")
                if let entry { notifier.enqueueLocal(entry) }
                return Commit(value: result, token: entry?.token)
            } catch {
                if connection.isInTransaction { try? connection.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// `read`, on one of the store's reader threads (never the cooperative pool's: SQLite
    /// blocks).
    public func read<T: Sendable>(_ body: @escaping @Sendable (ReadContext) throws -> T) async throws -> T {
        try await executor.reading { try self.read(body) }
    }

    /// `write`, on the store's writer thread (never the cooperative pool's).
    @discardableResult
    public func write<T: Sendable>(author: String? = nil, _ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        try await executor.writing { try self.write(author: author, body) }
    }

    /// Blocking work of the store, for async callers (`deferIndexes` and the like).
    func onWriterThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await executor.writing(work)
    }

    // MARK: History

    /// Whether `commitCounter` reads the WAL-index in shared memory (no lock, no system
    /// call), rather than asking `PRAGMA data_version`.
    public var commitCounterReadsSharedMemory: Bool { dataVersion?.readsSharedMemory ?? false }

    /// The file's WAL-index header state, or `data_version` (in memory: the commits
    /// delivered).
    public func commitCounter() -> UInt64 {
        dataVersion?.current() ?? notifier.noticesAndLocalCommits
    }

    /// The token of the newest commit (0 before the first).
    public func currentToken() throws -> Int64 {
        try pool.withReader { try History.currentToken(on: $0) }
    }

    /// The commits after `token`, oldest first. Throws `historyTrimmed` when some of them
    /// were trimmed: the caller must refetch rather than apply a history with a gap.
    public func history(since token: Int64) throws -> [HistoryEntry] {
        try pool.withReader { connection in
            try connection.execute("BEGIN DEFERRED")
            defer { try? connection.execute("COMMIT") }
            return try History.entries(since: token, on: connection)
        }
    }

    /// Deletes history committed before `date`. Returns how many entries were deleted.
    @discardableResult
    public func trimHistory(before date: Date) throws -> Int {
        try pool.withWriter { connection in
            try connection.inImmediateTransaction { try History.trim(before: date, on: connection) }
        }
    }

    private func trimHistoryIfDue(_ connection: Connection) throws {
        let now = Date()
        let due = lastHistoryTrim.withLock { last in
            guard now.timeIntervalSince(last) >= 60 else { return false }
            last = now
            return true
        }
        if due { _ = try History.trim(before: now.addingTimeInterval(-configuration.historyRetention), on: connection) }
    }

    /// How many observers are registered (for leak checks).
    public var observerCount: Int { notifier.observerCount }

    // MARK: Maintenance

    /// SQLite's `PRAGMA integrity_check`: `["ok"]` for a sound file, else the problems found.
    public func integrityCheck() throws -> [String] {
        try pool.withReader { connection in
            try connection.rows("PRAGMA integrity_check").compactMap { $0[0].string }
        }
    }

    /// A row whose reference leads nowhere.
    public struct ForeignKeyViolation: Sendable, Hashable {
        /// The table of the row that refers.
        public var table: String
        /// The referring row's id (its rowid).
        public var rowID: Int64?
        /// The table the reference should lead to.
        public var parent: String
    }

    /// SQLite's `PRAGMA foreign_key_check`: each row whose reference leads nowhere (written
    /// behind the store's back with foreign keys off); empty when none.
    public func foreignKeyViolations() throws -> [ForeignKeyViolation] {
        try pool.withReader { connection in
            try connection.rows("PRAGMA foreign_key_check").map { row in
                ForeignKeyViolation(table: row[0].string ?? "?", rowID: row[1].int64, parent: row[2].string ?? "?")
            }
        }
    }
}
