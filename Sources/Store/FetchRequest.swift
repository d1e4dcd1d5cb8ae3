/// A condition on an entity's objects, composed from typed expressions.
///
/// Key paths name attributes, `id`, or to-one relationships, and may cross to-one
/// relationships with dots (`region.name`). Every value is bound as a parameter when the
/// predicate becomes SQL, never spliced into the SQL text.
public indirect enum FetchPredicate: Sendable {
    public enum Comparison: String, Sendable {
        case equal = "="
        case notEqual = "<>"
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
    }

    public enum TextMatch: Sendable {
        case beginsWith
        case contains
        case endsWith
    }

    case constant(Bool)
    case compare(String, Comparison, SQLValue)
    /// Compares two key paths of the same object.
    case compareKeys(String, Comparison, String)
    case isIn(String, [SQLValue])
    case isNull(String)
    /// Text matching; with `caseInsensitive`, both sides are Unicode case-folded.
    case text(String, TextMatch, String, caseInsensitive: Bool)
    case not(FetchPredicate)
    case and([FetchPredicate])
    case or([FetchPredicate])
}

/// A key path in a predicate: `Key("region.name") == "California"`.
public struct Key: Sendable {
    public let path: String
    public init(_ path: String) { self.path = path }

    public func isIn(_ values: [some SQLValueConvertible]) -> FetchPredicate {
        .isIn(path, values.map(\.sqlValue))
    }
    public var isNull: FetchPredicate { .isNull(path) }
    public var isNotNull: FetchPredicate { .not(.isNull(path)) }
    public func beginsWith(_ prefix: String, caseInsensitive: Bool = false) -> FetchPredicate {
        .text(path, .beginsWith, prefix, caseInsensitive: caseInsensitive)
    }
    public func contains(_ text: String, caseInsensitive: Bool = false) -> FetchPredicate {
        .text(path, .contains, text, caseInsensitive: caseInsensitive)
    }
    public func endsWith(_ suffix: String, caseInsensitive: Bool = false) -> FetchPredicate {
        .text(path, .endsWith, suffix, caseInsensitive: caseInsensitive)
    }

    public static func == (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .equal, value.sqlValue) }
    public static func != (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .notEqual, value.sqlValue) }
    public static func < (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .less, value.sqlValue) }
    public static func <= (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .lessOrEqual, value.sqlValue) }
    public static func > (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .greater, value.sqlValue) }
    public static func >= (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .greaterOrEqual, value.sqlValue) }
    public static func == (key: Key, other: Key) -> FetchPredicate { .compareKeys(key.path, .equal, other.path) }
    public static func < (key: Key, other: Key) -> FetchPredicate { .compareKeys(key.path, .less, other.path) }
    public static func > (key: Key, other: Key) -> FetchPredicate { .compareKeys(key.path, .greater, other.path) }
}

extension FetchPredicate {
    /// Every key path the predicate reads.
    public var keyPaths: [String] {
        switch self {
        case .constant: return []
        case .compare(let keyPath, _, _), .isIn(let keyPath, _), .isNull(let keyPath), .text(let keyPath, _, _, _): return [keyPath]
        case .compareKeys(let left, _, let right): return [left, right]
        case .not(let inner): return inner.keyPaths
        case .and(let parts), .or(let parts): return parts.flatMap(\.keyPaths)
        }
    }

    public static func && (left: FetchPredicate, right: FetchPredicate) -> FetchPredicate { .and([left, right]) }
    public static func || (left: FetchPredicate, right: FetchPredicate) -> FetchPredicate { .or([left, right]) }
    public static prefix func ! (predicate: FetchPredicate) -> FetchPredicate { .not(predicate) }
}

/// One level of a sort order.
public struct SortKey: Sendable, Equatable {
    public var keyPath: String
    public var ascending: Bool
    public var collation: Collation

    /// NULLs sort as SQLite sorts them: before every value ascending, after descending.
    public init(_ keyPath: String, ascending: Bool = true, collation: Collation = .binary) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.collation = collation
    }
}

/// What to fetch: an entity's objects that match a predicate, in an order, optionally
/// limited (Core Data's NSFetchRequest).
public struct FetchRequest: Sendable {
    public var entityName: String
    public var predicate: FetchPredicate?
    public var sortDescriptors: [SortKey]
    public var fetchLimit: Int?
    public var fetchOffset: Int

    public init(entityName: String, predicate: FetchPredicate? = nil, sortDescriptors: [SortKey] = [],
                fetchLimit: Int? = nil, fetchOffset: Int = 0) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }

    public init<R: Record>(_ type: R.Type, predicate: FetchPredicate? = nil, sortDescriptors: [SortKey] = [],
                           fetchLimit: Int? = nil, fetchOffset: Int = 0) {
        self.init(entityName: R.entity.name, predicate: predicate, sortDescriptors: sortDescriptors,
                  fetchLimit: fetchLimit, fetchOffset: fetchOffset)
    }
}
