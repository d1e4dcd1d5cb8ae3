import Foundation
import Store

/// The sections of a sectioned controller: one per distinct value of the section key
/// (`SectionValue`: compared exactly), in the order of the first sort key with the binary
/// tie-break, each with its count.
struct SectionList {
    struct Section {
        var value: SectionValue
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
        if !isSectioned { sections = [Section(value: .null, count: 0)] }
    }

    var count: Int { sections.count }
    var values: [SectionValue] { sections.map(\.value) }

    /// The controller's order of section values: the collation, then binary, which is also
    /// the order that tells sections apart.
    private func precedes(_ left: SectionValue, _ right: SectionValue) -> Bool {
        var order = KeyOrder.compare(left.value, right.value, collation)
        if order == .orderedSame { order = KeyOrder.compare(left.value, right.value, .binary) }
        if order == .orderedSame { return false }
        return (order == .orderedAscending) == ascending
    }

    /// Where `value`'s section is, or would be inserted.
    func position(of value: SectionValue) -> (index: Int, exists: Bool) {
        guard isSectioned else { return (0, true) }
        var low = 0, high = sections.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(sections[middle].value, value) { low = middle + 1 } else { high = middle }
        }
        let exists = low < sections.count && sections[low].value == value
        return (low, exists)
    }

    mutating func add(_ value: SectionValue) {
        let (index, exists) = position(of: value)
        if exists {
            sections[index].count += 1
        } else {
            sections.insert(Section(value: value, count: 1), at: index)
        }
    }

    mutating func remove(_ value: SectionValue) {
        let (index, exists) = position(of: value)
        guard exists else { return }
        sections[index].count -= 1
        if sections[index].count == 0 && isSectioned { sections.remove(at: index) }
    }

    /// Rebuilds from values already in the controller's order.
    mutating func load(_ orderedValues: [SectionValue]) {
        guard isSectioned else {
            sections = [Section(value: .null, count: orderedValues.count)]
            return
        }
        sections = []
        for value in orderedValues {
            if let last = sections.last, last.value == value {
                sections[sections.count - 1].count += 1
            } else {
                sections.append(Section(value: value, count: 1))
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
