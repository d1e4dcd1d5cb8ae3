import Foundation

/// The `localizedStandard` order of two printable-ASCII strings that differ at the primary
/// level, computed here instead of by Foundation.
///
/// On Linux, `localizedStandardCompare` goes through CoreFoundation to an ICU collator and
/// costs about 3 µs a call; an index ordered by it made every insert pay ~20 of them. For
/// printable ASCII (0x20–0x7E) the order is ICU's root order with numeric collation and
/// case ignored at the first level: space and punctuation in ICU's order, then digits, then
/// letters regardless of case, and every run of digits compared by its numeric value
/// (leading zeros ignored). Two strings that differ there are ordered by that first
/// difference, and that is all this decides. Strings equal at that level (they differ only
/// in case or in leading zeros, where Foundation breaks the tie its own way), and strings
/// with any other byte, return nil and are left to Foundation.
///
/// `CollationTests` checks this against Foundation on a million generated pairs.
enum LocalizedStandardASCII {
    /// ICU's root order of the printable ASCII punctuation and symbols, space first.
    private static let punctuationOrder = Array(" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$".utf8)

    /// Primary weight per byte: 0 for bytes this does not handle.
    private static let weights: [UInt8] = {
        var weights = [UInt8](repeating: 0, count: 256)
        for (index, byte) in punctuationOrder.enumerated() { weights[Int(byte)] = UInt8(index + 1) }
        let digit = UInt8(punctuationOrder.count + 1)
        for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { weights[Int(byte)] = digit }
        for byte in UInt8(ascii: "a")...UInt8(ascii: "z") {
            weights[Int(byte)] = digit + 1 + (byte - UInt8(ascii: "a"))
            weights[Int(byte - 0x20)] = weights[Int(byte)]
        }
        return weights
    }()

    /// Digit runs longer than this are left to Foundation (ICU splits very long numbers).
    private static let longestNumber = 200

    static func compare(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> ComparisonResult? {
        let weights = Self.weights
        // Only whole printable-ASCII strings: a byte of a multi-byte character anywhere
        // (even a combining mark after the first difference) leaves it to Foundation.
        guard left.allSatisfy({ weights[Int($0)] != 0 }), right.allSatisfy({ weights[Int($0)] != 0 }) else { return nil }
        var leftIndex = 0
        var rightIndex = 0
        while leftIndex < left.count && rightIndex < right.count {
            let leftWeight = weights[Int(left[leftIndex])]
            let rightWeight = weights[Int(right[rightIndex])]
            if isDigit(left[leftIndex]) && isDigit(right[rightIndex]) {
                let leftNumber = number(in: left, from: leftIndex)
                let rightNumber = number(in: right, from: rightIndex)
                guard leftNumber.significant.count <= longestNumber, rightNumber.significant.count <= longestNumber else { return nil }
                if let order = compareNumbers(leftNumber.significant, rightNumber.significant, left, right) { return order }
                leftIndex = leftNumber.end
                rightIndex = rightNumber.end
                continue
            }
            if leftWeight != rightWeight { return leftWeight < rightWeight ? .orderedAscending : .orderedDescending }
            leftIndex += 1
            rightIndex += 1
        }
        if leftIndex == left.count && rightIndex == right.count { return nil }
        return leftIndex == left.count ? .orderedAscending : .orderedDescending
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// The run of digits starting at `start`: its digits after any leading zeros, and its end.
    private static func number(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (significant: Range<Int>, end: Int) {
        var first = start
        while first < bytes.count && bytes[first] == UInt8(ascii: "0") { first += 1 }
        var end = first
        while end < bytes.count && isDigit(bytes[end]) { end += 1 }
        return (first..<end, end)
    }

    /// Numeric order of two digit runs without leading zeros: the longer is larger, then
    /// digit by digit. nil when they are the same number.
    private static func compareNumbers(_ left: Range<Int>, _ right: Range<Int>,
                                       _ leftBytes: UnsafeBufferPointer<UInt8>, _ rightBytes: UnsafeBufferPointer<UInt8>) -> ComparisonResult? {
        if left.count != right.count { return left.count < right.count ? .orderedAscending : .orderedDescending }
        for offset in 0..<left.count where leftBytes[left.lowerBound + offset] != rightBytes[right.lowerBound + offset] {
            return leftBytes[left.lowerBound + offset] < rightBytes[right.lowerBound + offset] ? .orderedAscending : .orderedDescending
        }
        return nil
    }
}
