import Store

/// The controller's results in order: ids with their sort keys, in blocks of at most
/// `maximumBlockSize` (a B-tree of height two), so that finding, inserting and removing one
/// object costs O(log n + block size) rather than O(n), and an id finds its block through
/// a map. Sort keys are stored by column, integers packed at 8 bytes each.
///
/// Not thread-safe: the controller guards it.
final class OrderedEntries {
    /// One sort key's values within a block: packed while every value is an integer.
    final class KeyColumn {
        var integers: [Int64] = []
        var values: [SQLValue]?

        subscript(offset: Int) -> SQLValue {
            values?[offset] ?? .integer(integers[offset])
        }

        func insert(_ value: SQLValue, at offset: Int) {
            if values == nil, case .integer(let integer) = value {
                integers.insert(integer, at: offset)
                return
            }
            unpack()
            values?.insert(value, at: offset)
        }

        func remove(at offset: Int) {
            if values != nil { values?.remove(at: offset) } else { integers.remove(at: offset) }
        }

        /// The values from `offset` on, moved out into a new column.
        func split(at offset: Int) -> KeyColumn {
            let upper = KeyColumn()
            if let values {
                upper.values = Array(values[offset...])
                self.values?.removeSubrange(offset...)
            } else {
                upper.integers = Array(integers[offset...])
                integers.removeSubrange(offset...)
            }
            return upper
        }

        private func unpack() {
            guard values == nil else { return }
            values = integers.map { .integer($0) }
            integers = []
        }

        static func make(_ slice: some Collection<SQLValue>) -> KeyColumn {
            let column = KeyColumn()
            var integers: [Int64] = []
            integers.reserveCapacity(slice.count)
            for value in slice {
                guard case .integer(let integer) = value else {
                    column.values = Array(slice)
                    return column
                }
                integers.append(integer)
            }
            column.integers = integers
            return column
        }

        var bytes: Int {
            values.map { $0.capacity * MemoryLayout<SQLValue>.stride } ?? integers.capacity * 8
        }
    }

    final class Block {
        var ids: [Int64] = []
        var columns: [KeyColumn] = []
        /// Global index of the block's first entry; valid after `reindex()`.
        var start = 0
    }

    let order: KeyOrder
    let keyCount: Int
    private(set) var blocks: [Block] = []
    private var blockOf: [Int64: Block] = [:]
    private var indexIsCurrent = true
    static let maximumBlockSize = 1024

    init(order: KeyOrder) {
        self.order = order
        self.keyCount = order.keyCount
    }

    var count: Int { blockOf.count }

    func contains(_ id: Int64) -> Bool { blockOf[id] != nil }

    /// Replaces everything with entries already in order; `keys` holds `keyCount` values
    /// per id.
    func load(ids: [Int64], keys: [SQLValue]) {
        blocks = []
        blockOf = Dictionary(minimumCapacity: ids.count)
        let size = Self.maximumBlockSize * 3 / 4
        var start = 0
        while start < ids.count {
            let end = min(start + size, ids.count)
            let block = Block()
            block.ids = Array(ids[start..<end])
            block.columns = (0..<keyCount).map { column in
                KeyColumn.make(stride(from: start * keyCount + column, to: end * keyCount, by: keyCount).lazy.map { keys[$0] })
            }
            for id in block.ids { blockOf[id] = block }
            blocks.append(block)
            start = end
        }
        indexIsCurrent = false
    }

    /// The keys of an entry.
    func keys(of id: Int64) -> [SQLValue]? {
        guard let block = blockOf[id], let offset = block.ids.firstIndex(of: id) else { return nil }
        return block.columns.map { $0[offset] }
    }

    /// The global index of an id, or nil.
    func index(of id: Int64) -> Int? {
        guard let block = blockOf[id], let offset = block.ids.firstIndex(of: id) else { return nil }
        reindex()
        return block.start + offset
    }

    /// The id at a global index.
    func id(at index: Int) -> Int64 {
        reindex()
        var low = 0, high = blocks.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if blocks[middle].start <= index { low = middle } else { high = middle - 1 }
        }
        let block = blocks[low]
        return block.ids[index - block.start]
    }

    /// The ids in order.
    var allIDs: [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(count)
        for block in blocks { result += block.ids }
        return result
    }

    func remove(_ id: Int64) {
        guard let block = blockOf.removeValue(forKey: id), let offset = block.ids.firstIndex(of: id) else { return }
        block.ids.remove(at: offset)
        for column in block.columns { column.remove(at: offset) }
        if block.ids.isEmpty, let position = blocks.firstIndex(where: { $0 === block }) {
            blocks.remove(at: position)
        }
        indexIsCurrent = false
    }

    func insert(_ id: Int64, keys: [SQLValue]) {
        precondition(keys.count == keyCount, "an entry needs one value per sort key")
        if blocks.isEmpty {
            let block = Block()
            block.columns = (0..<keyCount).map { _ in KeyColumn() }
            blocks.append(block)
        }
        let position = blockPosition(for: keys, id: id)
        let block = blocks[position]
        var low = 0, high = block.ids.count
        while low < high {
            let middle = (low + high) / 2
            if storedPrecedes(block, middle, keys, id) { low = middle + 1 } else { high = middle }
        }
        block.ids.insert(id, at: low)
        for (column, value) in zip(block.columns, keys) { column.insert(value, at: low) }
        blockOf[id] = block
        if block.ids.count > Self.maximumBlockSize { split(block, at: position) }
        indexIsCurrent = false
    }

    /// Whether the stored entry at `offset` of `block` sorts before (keys, id).
    private func storedPrecedes(_ block: Block, _ offset: Int, _ keys: [SQLValue], _ id: Int64) -> Bool {
        for index in 0..<keyCount {
            let result = KeyOrder.compare(block.columns[index][offset], keys[index], order.collations[index])
            if result != .orderedSame { return (result == .orderedAscending) == order.ascending[index] }
        }
        return block.ids[offset] < id
    }

    /// The block an entry with these keys belongs in: the first whose last entry is not
    /// before it (or the last block).
    private func blockPosition(for keys: [SQLValue], id: Int64) -> Int {
        var low = 0, high = blocks.count - 1
        while low < high {
            let middle = (low + high) / 2
            let block = blocks[middle]
            if storedPrecedes(block, block.ids.count - 1, keys, id) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func split(_ block: Block, at position: Int) {
        let half = block.ids.count / 2
        let upper = Block()
        upper.ids = Array(block.ids[half...])
        block.ids.removeSubrange(half...)
        upper.columns = block.columns.map { $0.split(at: half) }
        for id in upper.ids { blockOf[id] = upper }
        blocks.insert(upper, at: position + 1)
    }

    /// Recomputes each block's global start: O(number of blocks), once per batch.
    func reindex() {
        guard !indexIsCurrent else { return }
        var start = 0
        for block in blocks {
            block.start = start
            start += block.ids.count
        }
        indexIsCurrent = true
    }

    /// Approximate bytes held: the blocks' arrays and the id map's storage.
    var approximateBytes: Int {
        let entries = blocks.reduce(0) { total, block in
            total + block.ids.capacity * 8 + block.columns.reduce(0) { $0 + $1.bytes + 48 } + 64
        }
        let map = blockOf.capacity * (MemoryLayout<Int64>.stride + MemoryLayout<Block>.stride) + blockOf.capacity / 8
        return entries + map
    }
}
