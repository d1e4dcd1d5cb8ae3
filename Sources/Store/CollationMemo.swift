import Foundation

/// The answers one connection's `caseInsensitive` collation got from Foundation, kept for
/// pairs of strings that come again, so that a repeated pair costs a table look-up instead
/// of a call into Foundation (about 2.5 µs on Linux).
///
/// Pairs do come again: an insert into an index compares the new key with the keys on its
/// way down the B-tree, and the upper ones are the same for every insert into that part of
/// the index; names recur too.
///
/// Exact: an entry holds both strings' bytes and is used only for those bytes in that
/// order, and the comparison it remembers is a pure function of them. Bounded:
/// direct-mapped, a pair's hash picks one of `slotCount` slots and a newer pair replaces
/// whatever was there; pairs longer than `longestPair` bytes are not kept.
///
/// Not thread-safe, like the connection it belongs to: SQLite calls a connection's
/// collations only on the thread running that connection's statement, since `Connection`
/// caps `PRAGMA threads` (the sorter's helper threads) at 0.
final class CollationMemo {
    static let slotCount = 8_192
    static let longestPair = 256

    private struct Entry {
        /// The left string's bytes, then the right's.
        var bytes: [UInt8]
        var leftCount: Int
        var result: ComparisonResult

        func holds(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
            guard leftCount == left.count, bytes.count == left.count + right.count else { return false }
            return bytes.withUnsafeBufferPointer { stored in
                guard let base = stored.baseAddress else { return true }
                return Self.equal(base, left) && Self.equal(base + leftCount, right)
            }
        }

        private static func equal(_ stored: UnsafePointer<UInt8>, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return true }
            return memcmp(stored, base, bytes.count) == 0
        }
    }

    /// Allocated on the first pair kept: most connections (readers going through indexes)
    /// never ask Foundation anything, and 8,192 empty slots are about 256 KB.
    private var slots: [Entry?] = []
    private(set) var hits = 0
    private(set) var misses = 0

    /// `compare(left, right)`, remembered.
    func result(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>,
                compare: () -> ComparisonResult) -> ComparisonResult {
        guard left.count + right.count <= Self.longestPair else { return compare() }
        let slot = Self.slot(left, right)
        if !slots.isEmpty, let entry = slots[slot], entry.holds(left, right) {
            hits += 1
            return entry.result
        }
        misses += 1
        let result = compare()
        if slots.isEmpty { slots = [Entry?](repeating: nil, count: Self.slotCount) }
        slots[slot] = Entry(bytes: Array(left) + Array(right), leftCount: left.count, result: result)
        return result
    }

    /// FNV-1a over both strings, with the length of the first mixed in so that moving bytes
    /// from one string to the other changes the hash.
    private static func slot(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in left { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = (hash ^ UInt64(left.count)) &* 0x100_0000_01b3
        for byte in right { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(truncatingIfNeeded: hash >> 1) & (slotCount - 1)
    }
}
