import Foundation
import Store

/// Core Data's NSFetchedResultsController for the store: runs a fetch request, groups the
/// results into sections, and, as the store changes (in this process or another), reports
/// exactly how to update a table that shows them.
///
/// It holds ids and sort keys, not records; records are loaded a batch at a time when asked
/// for. A change of k objects among n results costs O(k log n) plus one query for the k
/// objects; a changed request, a limited request, or a gap in the history is a refetch and
/// an O(n log n) diff, reported just the same.
///
/// Every commit in the store's history reaches the controller exactly once, in token
/// order, whoever made it (`processedToken` says how far it has got). Thread-safe. Commits
/// are processed, and delegate calls and stream elements delivered, on the thread that
/// noticed the commit (the committing thread for this process's commits, the store's
/// observation queue for others'), unless a `deliveryQueue` is given: then on that queue.
///
/// `@unchecked Sendable`: all mutable state is guarded by `lock`.
public final class ResultsController<R: Record>: @unchecked Sendable {
    /// The store the controller fetches from and follows.
    public let store: any ObservableStore
    /// The fetch request the results come from; `setRequest` replaces it.
    public private(set) var request: FetchRequest
    /// The key path whose value groups the results into sections; nil: one section.
    public private(set) var sectionKeyPath: String?
    /// Keys whose change alone is not shown (for example a `displayOrder` that only places
    /// the row): a change to them moves rows but does not report an update.
    public let undisplayedKeys: Set<String>
    /// When given, the only keys (and key paths) the consumer shows: a change to any other
    /// key alone is not an update (a list of titles need not hear that a thumbnail came).
    public let displayedKeys: Set<String>?
    /// Apple's `cacheName`: the computed index is kept in the store under this name and
    /// reused by a later `performFetch` of the same request (in any process) while the
    /// history shows no relevant change since.
    public let cacheName: String?
    /// Where commits are processed and delegate calls made; nil: on the thread that noticed
    /// the commit. A serial queue (the main queue of a UI, say) sees the controller's
    /// state and its delegate calls in step.
    public let deliveryQueue: DispatchQueue?

    // The state below is guarded by `lock` (recursive: a delegate may read the controller).
    private let lock = NSRecursiveLock()
    private let processed = NSCondition()
    /// `lastToken` as waiters see it, guarded by `processed`.
    private var processedThrough: Int64 = 0
    /// Handlers waiting for a token to be processed (`whenProcessed`), guarded by `processed`.
    private var processedHandlers: [(token: Int64, handler: @Sendable () -> Void)] = []
    private var _lastFetchUsedCache = false
    private weak var _delegate: ResultsControllerDelegate?
    private var _sectionIndexTitle: @Sendable (String) -> String? = { name in name.first.map { String($0).uppercased() } }
    private var _fetchBatchSize = 20
    private var _includesSnapshots = true
    private var _lastUpdateSeconds: Double = 0

    /// Whether the last `performFetch` was served from the cache.
    public var lastFetchUsedCache: Bool { locked { _lastFetchUsedCache } }
    /// Told of each batch; held weakly.
    public var delegate: ResultsControllerDelegate? {
        get { locked { _delegate } }
        set { locked { _delegate = newValue } }
    }
    /// The index title of a section; default: the first letter of its name, capitalized.
    public var sectionIndexTitle: @Sendable (String) -> String? {
        get { locked { _sectionIndexTitle } }
        set { locked { _sectionIndexTitle = newValue } }
    }
    /// Records loaded together when one is asked for.
    public var fetchBatchSize: Int {
        get { locked { _fetchBatchSize } }
        set { locked { _fetchBatchSize = max(1, newValue) } }
    }
    /// Whether each reported change carries a snapshot of all ids (O(n) to build).
    public var includesSnapshots: Bool {
        get { locked { _includesSnapshots } }
        set { locked { _includesSnapshots = newValue } }
    }
    /// Seconds the last commit took to process, from the event to the batch (query included).
    public var lastUpdateSeconds: Double { locked { _lastUpdateSeconds } }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private var plan: QueryPlan
    private var entries: OrderedEntries
    private var sectionList: SectionList
    private var starts: [Int] = [0]
    private var lastToken: Int64 = 0
    private var hasFetched = false
    private var observation: StoreObservation?
    private var recordCache: [Int64: R] = [:]
    private var streams: [UUID: AsyncStream<ResultsChange>.Continuation] = [:]
    private let userDrivenAuthor = "results-controller:\(UUID().uuidString)"
    static var recordCacheLimit: Int { 2_000 }

