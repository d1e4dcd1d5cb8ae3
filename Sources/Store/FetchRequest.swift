/// A condition on an entity's objects, composed from typed expressions.
///
/// Key paths name attributes, `id`, or to-one relationships, and may cross to-one
/// relationships with dots (`region.name`). Every value is bound as a parameter when the
/// predicate becomes SQL, never spliced into the SQL text.
public indirect enum FetchPredicate: Sendable {
    /// How a key path is compared with a value or another key path.
    public enum Comparison: String, Sendable {
        /// Equal; compared with nil, "is NULL".
        case equal = "="
        /// Not equal, NULL included (as Core Data); compared with nil, "is not NULL".
        case notEqual = "<>"
        /// Less than.
        case less = "<"
        /// Less than or equal.
        case lessOrEqual = "<="
        /// Greater than.
        case greater = ">"
        /// Greater than or equal.
        case greaterOrEqual = ">="
    }

    /// Where the text must occur in the attribute's value.
    public enum TextMatch: Sendable {
        /// At the start.
        case beginsWith
        /// Anywhere.
        case contains
        /// At the end.
        case endsWith
    }

    /// Always true or always false.
    case constant(Bool)
    /// A key path compared with a value.
    case compare(String, Comparison, SQLValue)
    /// Compares two key paths of the same object.
    case compareKeys(String, Comparison, String)
    /// A key path whose value is one of these (nil among them matches NULL).
    case isIn(String, [SQLValue])
    /// A key path whose value is NULL (an unset attribute, or no related object).
    case isNull(String)
    /// Text matching; with `caseInsensitive`, both sides are Unicode case-folded.
    case text(String, TextMatch, String, caseInsensitive: Bool)
    /// The negation; a comparison with NULL is false, so its negation is true.
    case not(FetchPredicate)
    /// All of these; an empty list is true.
    case and([FetchPredicate])
    /// Any of these; an empty list is false.
    case or([FetchPredicate])
}

/// A key path in a predicate: `Key("region.name") == "California"`.
public struct Key: Sendable {
    /// The key path, with dots to cross to-one relationships.
    public let path: String
    /// A key for `path`; it is checked against the schema when a fetch compiles it.
    public init(_ path: String) { self.path = path }

    /// Matches objects whose value is one of `values`.
    public func isIn(_ values: [some SQLValueConvertible]) -> FetchPredicate {
        .isIn(path, values.map(\.sqlValue))
    }
    /// Matches objects whose value is NULL.
    public var isNull: FetchPredicate { .isNull(path) }
    /// Matches objects whose value is not NULL (a to-one relationship that is set).
    public var isNotNull: FetchPredicate { .not(.isNull(path)) }
    /// Matches text that begins with `prefix`; an empty prefix matches any non-NULL text.
    public func beginsWith(_ prefix: String, caseInsensitive: Bool = false) -> FetchPredicate {
        .text(path, .beginsWith, prefix, caseInsensitive: caseInsensitive)
    }
    /// Matches text that contains `text`; empty text matches any non-NULL text.
    public func contains(_ text: String, caseInsensitive: Bool = false) -> FetchPredicate {
        .text(path, .contains, text, caseInsensitive: caseInsensitive)
    }
    /// Matches text that ends with `suffix`; an empty suffix matches any non-NULL text.
    public func endsWith(_ suffix: String, caseInsensitive: Bool = false) -> FetchPredicate {
        .text(path, .endsWith, suffix, caseInsensitive: caseInsensitive)
    }

    /// Matches objects whose value equals `value` (nil: is NULL).
    public static func == (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .equal, value.sqlValue) }
    /// Matches objects whose value differs from `value`, NULL included.
    public static func != (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .notEqual, value.sqlValue) }
    /// Matches objects whose value is less than `value`.
    public static func < (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .less, value.sqlValue) }
    /// Matches objects whose value is at most `value`.
    public static func <= (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .lessOrEqual, value.sqlValue) }
    /// Matches objects whose value is greater than `value`.
    public static func > (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .greater, value.sqlValue) }
    /// Matches objects whose value is at least `value`.
    public static func >= (key: Key, value: some SQLValueConvertible) -> FetchPredicate { .compare(key.path, .greaterOrEqual, value.sqlValue) }
    /// Matches objects whose two key paths hold the same value (NULL equals NULL).
    public static func == (key: Key, other: Key) -> FetchPredicate { .compareKeys(key.path, .equal, other.path) }
    /// Matches objects whose first key path's value is less than the second's.
    public static func < (key: Key, other: Key) -> FetchPredicate { .compareKeys(key.path, .less, other.path) }
    /// Matches objects whose first key path's value is greater than the second's.
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

    /// Both predicates.
    public static func && (left: FetchPredicate, right: FetchPredicate) -> FetchPredicate { .and([left, right]) }
    /// Either predicate.
    public static func || (left: FetchPredicate, right: FetchPredicate) -> FetchPredicate { .or([left, right]) }
    /// The negation of the predicate.
    public static prefix func ! (predicate: FetchPredicate) -> FetchPredicate { .not(predicate) }
}

/// One level of a sort order.
public struct SortKey: Sendable, Equatable {
    /// The key path sorted by; may cross to-one relationships.
    public var keyPath: String
    /// Smallest first when true.
    public var ascending: Bool
    /// How text compares; other values ignore it.
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
    /// The entity whose objects are fetched.
    public var entityName: String
    /// Which objects match; nil: all of them.
    public var predicate: FetchPredicate?
    /// The order, most significant key first; ties fall back to the primary key.
    public var sortDescriptors: [SortKey]
    /// The most objects returned; nil: no limit.
    public var fetchLimit: Int?
    /// Objects skipped at the start of the ordered results.
    public var fetchOffset: Int
    /// Keyset paging: the values, in the order of `sortDescriptors`, then the primary key
    /// (unless the last descriptor is it), of the row the results start after. Unlike an
    /// offset, a page read this way neither repeats nor skips a row when rows are inserted
    /// or deleted before it. Every value must be non-null. For plain fetches only: a
    /// results controller refuses a request that has it.
    public var startingAfter: [SQLValue]?

    /// A request for the entity named `entityName`.
    public init(entityName: String, predicate: FetchPredicate? = nil, sortDescriptors: [SortKey] = [],
                fetchLimit: Int? = nil, fetchOffset: Int = 0) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }

    /// A request for the entity `type` is stored as.
    public init<R: Record>(_ type: R.Type, predicate: FetchPredicate? = nil, sortDescriptors: [SortKey] = [],
                           fetchLimit: Int? = nil, fetchOffset: Int = 0) {
        self.init(entityName: R.entity.name, predicate: predicate, sortDescriptors: sortDescriptors,
                  fetchLimit: fetchLimit, fetchOffset: fetchOffset)
    }
}
