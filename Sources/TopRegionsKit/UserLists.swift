import Foundation
import ResultsController
import Store
import Synchronization

/// Every user's Recents and Favorites as live lists, each kind from one results controller
/// sectioned by user, for a server that follows many users' lists at once. A commit that
/// touches one user's list is processed once, by the shared controller, and reaches that
/// user's list only: a list costs what changed in it, not one more controller for every
/// commit. The lists are the same as `liveRecents` and `liveFavorites` give (one section,
/// the same rows, batches and tokens).
public final class UserLists: Sendable {
    private let gallery: any GalleryObserving
    private let recentsLists = Mutex<SectionedLists<RecentRecord, RecentRow>?>(nil)
    private let favoritesLists = Mutex<SectionedLists<FavoriteRecord, FavoriteRow>?>(nil)

    public init(gallery: any GalleryObserving) {
        self.gallery = gallery
    }

    /// `user`'s Recents, live, newest first (the first 20 shown).
    public func recents(for user: GalleryUser) throws -> LiveList<RecentRow> {
        try recentsLists.withLock { lists in
            if let lists { return lists }
            let made = try SectionedLists(gallery: gallery, label: "recents", request: Gallery.allRecentsRequest,
                                          displayedKeys: ["user", "lastViewed", "photo", "photo.flickrID", "photo.title", "photo.subtitle"],
                                          window: Gallery.recentsLimit, rows: Gallery.recentRows)
            lists = made
            return made
        }.list(for: user.id)
    }

    /// `user`'s Favorites, live, in the user's order.
    public func favorites(for user: GalleryUser) throws -> LiveList<FavoriteRow> {
        try favoritesLists.withLock { lists in
            if let lists { return lists }
            let made = try SectionedLists(gallery: gallery, label: "favorites", request: Gallery.allFavoritesRequest,
                                          displayedKeys: ["user", "photo", "photo.flickrID", "photo.title"], window: nil, rows: Gallery.favoriteRows)
            lists = made
            return made
        }.list(for: user.id)
    }

    /// Stops following the store.
    public func close() {
        recentsLists.withLock { $0?.close() }
        favoritesLists.withLock { $0?.close() }
    }
}

extension Gallery {
    /// Every user's shown Recents, by user, each user's newest first.
    static var allRecentsRequest: FetchRequest {
        FetchRequest(RecentRecord.self, predicate: Key("photo.region").isNotNull,
                     sortDescriptors: [SortKey("user"), SortKey("lastViewed", ascending: false), SortKey("id")])
    }

    /// Every user's shown Favorites, by user, each in the user's order.
    static var allFavoritesRequest: FetchRequest {
        FetchRequest(FavoriteRecord.self, predicate: Key("photo.region").isNotNull,
                     sortDescriptors: [SortKey("user"), SortKey("displayOrder"), SortKey("id")])
    }

    /// Recents rows of records, their photos read in `context`.
    @Sendable static func recentRows(_ context: ReadContext, _ pairs: [(path: IndexPath, record: RecentRecord)]) throws -> [RecentRow] {
        let photos = try photosByID(pairs.compactMap(\.record.photoID), in: context)
        return pairs.compactMap { _, record in
            record.photoID.flatMap { photos[$0] }.map { RecentRow(id: $0.flickrID, title: $0.title, subtitle: $0.subtitle, lastViewed: record.lastViewed) }
        }
    }

    /// Favorites rows of records (positions from their index paths), their photos read in
    /// `context`.
    @Sendable static func favoriteRows(_ context: ReadContext, _ pairs: [(path: IndexPath, record: FavoriteRecord)]) throws -> [FavoriteRow] {
        let photos = try photosByID(pairs.compactMap(\.record.photoID), in: context)
        return pairs.compactMap { path, record in
            record.photoID.flatMap { photos[$0] }.map { FavoriteRow(position: path.row + 1, id: $0.flickrID, title: $0.title) }
        }
    }

    /// These photos, by row id, read in `context` in one query.
    static func photosByID(_ ids: [Int64], in context: ReadContext) throws -> [Int64: PhotoRecord] {
        let photos = try context.fetch(PhotoRecord.self, ids: ids)
        return Dictionary(photos.compactMap { photo in photo.id.map { ($0, photo) } }, uniquingKeysWith: { first, _ in first })
    }
}

