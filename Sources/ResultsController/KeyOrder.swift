import Foundation
import Store

/// The order of a fetch request in memory, exactly as SQLite orders it: values of different
/// storage classes as SQLite ranks them (NULL, numbers, text, blobs), text under each sort
/// key's collation, then the primary key.
struct KeyOrder: Sendable {
    let collations: [Collation]
    let ascending: [Bool]

    init(_ sortKeys: [SortKey]) {
        collations = sortKeys.map(\.collation)
        ascending = sortKeys.map(\.ascending)
    }

    var keyCount: Int { collations.count }

    /// Whether (left, leftID) sorts before (right, rightID).
    func less(_ left: UnsafeBufferPointer<SQLValue>, _ leftID: Int64, _ right: UnsafeBufferPointer<SQLValue>, _ rightID: Int64) -> Bool {
        for index in 0..<collations.count {
            let order = Self.compare(left[index], right[index], collations[index])
            if order != .orderedSame {
                return (order == .orderedAscending) == ascending[index]
            }
        }
        return leftID < rightID
    }

    func less(_ left: [SQLValue], _ leftID: Int64, _ right: [SQLValue], _ rightID: Int64) -> Bool {
        left.withUnsafeBufferPointer { leftKeys in
            right.withUnsafeBufferPointer { rightKeys in less(leftKeys, leftID, rightKeys, rightID) }
        }
    }

    /// Two values as SQLite's ORDER BY compares them.
    static func compare(_ left: SQLValue, _ right: SQLValue, _ collation: Collation) -> ComparisonResult {
        let leftRank = rank(left), rightRank = rank(right)
        if leftRank != rightRank { return leftRank < rightRank ? .orderedAscending : .orderedDescending }
        switch (left, right) {
        case (.null, .null):
            return .orderedSame
        case (.integer(let a), .integer(let b)):
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        case (.text(let a), .text(let b)):
            return collation.compare(a, b)
        case (.blob(let a), .blob(let b)):
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        default:
            let a = left.double ?? 0, b = right.double ?? 0
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        }
    }

    private static func rank(_ value: SQLValue) -> Int {
        switch value {
        case .null: return 0
        case .integer, .real: return 1
        case .text: return 2
        case .blob: return 3
        }
    }
}
