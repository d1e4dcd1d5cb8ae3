import Store

/// The controller's results in order: ids with their sort keys, in blocks of at most
/// `maximumBlockSize` (a B-tree of height two), so that finding, inserting and removing one
/// object costs O(log n + block size) rather than O(n), and an id finds its block through
/// a map.
///
/// Not thread-safe: the controller guards it.
final class OrderedEntries {
    final class Block {
        var ids: [Int64] = []
        /// Keys of all entries, `keyCount` per entry.
        var keys: [SQLValue] = []
        /// Global index of the block's first entry; valid after `reindex()`.
        var start = 0
        /// Position in `blocks`; valid after `reindex()`.
        var position = 0
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

    /// Replaces everything with `entries`, which must already be in order.
    func load(ids: [Int64], keys: [SQLValue]) {
        blocks = []
        blockOf = Dictionary(minimumCapacity: ids.count)
        let size = Self.maximumBlockSize * 3 / 4
        var start = 0
        while start < ids.count {
            let end = min(start + size, ids.count)
            let block = Block()
            block.ids = Array(ids[start..<end])
            block.keys = Array(keys[(start * keyCount)..<(end * keyCount)])
            for id in block.ids { blockOf[id] = block }
            blocks.append(block)
            start = end
        }
        indexIsCurrent = false
    }

    /// The keys of an entry.
    func keys(of id: Int64) -> [SQLValue]? {
        guard let block = blockOf[id], let offset = block.ids.firstIndex(of: id) else { return nil }
        return Array(block.keys[(offset * keyCount)..<((offset + 1) * keyCount)])
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
    var allIDs: [Int64] { blocks.flatMap(\.ids) }

    func remove(_ id: Int64) {
        guard let block = blockOf.removeValue(forKey: id), let offset = block.ids.firstIndex(of: id) else { return }
        block.ids.remove(at: offset)
        block.keys.removeSubrange((offset * keyCount)..<((offset + 1) * keyCount))
        if block.ids.isEmpty, let position = blocks.firstIndex(where: { $0 === block }) {
            blocks.remove(at: position)
        }
        indexIsCurrent = false
    }

    func insert(_ id: Int64, keys: [SQLValue]) {
        precondition(keys.count == keyCount, "an entry needs one value per sort key")
        if blocks.isEmpty { blocks.append(Block()) }
        let blockPosition = self.blockPosition(for: keys, id: id)
        let block = blocks[blockPosition]
        let offset = keys.withUnsafeBufferPointer { newKeys in
            block.keys.withUnsafeBufferPointer { blockKeys -> Int in
                var low = 0, high = block.ids.count
                while low < high {
                    let middle = (low + high) / 2
                    let existing = UnsafeBufferPointer(rebasing: blockKeys[(middle * keyCount)..<((middle + 1) * keyCount)])
                    if order.less(existing, block.ids[middle], newKeys, id) { low = middle + 1 } else { high = middle }
                }
                return low
            }
        }
        block.ids.insert(id, at: offset)
        block.keys.insert(contentsOf: keys, at: offset * keyCount)
        blockOf[id] = block
        if block.ids.count > Self.maximumBlockSize { split(block, at: blockPosition) }
        indexIsCurrent = false
    }

    /// The block an entry with these keys belongs in: the first whose last entry is not
    /// before it (or the last block).
    private func blockPosition(for keys: [SQLValue], id: Int64) -> Int {
        keys.withUnsafeBufferPointer { newKeys in
            var low = 0, high = blocks.count - 1
            while low < high {
                let middle = (low + high) / 2
                let block = blocks[middle]
                let lastOffset = block.ids.count - 1
                let isBefore = block.keys.withUnsafeBufferPointer { blockKeys in
                    order.less(UnsafeBufferPointer(rebasing: blockKeys[(lastOffset * keyCount)..<((lastOffset + 1) * keyCount)]),
                               block.ids[lastOffset], newKeys, id)
                }
                if isBefore { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    private func split(_ block: Block, at position: Int) {
        let half = block.ids.count / 2
        let upper = Block()
        upper.ids = Array(block.ids[half...])
        upper.keys = Array(block.keys[(half * keyCount)...])
        block.ids.removeSubrange(half...)
        block.keys.removeSubrange((half * keyCount)...)
        for id in upper.ids { blockOf[id] = upper }
        blocks.insert(upper, at: position + 1)
    }

    /// Recomputes each block's global start: O(number of blocks), once per batch.
    func reindex() {
        guard !indexIsCurrent else { return }
        var start = 0
        for (position, block) in blocks.enumerated() {
            block.start = start
            block.position = position
            start += block.ids.count
        }
        indexIsCurrent = true
    }

    /// Approximate bytes held, for the benchmark.
    var approximateBytes: Int {
        let entries = blocks.reduce(0) { $0 + $1.ids.capacity * 8 + $1.keys.capacity * MemoryLayout<SQLValue>.stride }
        let map = blockOf.capacity * (MemoryLayout<Int64>.stride + MemoryLayout<Block>.stride) + blockOf.capacity / 8
        return entries + map + blocks.count * 64
    }
}
