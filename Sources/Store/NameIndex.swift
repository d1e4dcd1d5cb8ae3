import Synchronization

/// Positions of names (a result's columns, an entity's stored columns), looked up many
/// times per row: open addressing by a cheap hash of the name's UTF-8, positions + 1 in
/// the slots, 0 for an empty slot. `Dictionary`'s SipHash of a string was a fifth of the
/// time of a large fetch, where records look up every column by name on every row.
struct NameIndex: Sendable {
    let names: [String]
    private let slots: [Int32]
    /// Whether each position holds the first occurrence of its name (only those are found).
    private let isFirstOccurrence: [Bool]
    /// Where the last lookup found its name. Records read and write their columns in the
    /// same order on every row, mostly the table's order, so the next name is usually at
    /// the next position: checking there first skips the hash. Only a hint (checked by
    /// comparing the name), so rows decoded on several threads at once stay correct.
    private let lastFound = LastFound()

    /// A repeated name keeps its first position.
    init(_ names: [String]) {
        self.names = names
        var capacity = 8
        while capacity < names.count * 2 { capacity *= 2 }
        var slots = [Int32](repeating: 0, count: capacity)
        var isFirstOccurrence = [Bool](repeating: true, count: names.count)
        for (index, name) in names.enumerated() {
            var slot = Self.hash(name) & (capacity - 1)
            while slots[slot] != 0 {
                if names[Int(slots[slot]) - 1] == name { break }
                slot = (slot + 1) & (capacity - 1)
            }
            if slots[slot] == 0 { slots[slot] = Int32(index + 1) } else { isFirstOccurrence[index] = false }
        }
        self.slots = slots
        self.isFirstOccurrence = isFirstOccurrence
    }

    subscript(name: String) -> Int? {
        let guess = lastFound.position.load(ordering: .relaxed) &+ 1
        if guess < names.count, isFirstOccurrence[guess], names[guess] == name {
            lastFound.position.store(guess, ordering: .relaxed)
            return guess
        }
        guard let index = hashedLookup(name) else { return nil }
        lastFound.position.store(index, ordering: .relaxed)
        return index
    }

    private func hashedLookup(_ name: String) -> Int? {
        let mask = slots.count - 1
        var slot = Self.hash(name) & mask
        while slots[slot] != 0 {
            let index = Int(slots[slot]) - 1
            if names[index] == name { return index }
            slot = (slot + 1) & mask
        }
        return nil
    }

    private final class LastFound: Sendable {
        let position = Atomic<Int>(-1)
    }

    /// A hash of the length and three bytes of the UTF-8 (read in place): enough to tell
    /// a table's column names apart, and collisions only cost a probe.
    private static func hash(_ name: String) -> Int {
        if let hash = name.utf8.withContiguousStorageIfAvailable(sampledHash) { return hash }
        return Array(name.utf8).withUnsafeBufferPointer(sampledHash)
    }

    private static func sampledHash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let count = bytes.count
        guard count > 0 else { return 0 }
        let sample = Int(bytes[0]) &* 31 &+ Int(bytes[count / 2]) &* 7 &+ Int(bytes[count - 1])
        return (sample &* 2_654_435_761 &+ count) >> 4
    }
}
