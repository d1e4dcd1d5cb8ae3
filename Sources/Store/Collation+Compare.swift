import Foundation

extension Collation {
    /// Compares two strings as SQL does under this collation, so that code holding sort
    /// keys in memory (a results controller placing a changed row) agrees with ORDER BY.
    ///
    /// `localizedStandard` is ICU's collation with numbers as numbers, then the bytes
    /// (`LocalizedStandardOrder`): a total order, Finder-like as `localizedStandardCompare`.
    /// Strings whose first difference lies in printable ASCII are ordered without ICU
    /// (`LocalizedStandardASCII`), to the same answer.
    ///
    /// `caseInsensitive` is Foundation's `caseInsensitiveCompare`, which is not always
    /// antisymmetric on Linux, and a SQLite collation must be. So the two strings are
    /// always compared in one direction, the byte-wise smaller first, and the result
    /// flipped when the arguments came the other way.
    public func compare(_ left: String, _ right: String) -> ComparisonResult {
        switch self {
        case .binary:
            return Self.bytewise(left, right)
        case .localizedStandard:
            var left = left
            var right = right
            return left.withUTF8 { leftBytes in right.withUTF8 { rightBytes in Self.localizedStandardOrder(leftBytes, rightBytes) } }
        case .caseInsensitive:
            let bytewise = Self.bytewise(left, right)
            if bytewise == .orderedSame { return .orderedSame }
            return Self.oriented(left, right, bytewise) { $0.caseInsensitiveCompare($1) }
        }
    }

    /// The `localizedStandard` order as bytes: keys compare byte-wise (a shorter key first on
    /// a common beginning) as `compare` orders the strings, for a store that sorts by a
    /// stored key instead of calling Swift.
    public static func localizedStandardSortKey(_ text: String) -> [UInt8] {
        LocalizedStandardOrder.sortKey(text)
    }

    /// `order` asked with the byte-wise smaller argument first (`bytewise` is the arguments'
    /// byte order, not `.orderedSame`), and its answer flipped when they came the other way.
    private static func oriented<Text>(_ left: Text, _ right: Text, _ bytewise: ComparisonResult,
                                       _ order: (Text, Text) -> ComparisonResult) -> ComparisonResult {
        bytewise == .orderedAscending ? order(left, right) : order(right, left).reversed
    }

    /// The locale of ICU's collator for the `localizedStandard` order (its root order: see
    /// `LocalizedStandardOrder`), named rather than the process's.
    public static let localizedStandardLocale = Locale(identifier: "en_001")

    /// The same comparison on UTF-8 bytes as SQLite hands them to a collation. What goes to
    /// Foundation (`caseInsensitive`) is looked up in `memo` first, and kept there; ICU's
    /// comparison (`localizedStandard`) costs less than a look-up.
    func compare(_ left: UnsafeRawPointer?, _ leftCount: Int, _ right: UnsafeRawPointer?, _ rightCount: Int,
                 memo: CollationMemo? = nil) -> ComparisonResult {
        let leftBytes = UnsafeBufferPointer(start: left?.assumingMemoryBound(to: UInt8.self), count: left == nil ? 0 : leftCount)
        let rightBytes = UnsafeBufferPointer(start: right?.assumingMemoryBound(to: UInt8.self), count: right == nil ? 0 : rightCount)
        switch self {
        case .binary:
            return Self.bytewise(leftBytes, rightBytes)
        case .localizedStandard:
            return Self.localizedStandardOrder(leftBytes, rightBytes)
        case .caseInsensitive:
            let bytewise = Self.bytewise(leftBytes, rightBytes)
            if bytewise == .orderedSame { return bytewise }
            // Kept byte-wise smaller first: one entry serves both orders.
            return Self.oriented(leftBytes, rightBytes, bytewise) { first, second in
                let ask = { Self.string(first).caseInsensitiveCompare(Self.string(second)) }
                return memo?.result(first, second, compare: ask) ?? ask()
            }
        }
    }

    /// `localizedStandard` on UTF-8 bytes: the ASCII path, else ICU.
    private static func localizedStandardOrder(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> ComparisonResult {
        if let order = LocalizedStandardASCII.compare(left, right) { return order }
        if bytewise(left, right) == .orderedSame { return .orderedSame }
        return LocalizedStandardOrder.compare(left, right)
    }

    private static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        bytes.isEmpty ? "" : String(decoding: bytes, as: UTF8.self)
    }

    /// Byte order of the UTF-8 encodings: SQLite's BINARY collation.
    static func bytewise(_ left: String, _ right: String) -> ComparisonResult {
        var left = left
        var right = right
        return left.withUTF8 { leftBytes in right.withUTF8 { rightBytes in bytewise(leftBytes, rightBytes) } }
    }

    static func bytewise(_ leftBytes: UnsafeBufferPointer<UInt8>, _ rightBytes: UnsafeBufferPointer<UInt8>) -> ComparisonResult {
        let common = min(leftBytes.count, rightBytes.count)
        if common > 0, let leftBase = leftBytes.baseAddress, let rightBase = rightBytes.baseAddress {
            let order = memcmp(leftBase, rightBase, common)
            if order != 0 { return order < 0 ? .orderedAscending : .orderedDescending }
        }
        if leftBytes.count == rightBytes.count { return .orderedSame }
        return leftBytes.count < rightBytes.count ? .orderedAscending : .orderedDescending
    }
}

extension ComparisonResult {
    var reversed: ComparisonResult {
        switch self {
        case .orderedAscending: return .orderedDescending
        case .orderedSame: return .orderedSame
        case .orderedDescending: return .orderedAscending
        }
    }
}
