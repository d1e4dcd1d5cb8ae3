import Foundation
import Store

/// The JSON text of the tool's output values: dictionaries with sorted keys, arrays,
/// strings, integers, doubles, booleans and null, written exactly as `JSONSerialization`
/// with `.sortedKeys`, `.fragmentsAllowed` and `.withoutEscapingSlashes` writes them (the
/// output is a public contract; `JSONTextTests` compares the two).
///
/// Written by hand because `JSONSerialization` bridges every value to an Objective-C
/// object and sorts keys through `AnyHashable`: that was a fifth of a short command's time.
enum JSONText {
    static func of(_ value: Any) -> String {
        var text = ""
        append(value, to: &text)
        return text
    }

    private static func append(_ value: Any, to text: inout String) {
        switch value {
        case let string as String: appendString(string, to: &text)
        case let flag as Bool: text += flag ? "true" : "false"
        case let integer as Int: text += String(integer)
        case let integer as Int64: text += String(integer)
        case let integer as Int32: text += String(integer)
        case let number as Double: appendDouble(number, to: &text)
        case let number as Float: appendDouble(Double(number), to: &text)
        case is NSNull: text += "null"
        case let array as [Any]:
            text += "["
            for (index, element) in array.enumerated() {
                if index > 0 { text += "," }
                append(element, to: &text)
            }
            text += "]"
        case let object as [String: Any]:
            text += "{"
            for (index, key) in object.keys.sorted(by: keyOrder).enumerated() {
                if index > 0 { text += "," }
                appendString(key, to: &text)
                text += ":"
                append(object[key] ?? NSNull(), to: &text)
            }
            text += "}"
        default:
            appendOther(value, to: &text)
        }
    }

    /// `JSONSerialization`'s order for `.sortedKeys` on Linux, which is
    /// `localizedStandardCompare`'s (the store's collation gives it without Foundation for
    /// the tool's ASCII keys).
    private static func keyOrder(_ left: String, _ right: String) -> Bool {
        Collation.localizedStandard.compare(left, right) == .orderedAscending
    }

    /// An optional holds its value or null; anything else is written as its description.
    private static func appendOther(_ value: Any, to text: inout String) {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            if let wrapped = mirror.children.first?.value { append(wrapped, to: &text) } else { text += "null" }
        } else {
            appendString(String(describing: value), to: &text)
        }
    }

    /// Swift's shortest round-trip form without a trailing ".0"; not-a-number and the
    /// infinities, which JSON cannot hold, as null.
    private static func appendDouble(_ number: Double, to text: inout String) {
        guard number.isFinite else {
            text += "null"
            return
        }
        let description = number.description
        text += description.hasSuffix(".0") ? String(description.dropLast(2)) : description
    }

    private static func appendString(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{8}": text += "\\b"
            case "\u{C}": text += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
