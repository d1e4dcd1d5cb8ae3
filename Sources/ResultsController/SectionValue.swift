import Foundation
import Store

/// A section's identity: the value of the section key its objects share.
///
/// Two values are the same section when they are equal under the binary order the
/// controller keeps them in: text by its UTF-8 bytes (so "Liège" written with `è` and
/// written with `e` and a combining grave are two sections, and so are "Limburg" and
/// "limburg"), numbers by value, NULL apart from everything else (also from `""`). The
/// fetch, the incremental updates, snapshots and the cache all use this one definition.
public struct SectionValue: Sendable, Hashable, CustomStringConvertible {
    /// The section key's value.
    public let value: SQLValue

    /// The section of objects whose section key holds `value`.
    public init(_ value: SQLValue) { self.value = value }

    /// The value of an unsectioned controller's one section, and of objects whose section
    /// key is NULL.
    public static let null = SectionValue(.null)

    /// Whether this is the NULL section (not `""`).
    public var isNull: Bool { value.isNull }

    /// The section's name as Core Data gives it: the value as text; NULL is named `""`,
    /// like an empty string (tell them apart by `isNull`).
    public var name: String {
        switch value {
        case .null: return ""
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .text(let text): return text
        case .blob(let bytes): return bytes.map { String(format: "%02x", $0) }.joined()
        }
    }

    /// The name in quotes, or NULL.
    public var description: String { isNull ? "NULL" : "\"\(name)\"" }

    /// Whether the two are one section: equal in binary order.
    public static func == (left: SectionValue, right: SectionValue) -> Bool {
        KeyOrder.compare(left.value, right.value, .binary) == .orderedSame
    }

    /// Hashes consistently with `==` (numbers by value, text by bytes).
    public func hash(into hasher: inout Hasher) {
        switch value {
        case .null:
            hasher.combine(0)
        case .integer, .real:
            hasher.combine(1)
            hasher.combine(value.double ?? 0)
        case .text(let text):
            hasher.combine(2)
            for byte in text.utf8 { hasher.combine(byte) }
        case .blob(let bytes):
            hasher.combine(3)
            hasher.combine(bytes)
        }
    }
}
