/// A Swift type stored as one row of an entity's table.
///
/// ```swift
/// struct Region: Record {
///     static let entity = Entity("Region", attributes: [Attribute("name", .text)])
///     var id: Int64?
///     var name: String
///     init(row: Row) throws { id = try row.int64("id"); name = try row.string("name") }
///     func encode(to container: inout RecordContainer) { container["name"] = name }
/// }
/// ```
public protocol Record: Sendable {
    /// The entity this type is stored as.
    static var entity: Entity { get }
    /// The primary key: nil until the record is inserted (the store assigns it then).
    var id: Int64? { get set }
    /// Decodes a row of the entity's table (all stored columns, the primary key included).
    init(row: Row) throws
    /// Writes the stored columns (attributes and foreign keys); unset columns take their default.
    func encode(to container: inout RecordContainer)
    /// Decodes the row a fetch is on (primary key first, then the stored columns in order).
    /// The default is `init(row:)`; `TableRecord` reads the columns by position instead.
    static func decodeRecord(_ reader: ColumnReader) throws -> Self
}

extension Record {
    /// By default, decodes the row through `init(row:)`.
    public static func decodeRecord(_ reader: ColumnReader) throws -> Self {
        try Self(row: reader.currentRow())
    }
}

/// The column values of one record, in the entity's column order.
public struct RecordContainer {
    let entity: Entity
    private(set) var values: [SQLValue]
    private(set) var unknownColumns: [String] = []

    init(entity: Entity) {
        self.entity = entity
        self.values = entity.defaultValues
    }

    /// The value of `column`, its default until set; nil for a column the entity lacks, and
    /// setting one makes the write fail.
    public subscript(column: String) -> SQLValueConvertible? {
        get {
            guard let index = entity.storedColumnIndex[column] else { return nil }
            return values[index]
        }
        set {
            guard let index = entity.storedColumnIndex[column] else {
                unknownColumns.append(column)
                return
            }
            values[index] = newValue?.sqlValue ?? .null
        }
    }

    /// Sets the value of the stored column at `index` (a `TableRecord` writes them in order).
    @usableFromInline
    mutating func set(_ value: SQLValue, at index: Int) {
        values[index] = value
    }

    func value(of column: String) -> SQLValue {
        entity.storedColumnIndex[column].map { values[$0] } ?? .null
    }
}

extension Record {
    /// The stored column values, in `entity.storedColumns` order.
    package func storedValues() throws -> [SQLValue] {
        var container = RecordContainer(entity: Self.entity)
        encode(to: &container)
        if let unknown = container.unknownColumns.first {
            throw StoreError(.invalidRequest, "\(Self.self) encodes \(unknown), which \(Self.entity.name) does not have")
        }
        return container.values
    }
}