/// One results controller over every user's rows of a kind, sectioned by user, and the
/// live lists of single users made from its sections: each list is the first `window` rows
/// of its user's section (all of them without a window). The controller delivers on
/// `queue`, where every list's state lives too.
///
/// `@unchecked Sendable`: the mutable state is touched only on `queue`.
final class SectionedLists<R: Record, Row: Sendable & Encodable>: ResultsControllerDelegate, @unchecked Sendable {
    let queue: DispatchQueue
    let controller: ResultsController<R>
    let reader: RowReader<R, Row>
    let window: Int?
    /// The controller's sections' values, in order.
    private var order: [SectionValue] = []
    /// Each section's ids, in order.
    private var ids: [SectionValue: [Int64]] = [:]
    /// The lists that follow a section.
    private var followers: [SectionValue: [ObjectIdentifier: @Sendable (PendingBatch<Row>) -> Void]] = [:]

    init(gallery: any GalleryObserving, label: String, request: FetchRequest, displayedKeys: Set<String>, window: Int?,
         rows: @escaping @Sendable (ReadContext, [(path: IndexPath, record: R)]) throws -> [Row]) throws {
        queue = DispatchQueue(label: "topregions.live.all-\(label)")
        controller = try ResultsController(store: gallery.observableStore, request: request, sectionKeyPath: "user",
                                           displayedKeys: displayedKeys, deliveryQueue: queue)
        controller.includesSnapshots = false
        reader = RowReader(store: gallery.observableStore, rows: rows)
        self.window = window
        try queue.sync {
            controller.delegate = self
            try controller.performFetch()
            for (index, section) in controller.sections.enumerated() {
                order.append(section.value)
                ids[section.value] = (0..<section.numberOfObjects).compactMap { controller.id(at: IndexPath(row: $0, section: index)) }
            }
        }
    }

    /// The live list of the user with this row id.
    func list(for userID: Int64) throws -> LiveList<Row> {
        let list = LiveList(source: SectionSource(lists: self, section: SectionValue(.integer(userID))), queue: queue)
        try list.start()
        return list
    }

    func close() {
        queue.async { [self] in
            controller.delegate = nil
            followers.removeAll()
        }
    }

    // MARK: On the queue

    /// The rows a list of `section` shows now.
    func shown(_ section: SectionValue) -> [Int64] {
        let all = ids[section] ?? []
        return window.map { Array(all.prefix($0)) } ?? all
    }

    func follow(_ section: SectionValue, by follower: ObjectIdentifier, _ deliver: @escaping @Sendable (PendingBatch<Row>) -> Void) {
        followers[section, default: [:]][follower] = deliver
    }

    func unfollow(_ section: SectionValue, by follower: ObjectIdentifier) {
        followers[section]?.removeValue(forKey: follower)
        if followers[section]?.isEmpty == true { followers.removeValue(forKey: section) }
    }

