import CSQLite

/// A record whose columns are declared once, in `table`: the entity (attributes and to-one
/// relationships), decoding and encoding all come from that one list, so a column cannot be
/// added to the table and forgotten in the code that reads or writes it.
///
/// ```swift
/// struct Region: TableRecord {
///     var id: Int64?
///     var name = ""
///     var country: String?
///     static let table = RecordTable<Region>("Region", columns: [
///         .column("name", \.name),
///         .column("country", \.country),
///     ], relationships: [.toMany("photos", "Photo", inverse: "region")])
/// }
/// ```
///
/// Decoding starts from `init()` (give every stored property a default) and sets each
/// column straight from SQLite's row, by position.
public protocol TableRecord: Record {
    /// A record whose columns decoding then sets.
    init()
    /// The table: its name, columns, relationships and indexes, declared once.
    static var table: RecordTable<Self> { get }
}

// The members below are @inlinable so that each record type's decoding and encoding is
// specialized in the module that declares the record: generic code reached through a
// protocol would otherwise look up type metadata for every column of every row.
extension TableRecord {
    /// The entity, from `table`.
    public static var entity: Entity { table.entity }

    /// Decodes a row of any query by column name, from `init()`.
    @inlinable
    public init(row: Row) throws {
        self.init()
        try Self.table.decode(&self, from: row)
    }

    /// Writes every column `table` declares.
    @inlinable
    public func encode(to container: inout RecordContainer) {
        Self.table.encode(self, into: &container)
    }

    /// Decodes a fetched row by column position, from `init()`.
    @inlinable
    public static func decodeRecord(_ reader: ColumnReader) throws -> Self {
        var record = Self()
        try table.read(&record, from: reader)
        return record
    }
}

/// One column of a `TableRecord`: an attribute, or a to-one relationship's foreign key.
public struct TableColumn<R: TableRecord>: Sendable {
    @usableFromInline let name: String
    @usableFromInline let attribute: Attribute?
    @usableFromInline let relationship: Relationship?
    @usableFromInline let read: @Sendable (inout R, ColumnReader, Int32) throws -> Void
    @usableFromInline let decode: @Sendable (inout R, Row) throws -> Void
    @usableFromInline let value: @Sendable (R) -> SQLValue

    /// An attribute stored in `name`, held in the property at `keyPath`. Its type says the
    /// column's type and whether it may be NULL (an `Optional`).
    @inlinable
    public static func column<V: ColumnValue>(_ name: String, _ keyPath: WritableKeyPath<R, V> & Sendable, unique: Bool = false,
                                             default defaultValue: V? = nil) -> TableColumn {
        let attribute = Attribute(name, V.columnType, optional: V.acceptsNull, unique: unique, default: defaultValue?.sqlValue)
        return TableColumn(name: name, attribute: attribute, relationship: nil, keyPath: keyPath)
    }

    /// A to-one relationship to `destination`, its key held in the property at `keyPath`
    /// (in the column `column`, default `<name>_id`).
    @inlinable
    public static func toOne<V: ColumnValue>(_ name: String, _ destination: String, _ keyPath: WritableKeyPath<R, V> & Sendable,
                                            column: String? = nil, inverse: String? = nil, deleteRule: DeleteRule = .nullify) -> TableColumn {
        let relationship = Relationship.toOne(name, destination, column: column, inverse: inverse, deleteRule: deleteRule)
        return TableColumn(name: relationship.foreignKeyColumn ?? name, attribute: nil, relationship: relationship, keyPath: keyPath)
    }

    @usableFromInline
    init<V: ColumnValue>(name: String, attribute: Attribute?, relationship: Relationship?, keyPath: WritableKeyPath<R, V> & Sendable) {
        self.name = name
        self.attribute = attribute
        self.relationship = relationship
        read = { record, reader, index in record[keyPath: keyPath] = try V.read(reader, index, column: name) }
        decode = { record, row in record[keyPath: keyPath] = try V(stored: row[name], column: name) }
        value = { record in record[keyPath: keyPath].sqlValue }
    }
}

/// The table of a `TableRecord`: its entity, and its columns in the entity's stored order.
public struct RecordTable<R: TableRecord>: Sendable {
    /// The entity the columns and relationships make.
    public let entity: Entity
    /// In `entity.storedColumns` order, as fetches select them.
    @usableFromInline let columns: [TableColumn<R>]

    /// The table `name` with these columns, the relationships that hold no column here
    /// (to-many, and the inverse side of one-to-one), indexes, and whether the history
    /// tracks its rows.
    public init(_ name: String, primaryKey: String = "id", columns: [TableColumn<R>], relationships: [Relationship] = [],
                indexes: [TableIndex] = [], tracked: Bool = true) {
        let entity = Entity(name, primaryKey: primaryKey, attributes: columns.compactMap(\.attribute),
                            relationships: columns.compactMap(\.relationship) + relationships, indexes: indexes, tracked: tracked)
        let byName = Dictionary(columns.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.entity = entity
        self.columns = entity.storedColumns.compactMap { byName[$0] }
    }

    /// Decodes a record from a row a fetch selected (primary key first, then the stored
    /// columns in order).
    @inlinable
    func read(_ record: inout R, from reader: ColumnReader) throws {
        record.id = reader.isNull(0) ? nil : reader.int64(0)
        for index in columns.indices { try columns[index].read(&record, reader, Int32(index + 1)) }
    }

    /// Decodes a record from a row of any query, by column name.
    @inlinable
    func decode(_ record: inout R, from row: Row) throws {
        record.id = row[entity.primaryKey].int64
        for column in columns { try column.decode(&record, row) }
    }

    @inlinable
    func encode(_ record: R, into container: inout RecordContainer) {
        for index in columns.indices { container.set(columns[index].value(record), at: index) }
    }
}
