import Foundation
import Store

/// The sections of a sectioned controller: one per distinct value of the section key, in
/// the order of the first sort key, each with its count. Values are compared exactly
/// (binary), so two names a collation calls equal are still two sections.
struct SectionList {
    struct Section {
        var key: SQLValue
        var count: Int
    }

    private(set) var sections: [Section] = []
    private let collation: Collation
    private let ascending: Bool
    /// Without a section key path there is one section, named "", even when empty.
    let isSectioned: Bool

    init(collation: Collation, ascending: Bool, isSectioned: Bool) {
        self.collation = collation
        self.ascending = ascending
        self.isSectioned = isSectioned
        if !isSectioned { sections = [Section(key: .null, count: 0)] }
    }

    var count: Int { sections.count }

    static func name(of key: SQLValue) -> String {
        switch key {
        case .null: return ""
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return value
        case .blob(let bytes): return bytes.map { String(format: "%02x", $0) }.joined()
        }
    }

    private func precedes(_ left: SQLValue, _ right: SQLValue) -> Bool {
        var order = KeyOrder.compare(left, right, collation)
        if order == .orderedSame { order = KeyOrder.compare(left, right, .binary) }
        if order == .orderedSame { return false }
        return (order == .orderedAscending) == ascending
    }

    /// Where `key`'s section is, or would be inserted.
    func position(of key: SQLValue) -> (index: Int, exists: Bool) {
        guard isSectioned else { return (0, true) }
        var low = 0, high = sections.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(sections[middle].key, key) { low = middle + 1 } else { high = middle }
        }
        let exists = low < sections.count && sections[low].key == key
        return (low, exists)
    }

    mutating func add(_ key: SQLValue) {
        let (index, exists) = position(of: key)
        if exists {
            sections[index].count += 1
        } else {
            sections.insert(Section(key: key, count: 1), at: index)
        }
    }

    mutating func remove(_ key: SQLValue) {
        let (index, exists) = position(of: key)
        guard exists else { return }
        sections[index].count -= 1
        if sections[index].count == 0 && isSectioned { sections.remove(at: index) }
    }

    /// Rebuilds from keys already in order.
    mutating func load(_ orderedKeys: [SQLValue]) {
        guard isSectioned else {
            sections = [Section(key: .null, count: orderedKeys.count)]
            return
        }
        sections = []
        for key in orderedKeys {
            if let last = sections.last, last.key == key {
                sections[sections.count - 1].count += 1
            } else {
                sections.append(Section(key: key, count: 1))
            }
        }
    }

    /// The global index of each section's first row.
    var starts: [Int] {
        var result: [Int] = []
        result.reserveCapacity(sections.count)
        var start = 0
        for section in sections {
            result.append(start)
            start += section.count
        }
        return result
    }

    /// The index path of a global index, given `starts`.
    static func indexPath(of globalIndex: Int, starts: [Int]) -> IndexPath {
        var low = 0, high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= globalIndex { low = middle } else { high = middle - 1 }
        }
        return IndexPath(row: globalIndex - starts[low], section: low)
    }
}