    /// Applies the batch to the sections' ids, and hands each list whose rows it changed
    /// its own batch (the difference of what it shows, in one section).
    func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) {
        let token = change.token ?? self.controller.processedToken
        let (before, contentChanged) = apply(change.batch)
        for (section, old) in before {
            guard let lists = followers[section], !lists.isEmpty else { continue }
            let oldShown = window.map { Array(old.prefix($0)) } ?? old
            let newShown = shown(section)
            let batch = ChangeBatch.difference(from: oldShown, to: newShown, contentChanged: contentChanged.intersection(newShown))
            guard !batch.isEmpty else { continue }
            let reader = reader
            let pending = PendingBatch<Row>(token: token) { try reader.batch(batch, token: token) }
            for deliver in lists.values { deliver(pending) }
        }
    }

    /// Applies a batch of the controller to `order` and `ids`; returns the ids before it of
    /// every section it touched, and the objects whose shown content changed.
    private func apply(_ batch: ChangeBatch) -> (before: [SectionValue: [Int64]], contentChanged: Set<Int64>) {
        let oldOrder = order
        var newOrder = oldOrder
        for index in batch.sectionDeletes.sorted(by: >) where index < newOrder.count { newOrder.remove(at: index) }
        for insert in batch.sectionInserts.sorted(by: { $0.index < $1.index }) {
            newOrder.insert(insert.section.value, at: min(insert.index, newOrder.count))
        }
        var before: [SectionValue: [Int64]] = [:]
        func touch(_ section: SectionValue) {
            if before[section] == nil { before[section] = ids[section] ?? [] }
        }
        var consistent = true
        func section(_ index: Int, of sections: [SectionValue]) -> SectionValue? {
            guard sections.indices.contains(index) else {
                consistent = false
                return nil
            }
            return sections[index]
        }
        for index in batch.sectionDeletes {
            guard let value = section(index, of: oldOrder) else { continue }
            touch(value)
            ids.removeValue(forKey: value)
        }
        for insert in batch.sectionInserts {
            touch(insert.section.value)
            ids[insert.section.value] = insert.section.ids
        }
        // Rows leave their sections (old index paths, last first), then arrive (new index
        // paths, first first).
        var leaving: [SectionValue: [Int]] = [:]
        for row in batch.rowDeletes {
            if let value = section(row.indexPath.section, of: oldOrder) { leaving[value, default: []].append(row.indexPath.row) }
        }
        for move in batch.moves {
            if let value = section(move.from.section, of: oldOrder) { leaving[value, default: []].append(move.from.row) }
        }
        for (section, rows) in leaving {
            touch(section)
            for row in rows.sorted(by: >) {
                if let count = ids[section]?.count, row < count { ids[section]?.remove(at: row) } else { consistent = false }
            }
        }
        var arriving: [SectionValue: [(row: Int, id: Int64)]] = [:]
        for row in batch.rowInserts {
            if let value = section(row.indexPath.section, of: newOrder) { arriving[value, default: []].append((row.indexPath.row, row.id)) }
        }
        for move in batch.moves {
            if let value = section(move.to.section, of: newOrder) { arriving[value, default: []].append((move.to.row, move.id)) }
        }
        for (section, rows) in arriving {
            touch(section)
            for (row, id) in rows.sorted(by: { $0.row < $1.row }) {
                if row <= ids[section, default: []].count { ids[section, default: []].insert(id, at: row) } else { consistent = false }
            }
        }
        var contentChanged = Set(batch.moves.filter(\.updated).map(\.id))
        for update in batch.updates {
            if let value = section(update.old.section, of: oldOrder) { touch(value) }
            contentChanged.insert(update.id)
        }
        order = newOrder
        // A batch that does not fit what was applied before (it would be a bug): the sections
        // are read again from the controller, and every section that differs is touched.
        if !consistent { reload(touching: &before) }
        return (before, contentChanged)
    }

    /// Reads every section's ids from the controller again, recording the old ids of those
    /// that change.
    private func reload(touching before: inout [SectionValue: [Int64]]) {
        var fresh: [SectionValue: [Int64]] = [:]
        order = []
        for (index, section) in controller.sections.enumerated() {
            order.append(section.value)
            fresh[section.value] = (0..<section.numberOfObjects).compactMap { controller.id(at: IndexPath(row: $0, section: index)) }
        }
        for section in Set(fresh.keys).union(ids.keys) where fresh[section] != ids[section] && before[section] == nil {
            before[section] = ids[section] ?? []
        }
        ids = fresh
    }
}

/// One user's section of a `SectionedLists` as a live list's source.
///
/// `@unchecked Sendable`: touched only on the lists' queue.
private final class SectionSource<R: Record, Row: Sendable & Encodable>: LiveListSource, @unchecked Sendable {
    let lists: SectionedLists<R, Row>
    let section: SectionValue

    init(lists: SectionedLists<R, Row>, section: SectionValue) {
        self.lists = lists
        self.section = section
    }

    func start(_ deliver: @escaping @Sendable (PendingBatch<Row>) -> Void) throws {
        lists.follow(section, by: ObjectIdentifier(self), deliver)
    }

    func stop() {
        lists.unfollow(section, by: ObjectIdentifier(self))
    }

    var token: Int64 { lists.controller.processedToken }

    func waitUntilProcessed(through token: Int64, timeout: TimeInterval) -> Bool {
        lists.controller.waitUntilProcessed(through: token, timeout: timeout)
    }

    func whenProcessed(through token: Int64, _ handler: @escaping @Sendable () -> Void) {
        lists.controller.whenProcessed(through: token, handler)
    }

    func snapshot() throws -> RowsRead<ListEvent<Row>> {
        try lists.reader.snapshot([(value: .null, ids: lists.shown(section))], token: lists.controller.processedToken)
    }
}
