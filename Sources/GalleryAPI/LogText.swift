import TopRegionsKit
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
                if UnsafeCharacters.contains(value) {
                    result += "\\u{" + String(value, radix: 16) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// The text with credential-shaped runs of base64url characters replaced: one that
    /// holds `trk_` (an API token's prefix, in any case) becomes `trk_REDACTED`, and any
    /// other of 40 characters or more (a token's body, a key) `REDACTED`. For what a client
    /// sends in a request line: its method, path and query.
    public static func hidingSecrets(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            guard isBase64URL(bytes[index]) else {
                result.append(bytes[index])
                index += 1
                continue
            }
            var end = index
            while end < bytes.count, isBase64URL(bytes[end]) { end += 1 }
            let run = bytes[index..<end]
            if containsTokenPrefix(run) && run.count >= 8 {
                result += Array("trk_REDACTED".utf8)
            } else if run.count >= 40 {
                result += Array("REDACTED".utf8)
            } else {
                result += run
            }
            index = end
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F
    }

    private static func containsTokenPrefix(_ run: ArraySlice<UInt8>) -> Bool {
        guard run.count >= 4 else { return false }
        let prefix = Array("trk_".utf8)
        var start = run.startIndex
        while start + 4 <= run.endIndex {
            if (0..<4).allSatisfy({ run[start + $0] | 0x20 == prefix[$0] | 0x20 }) { return true }
            start += 1
        }
        return false
    }
}
