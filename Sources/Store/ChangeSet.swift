/// What one committed transaction changed, per entity: the ids inserted, updated (with the
/// names of the attributes and relationships that changed) and deleted.
///
/// Within a transaction changes fold together as Core Data folds them: an object inserted
/// and then updated is inserted; inserted and then deleted is nothing; updated and then
/// deleted is deleted.
public struct ChangeSet: Sendable, Equatable {
    /// The changes by entity name; entities with none are left out.
    public private(set) var entities: [String: EntityChanges] = [:]

    /// A change set with no changes.
    public init() {}

    /// Whether nothing changed.
    public var isEmpty: Bool { entities.values.allSatisfy(\.isEmpty) }

    /// The changes to the entity named `entityName`; empty when it has none.
    public subscript(entityName: String) -> EntityChanges {
        entities[entityName] ?? EntityChanges()
    }

    /// Every entity that has a change.
    public var entityNames: [String] { entities.filter { !$0.value.isEmpty }.keys.sorted() }

    package mutating func recordInsert(_ entity: String, _ id: Int64) {
        entities[entity, default: EntityChanges()].recordInsert(id)
    }

    package mutating func recordUpdate(_ entity: String, _ id: Int64, _ keys: some Sequence<String>) {
        entities[entity, default: EntityChanges()].recordUpdate(id, keys)
    }

    package mutating func recordDelete(_ entity: String, _ id: Int64) {
        entities[entity, default: EntityChanges()].recordDelete(id)
    }

    /// Adds the changes of a later transaction to these.
    public mutating func merge(_ later: ChangeSet) {
        for (name, changes) in later.entities {
            for id in changes.inserted { recordInsert(name, id) }
            for (id, keys) in changes.updated { recordUpdate(name, id, keys) }
            for id in changes.deleted { recordDelete(name, id) }
        }
    }

    init(entities: [String: EntityChanges]) {
        self.entities = entities.filter { !$0.value.isEmpty }
    }
}

/// The changes to one entity's objects.
public struct EntityChanges: Sendable, Equatable {
    /// Ids of the objects inserted.
    public private(set) var inserted: Set<Int64> = []
    /// Updated objects with the keys (attribute and relationship names) that changed;
    /// `everyKey` among them when the object may have changed in every key.
    public private(set) var updated: [Int64: Set<String>] = [:]
    /// Ids of the objects deleted.
    public private(set) var deleted: Set<Int64> = []

    /// The key an update records when an id was deleted and used again in one
    /// transaction: to a reader, the object may have changed in every key.
    public static let everyKey = "*"

    /// No changes.
    public init() {}

    init(inserted: Set<Int64>, updated: [Int64: Set<String>], deleted: Set<Int64>) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// Every id mentioned.
    public var allIDs: Set<Int64> { inserted.union(updated.keys).union(deleted) }

    mutating func recordInsert(_ id: Int64) {
        if deleted.remove(id) != nil {
            // A deleted id used again within the transaction: to a reader, the row changed.
            updated[id, default: []].insert(Self.everyKey)
        } else {
            inserted.insert(id)
        }
    }

    mutating func recordUpdate(_ id: Int64, _ keys: some Sequence<String>) {
        guard !inserted.contains(id), !deleted.contains(id) else { return }
        updated[id, default: []].formUnion(keys)
    }

    /// One key: the common case of a relationship's other end, checked before it is added.
    mutating func recordUpdate(_ id: Int64, _ key: String) {
        if updated[id]?.contains(key) == true { return }
        guard !inserted.contains(id), !deleted.contains(id) else { return }
        updated[id, default: []].insert(key)
    }

    mutating func recordDelete(_ id: Int64) {
        if inserted.remove(id) != nil { return }
        updated.removeValue(forKey: id)
        deleted.insert(id)
    }
}
