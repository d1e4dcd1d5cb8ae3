/// Text from a client or a server, made safe to print: control characters, quotes and
/// backslashes escaped, non-ASCII kept only when printable, and cut to a bound.
public enum LogText {
    /// The text escaped, cut to `limit` Unicode scalars (with `…` when cut).
    public static func escaped(_ text: String, limit: Int = 256) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count >= limit { result += "…"; break }
            count += 1
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                let value = scalar.value
                let isControl = value < 0x20 || (0x7F...0x9F).contains(value) || (0x200B...0x200F).contains(value)
                    || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) || value == 0xFEFF
                if isControl {
                    result += "\\u{" + String(value, radix: 16) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}