    /// A controller for `request`, optionally sectioned by `sectionKeyPath` (which may cross
    /// to-one relationships, and must be what the first sort key orders by). Throws when
    /// the request has no sort key, when the first sort key does not order by the section
    /// key, or when a key path does not fit the schema.
    public init(store: any ObservableStore, request: FetchRequest, sectionKeyPath: String? = nil, undisplayedKeys: Set<String> = [],
                displayedKeys: Set<String>? = nil, cacheName: String? = nil, deliveryQueue: DispatchQueue? = nil) throws {
        guard request.entityName == R.entity.name else {
            throw ResultsControllerError(.wrongEntity, "The request fetches \(request.entityName), but the controller shows \(R.entity.name)")
        }
        guard request.startingAfter == nil else {
            // A live list's first row moves as rows come and go: page it by its index paths.
            throw ResultsControllerError(.pagedRequest, "A results controller's request cannot start after a row (startingAfter): it follows the whole list")
        }
        self.store = store
        self.request = request
        self.sectionKeyPath = sectionKeyPath
        self.undisplayedKeys = undisplayedKeys
        self.displayedKeys = displayedKeys
        self.cacheName = cacheName
        self.deliveryQueue = deliveryQueue
        self.plan = try QueryPlan(request: request, sectionKeyPath: sectionKeyPath, displayedKeyPaths: displayedKeys ?? [], schema: store.schema)
        self.entries = OrderedEntries(order: plan.order)
        self.sectionList = plan.makeSectionList()
        // Key paths are checked by compiling the query once.
        _ = try store.read { try $0.count(FetchRequest(entityName: request.entityName, predicate: request.predicate,
                                                       sortDescriptors: plan.sortKeys, fetchLimit: 0)) }
    }

    /// Whether the store has committed anything this controller has not processed yet.
    public var isBehindStore: Bool {
        ((try? store.currentToken()) ?? 0) > processedToken
    }

    deinit {
        observation?.cancel()
        for continuation in streams.values { continuation.finish() }
    }

    // MARK: Fetching

    /// Runs the request and starts following the store's changes.
    public func performFetch() throws {
        // The cache is written after the lock is released: a write delivers commits to
        // observers, and a thread delivering one to this controller waits for its lock.
        if let (cached, name) = try fetchUnderLock() { try store.setCachedValue(cached, named: name) }
    }

    /// Fetches (or loads the cache); returns what to cache, if anything.
    private func fetchUnderLock() throws -> (CachedValue, String)? {
        lock.lock()
        defer { lock.unlock() }
        if observation == nil {
            let queue = deliveryQueue
            observation = store.observe { [weak self] event in
                guard let queue else {
                    self?.handle(event)
                    return
                }
                queue.async { [weak self] in self?.handle(event) }
            }
        }
        _lastFetchUsedCache = try loadFromCache()
        var toCache: (CachedValue, String)?
        if !_lastFetchUsedCache {
            try reload()
            toCache = cacheValue()
        }
        hasFetched = true
        signalProcessed()
        return toCache
    }

    // MARK: Progress through the history

    /// The newest history token whose commit the controller has taken into account (0
    /// before `performFetch`): every commit up to it is reflected in its state and has
    /// been reported.
    public var processedToken: Int64 { locked { lastToken } }

    /// Waits until the controller has processed the commit with `token` (from
    /// `Store.commit`) or a later one; false when `timeout` passed first.
    public func waitUntilProcessed(through token: Int64, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        processed.lock()
        defer { processed.unlock() }
        while processedThrough < token {
            if !processed.wait(until: deadline) { return processedThrough >= token }
        }
        return true
    }

