/// The storage type of an attribute's column.
public enum ColumnType: String, Sendable {
    /// A 64-bit signed integer.
    case integer = "INTEGER"
    /// A floating-point number.
    case real = "REAL"
    /// UTF-8 text.
    case text = "TEXT"
    /// Bytes.
    case blob = "BLOB"
}

/// How text is compared when sorting (and in indexes).
public enum Collation: String, Sendable {
    /// Byte order of the UTF-8 text (SQLite's BINARY).
    case binary = "BINARY"
    /// `String.caseInsensitiveCompare`, for all of Unicode.
    case caseInsensitive = "caseInsensitive"
    /// Finder-like, as `String.localizedStandardCompare`: case-insensitive, numbers as
    /// numbers; ICU's collation, a total order whatever the process's locale (see
    /// `Collation.compare`).
    case localizedStandard = "localizedStandard"
}

/// A stored property of an entity: one column.
public struct Attribute: Sendable {
    /// The column's name in the entity's table; key paths name it too.
    public var name: String
    /// How the column stores its values.
    public var type: ColumnType
    /// Whether the column may hold NULL; otherwise it is NOT NULL.
    public var isOptional: Bool
    /// Whether no two rows may hold the same value (a UNIQUE column).
    public var isUnique: Bool
    /// The column's default, used by `CREATE TABLE` and when a record leaves it unset.
    public var defaultValue: SQLValue?

    /// An attribute with these values.
    public init(_ name: String, _ type: ColumnType, optional: Bool = false, unique: Bool = false,
                default defaultValue: SQLValue? = nil) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.isUnique = unique
        self.defaultValue = defaultValue
    }
}

/// What deleting an object does to the objects at the other end of a relationship
/// (Core Data's delete rules).
public enum DeleteRule: Sendable {
    /// The other objects stay; their reference to the deleted object becomes NULL.
    case nullify
    /// The other objects are deleted too (and their own rules apply).
    case cascade
    /// The delete fails while any other object is related.
    case deny
}

/// A relationship between two entities. The foreign key lives on the to-one side
/// (`toOne`); its inverse (`toMany`, or `toOneInverse` for one-to-one) finds it through
/// the destination's relationship named `inverse`.
public struct Relationship: Sendable {
    /// Which side of the relationship this is, and where its key is.
    public enum Kind: Sendable, Equatable {
        /// A reference held in a column of this entity's table.
        case toOne(column: String)
        /// The other side of a destination's `toOne` whose column is unique (one-to-one).
        case toOneInverse
        /// The other side of a destination's `toOne`.
        case toMany
    }

    /// The relationship's name, as key paths cross it (`region.name`).
    public var name: String
    /// The name of the entity at the other end.
    public var destination: String
    /// Which side of the relationship this is, and where its key is.
    public var kind: Kind
    /// The destination's relationship that points back; required unless this side holds the key.
    public var inverse: String?
    /// What deleting an object of this entity does to the objects at the other end.
    public var deleteRule: DeleteRule

    /// A reference held in `column` (default: `<name>_id`) of this entity's table.
    public static func toOne(_ name: String, _ destination: String, column: String? = nil, inverse: String? = nil,
                             deleteRule: DeleteRule = .nullify) -> Relationship {
        Relationship(name: name, destination: destination, kind: .toOne(column: column ?? "\(name)_id"),
                     inverse: inverse, deleteRule: deleteRule)
    }

    /// The objects of `destination` whose relationship `inverse` points here.
    public static func toMany(_ name: String, _ destination: String, inverse: String,
                              deleteRule: DeleteRule = .nullify) -> Relationship {
        Relationship(name: name, destination: destination, kind: .toMany, inverse: inverse, deleteRule: deleteRule)
    }

    /// The one object of `destination` whose unique relationship `inverse` points here.
    public static func toOneInverse(_ name: String, _ destination: String, inverse: String,
                                    deleteRule: DeleteRule = .nullify) -> Relationship {
        Relationship(name: name, destination: destination, kind: .toOneInverse, inverse: inverse, deleteRule: deleteRule)
    }

    /// The foreign key column, when it is in this entity's table.
    public var foreignKeyColumn: String? {
        if case .toOne(let column) = kind { return column }
        return nil
    }

    /// Whether the relationship leads to one object at most, so key paths may cross it.
    public var isToOne: Bool { kind != .toMany }
}

/// An index on an entity's columns (beyond the ones the store makes for foreign keys).
public struct TableIndex: Sendable {
    /// The index's name in the database.
    public var name: String
    /// The indexed columns in order, each with the collation its text is ordered by (nil: binary).
    public var columns: [(column: String, collation: Collation?)]
    /// Whether no two rows may hold the same values in these columns.
    public var isUnique: Bool
    /// Columns kept in descending order (so a query ordering them that way reads the index
    /// in order instead of sorting).
    public var descending: Set<String>

    /// An index with these values.
    public init(_ name: String, _ columns: [(column: String, collation: Collation?)], unique: Bool = false,
                descending: Set<String> = []) {
        self.name = name
        self.columns = columns
        self.isUnique = unique
        self.descending = descending
    }

    /// An ascending index on these columns, compared as stored.
    public init(_ name: String, columns: [String], unique: Bool = false) {
        self.init(name, columns.map { (column: $0, collation: nil) }, unique: unique)
    }
}

