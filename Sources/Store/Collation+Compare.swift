import Foundation

extension Collation {
    /// Compares two strings as SQL does under this collation, so that code holding sort
    /// keys in memory (a results controller placing a changed row) agrees with ORDER BY.
    ///
    /// Foundation's `localizedStandardCompare` and `caseInsensitiveCompare` are not always
    /// antisymmetric on Linux (for example `"aΩm"` against `"åωm"` is `orderedDescending`
    /// both ways round), and a SQLite collation must be. So the two strings are always
    /// compared in one direction, the byte-wise smaller first, and the result flipped when
    /// the arguments came the other way. Wherever Foundation is consistent this is exactly
    /// Foundation's answer. Strings whose first difference lies in printable ASCII are
    /// ordered without Foundation (`LocalizedStandardASCII`), to the same answer.
    ///
    /// `localizedStandard` is `localizedStandardCompare` in the locale `en_001`, named
    /// rather than taken from `Locale.current`: an index stays ordered only while every
    /// process that writes the file orders alike. Foundation on Linux reports `en_001` as
    /// the current locale whatever `LANG` says today, so this is the order stores have
    /// always had; a Foundation that followed `LANG` would otherwise give a daemon and a
    /// shell two orders for one file.
    public func compare(_ left: String, _ right: String) -> ComparisonResult {
        switch self {
        case .binary:
            return Self.bytewise(left, right)
        case .caseInsensitive, .localizedStandard:
            let bytewise = Self.bytewise(left, right)
            if bytewise == .orderedSame { return .orderedSame }
            if self == .localizedStandard, let order = Self.localizedStandardASCII(left, right) { return order }
            return Self.oriented(left, right, bytewise, foundationOrder)
        }
    }

    /// Foundation's order of two strings that differ, `first` the byte-wise smaller.
    private func foundationOrder(_ first: String, _ second: String) -> ComparisonResult {
        self == .localizedStandard
            ? first.compare(second, options: Self.localizedStandardOptions, range: nil, locale: Self.localizedStandardLocale)
            : first.caseInsensitiveCompare(second)
    }

    /// `order` asked with the byte-wise smaller argument first (`bytewise` is the arguments'
    /// byte order, not `.orderedSame`), and its answer flipped when they came the other way.
    private static func oriented<Text>(_ left: Text, _ right: Text, _ bytewise: ComparisonResult,
                                       _ order: (Text, Text) -> ComparisonResult) -> ComparisonResult {
        bytewise == .orderedAscending ? order(left, right) : order(right, left).reversed
    }

    /// The locale of the `localizedStandard` order (see `compare`).
    public static let localizedStandardLocale = Locale(identifier: "en_001")
    /// What `localizedStandardCompare` is made of.
    public static let localizedStandardOptions: String.CompareOptions = [.caseInsensitive, .numeric, .widthInsensitive, .forcedOrdering]

    /// The same comparison on UTF-8 bytes as SQLite hands them to a collation; what goes to
    /// Foundation is looked up in `memo` first, and kept there.
    func compare(_ left: UnsafeRawPointer?, _ leftCount: Int, _ right: UnsafeRawPointer?, _ rightCount: Int,
                 memo: CollationMemo? = nil) -> ComparisonResult {
        let leftBytes = UnsafeBufferPointer(start: left?.assumingMemoryBound(to: UInt8.self), count: left == nil ? 0 : leftCount)
        let rightBytes = UnsafeBufferPointer(start: right?.assumingMemoryBound(to: UInt8.self), count: right == nil ? 0 : rightCount)
        if self == .localizedStandard, let order = LocalizedStandardASCII.compare(leftBytes, rightBytes) {
            return order
        }
        let bytewise = Self.bytewise(leftBytes, rightBytes)
        if bytewise == .orderedSame || self == .binary { return bytewise }
        // Kept byte-wise smaller first, as Foundation is asked: one entry serves both orders.
        return Self.oriented(leftBytes, rightBytes, bytewise) { first, second in
            let ask = { foundationOrder(Self.string(first), Self.string(second)) }
            return memo?.result(first, second, compare: ask) ?? ask()
        }
    }

    private static func localizedStandardASCII(_ left: String, _ right: String) -> ComparisonResult? {
        var left = left
        var right = right
        return left.withUTF8 { leftBytes in right.withUTF8 { rightBytes in LocalizedStandardASCII.compare(leftBytes, rightBytes) } }
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