    /// Calls `handler` once the controller has processed the commit with `token` or a later
    /// one: at once, on this thread, when it has; else on the thread that processes it,
    /// after its batch was reported and without the controller's lock held.
    public func whenProcessed(through token: Int64, _ handler: @escaping @Sendable () -> Void) {
        processed.lock()
        guard processedThrough < token else {
            processed.unlock()
            return handler()
        }
        processedHandlers.append((token, handler))
        processed.unlock()
    }

    /// `waitUntilProcessed(through:timeout:)` for async callers, off the cooperative pool.
    public func processed(through token: Int64, timeout: TimeInterval) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.waitUntilProcessed(through: token, timeout: timeout)) }
        }
    }

    /// Publishes `lastToken` to waiters. Called with or without `lock` held; `processed`
    /// is only ever taken inside `lock`, never the other way round.
    private func signalProcessed() {
        let token = locked { lastToken }
        processed.lock()
        processedThrough = max(processedThrough, token)
        processed.broadcast()
        let due = processedHandlers.filter { $0.token <= processedThrough }
        if !due.isEmpty { processedHandlers.removeAll { $0.token <= processedThrough } }
        processed.unlock()
        for waiting in due { waiting.handler() }
    }

    /// Forgets a cache by name.
    public static func deleteCache(named name: String, in store: any ObservableStore) throws {
        try store.deleteCachedValue(named: name)
    }

    private var cacheFingerprint: String {
        ResultsCache.fingerprint(request, sortKeys: plan.sortKeys, sectionKeyPath: sectionKeyPath)
    }

    /// Loads the cached index when it was computed for this request and nothing relevant
    /// was committed since; false otherwise (a trimmed history included).
    private func loadFromCache() throws -> Bool {
        guard let cacheName, let cached = try store.cachedValue(named: cacheName), cached.fingerprint == cacheFingerprint,
              let decoded = ResultsCache.decode(cached.data, keyCount: plan.keyPaths.count),
              let history = try? store.history(since: cached.token) else { return false }
        let relevant = plan.relevantEntities
        guard !history.contains(where: { !relevant.isDisjoint(with: $0.changes.entityNames) }) else { return false }
        load(ids: decoded.ids, keys: decoded.keys)
        lastToken = max(cached.token, history.last?.token ?? cached.token)
        return true
    }

    /// The index to cache, under the cache name (nil without one).
    private func cacheValue() -> (CachedValue, String)? {
        guard let cacheName else { return nil }
        var keys: [SQLValue] = []
        keys.reserveCapacity(entries.count * plan.keyPaths.count)
        let ids = entries.allIDs
        for id in ids { keys += entries.keys(of: id) ?? [] }
        return (CachedValue(fingerprint: cacheFingerprint, token: lastToken, data: ResultsCache.encode(ids: ids, keys: keys)), cacheName)
    }

    /// Replaces the request (predicate, sort, limit) and reports the difference as a batch,
    /// on the calling thread.
    public func setRequest(_ newRequest: FetchRequest) throws {
        try setRequest(newRequest, sectionKeyPath: locked { sectionKeyPath })
    }

    /// Replaces the request and the section key path (nil: one section), and reports the
    /// difference as a batch: sections are matched by value (`SectionValue`) across the
    /// change.
    public func setRequest(_ newRequest: FetchRequest, sectionKeyPath newSectionKeyPath: String?) throws {
        lock.lock()
        defer { lock.unlock() }
        guard newRequest.entityName == request.entityName else {
            throw ResultsControllerError(.wrongEntity, "A controller cannot change entity (\(request.entityName) to \(newRequest.entityName))")
        }
        let newPlan = try QueryPlan(request: newRequest, sectionKeyPath: newSectionKeyPath, displayedKeyPaths: displayedKeys ?? [], schema: store.schema)
        let before = capture()
        request = newRequest
        sectionKeyPath = newSectionKeyPath
        plan = newPlan
        try reload()
        if hasFetched { report(diff(from: before, contentChanged: []), token: nil, oldSections: before.sections) }
    }

    // MARK: Reading

    /// Every result's primary key, in order, across sections.
    public var fetchedIDs: [Int64] {
        lock.lock()
        defer { lock.unlock() }
        return entries.allIDs
    }

    /// Bytes the controller holds for its results (ids, sort keys, and the id index),
    /// approximately: the figure the benchmark reports per result.
    public var approximateBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.approximateBytes + sectionList.count * 64
    }

    /// How many results there are, across sections.
    public var numberOfObjects: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    /// The sections, in order, with their names, index titles and sizes.
    public var sections: [SectionInfo] {
        lock.lock()
        defer { lock.unlock() }
        return sectionList.sections.map { section in
            SectionInfo(value: section.value, indexTitle: _sectionIndexTitle(section.value.name), numberOfObjects: section.count)
        }
    }

    /// The distinct index titles of the sections, in order.
    public var sectionIndexTitles: [String] {
        var titles: [String] = []
        for section in sections {
            if let title = section.indexTitle, titles.last != title { titles.append(title) }
        }
        return titles
    }

    /// The id at an index path, or nil when there is no such row.
    public func id(at indexPath: IndexPath) -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        guard indexPath.section >= 0, indexPath.section < sectionList.count, indexPath.row >= 0,
              indexPath.row < sectionList.sections[indexPath.section].count else { return nil }
        return entries.id(at: starts[indexPath.section] + indexPath.row)
    }

    /// Where an object is, or nil when it is not in the results.
    public func indexPath(for id: Int64) -> IndexPath? {
        lock.lock()
        defer { lock.unlock() }
        guard let global = entries.index(of: id) else { return nil }
        return SectionList.indexPath(of: global, starts: starts)
    }

    /// The record at an index path, loading it (with its neighbours) when needed.
    public func object(at indexPath: IndexPath) throws -> R {
        lock.lock()
        defer { lock.unlock() }
        guard let id = id(at: indexPath) else {
            throw ResultsControllerError(.noSuchRow, "There is no row at \(indexPath)")
        }
        if let cached = recordCache[id] { return cached }
        let global = starts[indexPath.section] + indexPath.row
        let batch = (max(0, global - _fetchBatchSize / 2)..<min(entries.count, global + _fetchBatchSize / 2 + 1)).map { entries.id(at: $0) }
        if recordCache.count + batch.count > Self.recordCacheLimit { recordCache.removeAll(keepingCapacity: true) }
        for record in try store.read({ try $0.fetch(R.self, ids: batch) }) {
            if let recordID = record.id { recordCache[recordID] = record }
        }
        guard let record = recordCache[id] else {
            throw ResultsControllerError(.objectGone, "The object at \(indexPath) (id \(id)) is no longer in the store")
        }
        return record
    }

    /// The names and ids of the sections now.
    public var snapshot: Snapshot {
        lock.lock()
        defer { lock.unlock() }
        return makeSnapshot()
    }

    // MARK: Writing without being told

    /// Runs a write whose effect the consumer has already shown (a row it moved itself):
    /// this controller follows it silently; every other controller reports it as usual.
    @discardableResult
    public func performUserDrivenWrite<T>(_ body: (Transaction) throws -> T) throws -> T {
        try store.write(author: userDrivenAuthor, body)
    }

    // MARK: Streams

    /// The reported changes, for `for await` consumers. Ends when the consumer stops or the
    /// controller is released.
    public func changes() -> AsyncStream<ResultsChange> {
        AsyncStream { continuation in
            let key = UUID()
            lock.lock()
            streams[key] = continuation
            lock.unlock()
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                self.lock.lock()
                self.streams.removeValue(forKey: key)
                self.lock.unlock()
            }
        }
    }

    // MARK: Following the store

    private func handle(_ event: StoreEvent) {
        lock.lock()
        defer {
            lock.unlock()
            signalProcessed()
        }
        guard hasFetched else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        defer { _lastUpdateSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        do {
            switch event {
            case .historyGap(let token):
                let before = capture()
                try reload()
                lastToken = max(lastToken, token)
                // What changed is unknown: every row that stayed may have changed.
                report(diff(from: before, contentChanged: nil), token: lastToken, oldSections: before.sections)
            case .committed(let entry, _):
                // The store hands every commit once, in order: an older token is one this
                // controller's own fetch already included.
                guard entry.token > lastToken else { return }
                lastToken = entry.token
                try apply(entry)
            }
        } catch {
            // A commit that cannot be read leaves the controller behind: start again from
            // a fresh fetch, reported as a batch; if even that fails, the next commit retries.
            let before = capture()
            if (try? reload()) != nil {
                report(diff(from: before, contentChanged: nil), token: lastToken, oldSections: before.sections)
            }
        }
    }

    private func apply(_ entry: HistoryEntry) throws {
        let affected = try plan.affectedIDs(by: entry.changes, shown: shownKeys, store: store)
        guard !affected.all.isEmpty else { return }
        for id in affected.all { recordCache.removeValue(forKey: id) }
        let oldSections = sectionList.values
        let batch: ChangeBatch
        if request.fetchLimit != nil || request.fetchOffset > 0 {
            // The window's edge moves: refetch the window (it is bounded) and diff it.
            let before = capture()
            let seen = try reload()
            // The refetch may have seen later commits too; they count as processed now (the
            // store hands them over next and they are skipped), so this batch carries their
            // redrawn rows as well, and their token.
            let later = laterContentChanges(after: entry.token, through: seen)
            batch = diff(from: before, contentChanged: later.map { $0.union(affected.contentChanged) })
        } else {
            batch = try incremental(affected)
        }
        if entry.author != userDrivenAuthor { report(batch, token: lastToken, oldSections: oldSections) }
    }

    /// Which keys the rows show (a change to another key alone is no update).
    private var shownKeys: ShownKeys { ShownKeys(undisplayed: undisplayedKeys, displayed: displayedKeys) }

    /// The rows whose shown content the commits after `token`, through `seen`, changed; nil
    /// (any row may have) when the history no longer has them all.
    private func laterContentChanges(after token: Int64, through seen: Int64) -> Set<Int64>? {
        guard seen > token else { return [] }
        guard let later = try? store.history(since: token) else { return nil }
        var changed = Set<Int64>()
        for entry in later where entry.token <= seen {
            guard let affected = try? plan.affectedIDs(by: entry.changes, shown: shownKeys, store: store) else { return nil }
            changed.formUnion(affected.contentChanged)
        }
        return changed
    }

    /// Applies the new state of the k affected objects to the ordered entries.
    private func incremental(_ affected: AffectedIDs) throws -> ChangeBatch {
        let oldStarts = starts
        let oldSections = sectionList.values
        var oldPlacements: [Int64: Placement] = [:]
        for id in affected.all {
            if let placement = placement(of: id, starts: oldStarts) { oldPlacements[id] = placement }
        }
        let newKeys = try store.read { context -> [(Int64, [SQLValue])] in
            var rows: [(Int64, [SQLValue])] = []
            try context.forEachKeyRow(plan.unlimitedRequest, keyPaths: plan.keyPaths,
                                      extraCondition: Key(R.entity.primaryKey).isIn(Array(affected.all))) { rows.append(($0, $1)) }
            return rows
        }
        for (id, placement) in oldPlacements {
            sectionList.remove(placement.sectionKey)
            entries.remove(id)
        }
        for (id, keys) in newKeys {
            entries.insert(id, keys: keys)
            sectionList.add(plan.sectionKey(in: keys))
        }
        starts = sectionList.starts
        var newPlacements: [Int64: Placement] = [:]
        for (id, _) in newKeys {
            if let placement = placement(of: id, starts: starts) { newPlacements[id] = placement }
        }
        let removed = oldPlacements.values.filter { newPlacements[$0.id] == nil }
        let inserted = newPlacements.values.filter { oldPlacements[$0.id] == nil }
        let survivors = oldPlacements.values.compactMap { old -> Survivor? in
            guard let new = newPlacements[old.id] else { return nil }
            return Survivor(old: old, new: new, contentChanged: affected.contentChanged.contains(old.id))
        }
        // A survivor can stay only if as many unaffected rows precede it before and after.
        let oldRank = Self.ranks(oldPlacements.values.map { ($0.id, $0.global) })
        let newRank = Self.ranks(newPlacements.values.map { ($0.id, $0.global) })
        let candidates = survivors.filter { survivor in
            survivor.old.global - (oldRank[survivor.old.id] ?? 0) == survivor.new.global - (newRank[survivor.old.id] ?? 0)
        }
        let stable = BatchBuilder.stableSurvivors(candidates)
        if let batch = BatchBuilder.batch(oldSections: oldSections, newSections: sectionList.values, removed: removed,
                                          inserted: inserted, survivors: survivors, stable: stable, sectionIDs: currentIDs(ofSection:)) {
            return batch
        }
        // Rare: keeping order would need a move onto the same index path. Rebuild the old
        // order from the new one and diff the whole result instead.
        let before = reconstructOld(oldPlacements: oldPlacements, newPlacements: newPlacements, oldStarts: oldStarts,
                                    oldSections: oldSections)
        return diff(from: before, contentChanged: affected.contentChanged)
    }

    /// Each id's rank among the given positions (how many of them come before it).
    private static func ranks(_ positions: [(Int64, Int)]) -> [Int64: Int] {
        var result: [Int64: Int] = [:]
        for (rank, entry) in positions.sorted(by: { $0.1 < $1.1 }).enumerated() { result[entry.0] = rank }
        return result
    }

    private func placement(of id: Int64, starts: [Int]) -> Placement? {
        guard let global = entries.index(of: id), let keys = entries.keys(of: id) else { return nil }
        return Placement(id: id, global: global, path: SectionList.indexPath(of: global, starts: starts),
                         sectionKey: plan.sectionKey(in: keys))
    }

    /// The ids of a section as the controller holds it now.
    private func currentIDs(ofSection index: Int) -> [Int64] {
        let start = starts[index]
        return (start..<start + sectionList.sections[index].count).map { entries.id(at: $0) }
    }

    // MARK: Whole-result diffs

    /// The state before a change, enough to diff against.
    struct Captured {
        var ids: [Int64]
        var sections: [SectionValue]
        var starts: [Int]
    }

    private func capture() -> Captured {
        Captured(ids: entries.allIDs, sections: sectionList.values, starts: starts)
    }

    private func reconstructOld(oldPlacements: [Int64: Placement], newPlacements: [Int64: Placement], oldStarts: [Int],
                                oldSections: [SectionValue]) -> Captured {
        var ids = entries.allIDs.filter { newPlacements[$0] == nil }
        for placement in oldPlacements.values.sorted(by: { $0.global < $1.global }) {
            ids.insert(placement.id, at: placement.global)
        }
        return Captured(ids: ids, sections: oldSections, starts: oldStarts)
    }

    /// Diffs the whole result against `before`. `contentChanged` nil means unknown: every
    /// survivor is reported updated.
    private func diff(from before: Captured, contentChanged: Set<Int64>?) -> ChangeBatch {
        let newIDs = entries.allIDs
        let newSections = sectionList.values
        func placements(_ ids: [Int64], _ starts: [Int], _ sections: [SectionValue]) -> [Int64: Placement] {
            var result: [Int64: Placement] = [:]
            result.reserveCapacity(ids.count)
            for (global, id) in ids.enumerated() {
                let path = SectionList.indexPath(of: global, starts: starts)
                result[id] = Placement(id: id, global: global, path: path, sectionKey: sections.isEmpty ? .null : sections[path.section])
            }
            return result
        }
        let old = placements(before.ids, before.starts, before.sections)
        let new = placements(newIDs, starts, newSections)
        let removed = before.ids.compactMap { old[$0] }.filter { new[$0.id] == nil }
        let inserted = newIDs.compactMap { new[$0] }.filter { old[$0.id] == nil }
        let survivors = before.ids.compactMap { id -> Survivor? in
            guard let oldPlacement = old[id], let newPlacement = new[id] else { return nil }
            return Survivor(old: oldPlacement, new: newPlacement, contentChanged: contentChanged?.contains(id) ?? true)
        }
        let stable = BatchBuilder.stableSurvivors(survivors)
        let sectionIDs: (Int) -> [Int64] = { index in Array(newIDs[self.starts[index]..<self.starts[index] + self.sectionList.sections[index].count]) }
        if let batch = BatchBuilder.batch(oldSections: before.sections, newSections: newSections, removed: removed,
                                          inserted: inserted, survivors: survivors, stable: stable, sectionIDs: sectionIDs) {
            return batch
        }
        // Cannot happen (survivors on equal paths always stay in a whole diff); should it,
        // replace every section rather than report nothing.
        var reset = ChangeBatch()
        reset.sectionDeletes = Array(before.sections.indices)
        reset.sectionInserts = newSections.indices.map { index in
            ChangeBatch.SectionInsert(index: index, section: Snapshot.Section(value: newSections[index], ids: sectionIDs(index)))
        }
        return reset
    }

    /// Refetches the whole result; returns the history token it was read at.
    @discardableResult
    private func reload() throws -> Int64 {
        let plan = self.plan
        let (ids, keys, token) = try store.read { context -> ([Int64], [SQLValue], Int64) in
            let token = try context.currentToken()
            var ids: [Int64] = []
            var keys: [SQLValue] = []
            try context.forEachKeyRow(plan.orderedRequest, keyPaths: plan.keyPaths) { id, values in
                ids.append(id)
                keys.append(contentsOf: values)
            }
            return (ids, keys, token)
        }
        load(ids: ids, keys: keys)
        lastToken = max(lastToken, token)
        return token
    }

    private func load(ids: [Int64], keys: [SQLValue]) {
        if entries.order.keyCount != plan.keyPaths.count || plan.sortKeys != currentSortKeys {
            entries = OrderedEntries(order: plan.order)
        }
        sectionList = plan.makeSectionList()
        currentSortKeys = plan.sortKeys
        entries.load(ids: ids, keys: keys)
        let keyCount = max(1, plan.keyPaths.count)
        sectionList.load(stride(from: 0, to: keys.count, by: keyCount).map { plan.sectionKey(in: Array(keys[$0..<$0 + keyCount])) })
        starts = sectionList.starts
        recordCache.removeAll()
    }

    private var currentSortKeys: [SortKey] = []

    // MARK: Reporting

    private func makeSnapshot() -> Snapshot {
        var sections: [Snapshot.Section] = []
        let ids = entries.allIDs
        for (index, section) in sectionList.sections.enumerated() {
            sections.append(Snapshot.Section(value: section.value, ids: Array(ids[starts[index]..<starts[index] + section.count])))
        }
        return Snapshot(sections: sections)
    }

    private func report(_ batch: ChangeBatch, token: Int64?, oldSections: [SectionValue]) {
        guard !batch.isEmpty else { return }
        let change = ResultsChange(batch: batch, edits: BatchBuilder.edits(batch),
                                   snapshot: _includesSnapshots ? makeSnapshot() : Snapshot(sections: []), token: token)
        if let delegate = _delegate {
            delegate.controllerWillChangeContent(self)
            for section in batch.sectionDeletes {
                let name = section < oldSections.count ? oldSections[section].name : ""
                delegate.controller(self, didChangeSection: name, atIndex: section, for: .delete)
            }
            for insert in batch.sectionInserts {
                delegate.controller(self, didChangeSection: insert.section.name, atIndex: insert.index, for: .insert)
            }
            for row in batch.rowDeletes { delegate.controller(self, didChangeObject: row.id, at: row.indexPath, for: .delete, newIndexPath: nil) }
            for row in batch.rowInserts { delegate.controller(self, didChangeObject: row.id, at: nil, for: .insert, newIndexPath: row.indexPath) }
            for move in batch.moves { delegate.controller(self, didChangeObject: move.id, at: move.from, for: .move, newIndexPath: move.to) }
            for update in batch.updates {
                delegate.controller(self, didChangeObject: update.id, at: update.old, for: .update, newIndexPath: update.new)
            }
            delegate.controllerDidChangeContent(self, change)
        }
        for continuation in streams.values { continuation.yield(change) }
    }
}
