import Foundation
import _FoundationICU

/// The order of `Collation.localizedStandard`: ICU's collation for the locale `en_001`
/// (the Unicode Collation Algorithm's root order) with numeric collation, compared up to the
/// third level (letters, then accents, then case and width), then the shorter UTF-8
/// encoding first, then its bytes. Finder-like, as `localizedStandardCompare`: case and
/// width decide only between strings otherwise equal, runs of digits compare as numbers
/// ("IMG 2" before "IMG 10"), and of equal numbers the one with fewer leading zeros comes
/// first ("a1" before "a01").
///
/// It is a total order, which an index needs: Foundation's `localizedStandardCompare` on
/// Linux is not (it is neither always antisymmetric nor transitive: "11" < "１1" < "1２" <
/// "11"), and SQLite builds a corrupt index from a comparison that is not. ICU's collation
/// is a total preorder; strings it finds equal (canonically equal ones, é precomposed and
/// decomposed; ones apart only by leading zeros or ignorable characters) are ordered by
/// their UTF-8 encodings' lengths, then bytes.
///
/// The same order is a byte string (`sortKey`), so a store that cannot call Swift to sort
/// (a PostgreSQL column of `bytea`) orders alike.
///
/// The collator comes from the ICU inside Foundation (`_FoundationICU`), so every program
/// built with the same toolchain orders alike. It is opened once and only read after: ICU
/// collators are safe to use from several threads for comparisons and keys.
enum LocalizedStandardOrder {
    /// ICU's collator; without it (never seen: its data is built into the library) the
    /// order is the encodings' lengths and bytes'.
    private nonisolated(unsafe) static let collator: OpaquePointer? = openCollator()

    private static func openCollator() -> OpaquePointer? {
        var status = U_ZERO_ERROR
        guard let collator = swift_ucol_open(Collation.localizedStandardLocale.identifier, &status),
              status.rawValue <= U_ZERO_ERROR.rawValue else { return nil }
        swift_ucol_setAttribute(collator, UCOL_NUMERIC_COLLATION, UCOL_ON, &status)
        swift_ucol_setAttribute(collator, UCOL_NORMALIZATION_MODE, UCOL_ON, &status)
        swift_ucol_setAttribute(collator, UCOL_STRENGTH, UCOL_TERTIARY, &status)
        guard status.rawValue <= U_ZERO_ERROR.rawValue else {
            swift_ucol_close(collator)
            return nil
        }
        return collator
    }

    /// The order of two UTF-8 strings (ill-formed sequences count as U+FFFD in ICU's
    /// comparison, and the encodings still decide).
    static func compare(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> ComparisonResult {
        guard let collator, !left.isEmpty, !right.isEmpty, left.count <= Int32.max, right.count <= Int32.max else {
            return shorterFirst(left, right)
        }
        var status = U_ZERO_ERROR
        let result = left.withMemoryRebound(to: CChar.self) { left in
            right.withMemoryRebound(to: CChar.self) { right in
                swift_ucol_strcollUTF8(collator, left.baseAddress, Int32(left.count), right.baseAddress, Int32(right.count), &status)
            }
        }
        if status.rawValue <= U_ZERO_ERROR.rawValue {
            if result == UCOL_LESS { return .orderedAscending }
            if result == UCOL_GREATER { return .orderedDescending }
        }
        return shorterFirst(left, right)
    }

    /// The tie-break of strings ICU finds equal: the shorter encoding, then the bytes.
    private static func shorterFirst(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> ComparisonResult {
        if left.count != right.count { return left.count < right.count ? .orderedAscending : .orderedDescending }
        return Collation.bytewise(left, right)
    }

    /// The order as bytes: two strings' keys compare (byte-wise, shorter first on a common
    /// beginning) as `compare` orders the strings. ICU's key, whose only zero byte is its
    /// last, then the UTF-8 encoding's length (4 bytes, big-endian), then its bytes.
    static func sortKey(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        let tieBreak = withUnsafeBytes(of: UInt32(clamping: bytes.count).bigEndian, Array.init) + bytes
        guard let collator else { return tieBreak }
        let units = Array(text.utf16)
        guard units.count <= Int32.max / 4 else { return tieBreak }
        var key = [UInt8](repeating: 0, count: max(64, units.count * 4))
        var length = Int(swift_ucol_getSortKey(collator, units, Int32(units.count), &key, Int32(key.count)))
        if length > key.count {
            key = [UInt8](repeating: 0, count: length)
            length = Int(swift_ucol_getSortKey(collator, units, Int32(units.count), &key, Int32(key.count)))
        }
        guard length > 0, length <= key.count else { return tieBreak }
        return Array(key[0..<length]) + tieBreak
    }
}
