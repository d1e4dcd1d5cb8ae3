import Store

/// A controller's request, checked and prepared: the sort keys it keeps in memory (the
/// request's, plus a binary tie-break for the section key), and which changes in the
/// store can affect it.
struct QueryPlan {
    let request: FetchRequest
    /// The sort keys the controller orders by, in memory and in SQL alike.
    let sortKeys: [SortKey]
    var keyPaths: [String] { sortKeys.map(\.keyPath) }
    let order: KeyOrder
    let isSectioned: Bool
    let rootEntity: Entity
    /// For each relationship a key path crosses: the path to it from the root, the entity
    /// it leads to, and the keys read there.
    let relationshipPaths: [(path: String, entity: String, keys: Set<String>)]

    /// `displayedKeyPaths`: what the rows show, which may cross relationships
    /// (`photo.title`): a change there is an update of the rows that lead to it.
    init(request: FetchRequest, sectionKeyPath: String?, displayedKeyPaths: Set<String> = [], schema: Schema) throws {
        guard let first = request.sortDescriptors.first else {
            throw ResultsControllerError(.noSortKey, "A results controller's request needs at least one sort key")
        }
        var sortKeys = request.sortDescriptors
        if let sectionKeyPath {
            guard first.keyPath == sectionKeyPath else {
                throw ResultsControllerError(.sectionKeyNotFirst, "The first sort key must order by the section key \"\(sectionKeyPath)\", not \"\(first.keyPath)\": otherwise a section would be split in two")
            }
            // Values a collation calls equal ("Limburg", "limburg") are still two sections:
            // keep them apart in the order too.
            if first.collation != .binary {
                sortKeys.insert(SortKey(sectionKeyPath, ascending: first.ascending, collation: .binary), at: 1)
            }
        }
        self.request = request
        self.sortKeys = sortKeys
        self.order = KeyOrder(sortKeys)
        self.isSectioned = sectionKeyPath != nil
        self.rootEntity = try schema.entity(named: request.entityName)
        self.relationshipPaths = try Self.relationshipPaths(
            keyPaths: sortKeys.map(\.keyPath) + (request.predicate?.keyPaths ?? []) + displayedKeyPaths.sorted(), root: rootEntity, schema: schema)
    }

    /// The entities whose changes can affect the results.
    var relevantEntities: Set<String> {
        Set([rootEntity.name] + relationshipPaths.map(\.entity))
    }

    /// The request in the controller's order (with the section tie-break).
    var orderedRequest: FetchRequest {
        var ordered = request
        ordered.sortDescriptors = sortKeys
        return ordered
    }

    var unlimitedRequest: FetchRequest {
        var unlimited = orderedRequest
        unlimited.fetchLimit = nil
        unlimited.fetchOffset = 0
        return unlimited
    }

    func sectionKey(in keys: [SQLValue]) -> SectionValue {
        isSectioned ? SectionValue(keys[0]) : .null
    }

    func makeSectionList() -> SectionList {
        SectionList(collation: sortKeys[0].collation, ascending: sortKeys[0].ascending, isSectioned: isSectioned)
    }

    private static func relationshipPaths(keyPaths: [String], root: Entity, schema: Schema) throws
        -> [(path: String, entity: String, keys: Set<String>)] {
        var found: [String: (entity: String, keys: Set<String>)] = [:]
        for keyPath in keyPaths {
            let components = keyPath.split(separator: ".").map(String.init)
            var entity = root
            for position in 0..<(components.count - 1) {
                guard let relationship = entity.relationship(named: components[position]) else { break }
                let destination = try schema.entity(named: relationship.destination)
                let path = components[0...position].joined(separator: ".")
                found[path, default: (destination.name, [])].keys.insert(components[position + 1])
                entity = destination
            }
        }
        return found.map { (path: $0.key, entity: $0.value.entity, keys: $0.value.keys) }.sorted { $0.path < $1.path }
    }

    /// The root objects a commit may have moved, added, removed or changed.
    func affectedIDs(by changes: ChangeSet, shown: ShownKeys, store: any StoreReading) throws -> AffectedIDs {
        var affected = AffectedIDs()
        let root = changes[rootEntity.name]
        affected.all.formUnion(root.inserted)
        affected.all.formUnion(root.deleted)
        for (id, keys) in root.updated {
            affected.all.insert(id)
            if shown.includesAny(of: keys) { affected.contentChanged.insert(id) }
        }
        // An attribute of a related object that the request reads: find the root objects
        // that lead to it (one query per relationship and kind of change, chunked IN inside
        // the store); they are redrawn only when a key they show changed there.
        for relationship in relationshipPaths {
            var redrawn: [Int64] = [], placed: [Int64] = []
            for (id, keys) in changes[relationship.entity].updated {
                guard keys.contains(EntityChanges.everyKey) || !keys.isDisjoint(with: relationship.keys) else { continue }
                let paths = keys.map { $0 == EntityChanges.everyKey ? $0 : "\(relationship.path).\($0)" }
                if shown.includesAny(of: Set(paths)) { redrawn.append(id) } else { placed.append(id) }
            }
            for (related, contentChanged) in [(redrawn, true), (placed, false)] where !related.isEmpty {
                let lookup = FetchRequest(entityName: rootEntity.name, predicate: Key(relationship.path).isIn(related),
                                          sortDescriptors: [SortKey(rootEntity.primaryKey)])
                let ids = try store.read { try $0.fetchIDs(lookup) }
                affected.all.formUnion(ids)
                if contentChanged { affected.contentChanged.formUnion(ids) }
            }
        }
        return affected
    }
}

/// Which keys a row shows: a change to another key alone moves the row (when it is sorted
/// on) but is not reported as an update.
struct ShownKeys: Sendable {
    /// Every key but these.
    var undisplayed: Set<String> = []
    /// Only these, when given.
    var displayed: Set<String>?

    func includesAny(of keys: Set<String>) -> Bool {
        if keys.contains(EntityChanges.everyKey) { return true }
        if let displayed { return !keys.isDisjoint(with: displayed) }
        return !keys.isSubset(of: undisplayed)
    }
}

/// The root objects a commit touched, and those whose shown content changed.
struct AffectedIDs {
    var all = Set<Int64>()
    var contentChanged = Set<Int64>()
}