/// A kind of object the store keeps: its table, primary key, attributes and relationships.
///
/// Every entity has an integer primary key (Core Data's object id); identities from
/// outside, like a Flickr id, are unique attributes.
public struct Entity: Sendable {
    /// The entity's name, also its table's.
    public var name: String
    /// The integer primary key column's name.
    public var primaryKey: String
    /// The stored properties, one column each.
    public var attributes: [Attribute]
    /// Every relationship, to-one (with its key column here) and to-many alike.
    public var relationships: [Relationship]
    /// The declared indexes; the store adds one on each foreign key no declared index leads with.
    public var indexes: [TableIndex]
    /// Whether the history and observers hear of its rows' changes. Off only for
    /// bookkeeping nobody shows (a ledger of API calls), where a history entry per row
    /// would be all cost.
    public var isTracked: Bool

    /// The columns of the table after the primary key: attributes, then foreign keys.
    public var storedColumns: [String] { storedColumnIndex.names }
    /// `storedColumns` and their positions.
    let storedColumnIndex: NameIndex
    /// Each stored column's value when a record leaves it unset.
    let defaultValues: [SQLValue]
    /// For each to-one relationship that holds its key here: its position in `storedColumns`.
    let foreignKeyPositions: [(relationship: Relationship, position: Int)]
    /// `INSERT` statements, prepared once per connection and reused.
    let insertSQL: String
    let insertWithPrimaryKeySQL: String

    /// An entity with these values; `tracked: false` keeps its rows out of the history.
    public init(_ name: String, primaryKey: String = "id", attributes: [Attribute],
                relationships: [Relationship] = [], indexes: [TableIndex] = [], tracked: Bool = true) {
        self.name = name
        self.isTracked = tracked
        self.primaryKey = primaryKey
        self.attributes = attributes
        self.relationships = relationships
        self.indexes = indexes
        let columns = attributes.map(\.name) + relationships.compactMap(\.foreignKeyColumn)
        let index = NameIndex(columns)
        self.storedColumnIndex = index
        self.defaultValues = columns.map { column in
            attributes.first { $0.name == column }?.defaultValue ?? .null
        }
        self.foreignKeyPositions = relationships.compactMap { relationship in
            relationship.foreignKeyColumn.flatMap { index[$0] }.map { (relationship, $0) }
        }
        let table = SQL.quote(name)
        let columnList = columns.map(SQL.quote).joined(separator: ", ")
        self.insertSQL = "INSERT INTO \(table) (\(columnList)) VALUES (\(SQL.placeholders(columns.count)))"
        self.insertWithPrimaryKeySQL = "INSERT INTO \(table) (\(SQL.quote(primaryKey))\(columns.isEmpty ? "" : ", ")\(columnList)) VALUES (\(SQL.placeholders(columns.count + 1)))"
    }

    /// The attribute called `name`, or nil when there is none.
    public func attribute(named name: String) -> Attribute? {
        attributes.first { $0.name == name }
    }

    /// The relationship called `name`, or nil when there is none.
    public func relationship(named name: String) -> Relationship? {
        relationships.first { $0.name == name }
    }

    /// The relationship whose foreign key is `column`.
    func relationship(forColumn column: String) -> Relationship? {
        relationships.first { $0.foreignKeyColumn == column }
    }
}

/// All entities of a store, checked for consistency when the store opens.
public struct Schema: Sendable {
    /// The entities, in the order declared.
    public let entities: [Entity]
    private let byName: [String: Entity]

    /// A schema of these entities; `validate()` checks them.
    public init(_ entities: [Entity]) {
        self.entities = entities
        self.byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The entity called `name`; throws `invalidRequest` when there is none.
    public func entity(named name: String) throws -> Entity {
        guard let entity = byName[name] else {
            throw StoreError(.invalidRequest, "The schema has no entity named \(name)")
        }
        return entity
    }

    /// Throws when an entity is declared twice, or a relationship names a destination or
    /// inverse that does not exist or does not point back.
    public func validate() throws {
        guard byName.count == entities.count else {
            throw StoreError(.invalidRequest, "The schema declares an entity twice")
        }
        for entity in entities {
            for relationship in entity.relationships {
                let destination = try self.entity(named: relationship.destination)
                guard let inverseName = relationship.inverse else {
                    if relationship.foreignKeyColumn == nil {
                        throw StoreError(.invalidRequest, "\(entity.name).\(relationship.name) needs an inverse")
                    }
                    continue
                }
                guard let inverse = destination.relationship(named: inverseName), inverse.destination == entity.name else {
                    throw StoreError(.invalidRequest,
                                     "\(entity.name).\(relationship.name): \(destination.name) has no relationship \(inverseName) back to \(entity.name)")
                }
                if relationship.foreignKeyColumn == nil && inverse.foreignKeyColumn == nil {
                    throw StoreError(.invalidRequest,
                                     "\(entity.name).\(relationship.name) and its inverse both lack a foreign key column")
                }
            }
        }
    }

    /// The relationship on the other side that holds the foreign key for `relationship`
    /// (which must not hold it itself).
    func foreignKeySide(of relationship: Relationship) throws -> (entity: Entity, column: String) {
        let destination = try entity(named: relationship.destination)
        guard let inverseName = relationship.inverse, let inverse = destination.relationship(named: inverseName),
              let column = inverse.foreignKeyColumn else {
            throw StoreError(.invalidRequest, "\(relationship.name) has no foreign key on \(relationship.destination)")
        }
        return (destination, column)
    }
}
