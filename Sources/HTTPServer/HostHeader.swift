/// A `Host` header as RFC 3986 §3.2.2 writes it: a name, or an IPv6 literal in brackets,
/// then optionally a colon and a port. One reading for the server's framing checks and
/// for the API's check of the names it answers to.
public enum HostHeader {
    /// The name (an IPv6 literal without its brackets) and the port, if any, of `value`
    /// (trimmed of spaces); nil when a bracket is not closed or something other than a
    /// port follows it.
    public static func parts(_ value: String) -> (name: Substring, port: Substring?, isLiteral: Bool)? {
        let host = HostHeader.trimmed(value)
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let name = host[host.index(after: host.startIndex)..<close]
            let rest = host[host.index(after: close)...]
            if rest.isEmpty { return (name, nil, true) }
            guard rest.first == ":" else { return nil }
            return (name, rest.dropFirst(), true)
        }
        guard let colon = host.firstIndex(of: ":") else { return (host, nil, false) }
        return (host[..<colon], host[host.index(after: colon)...], false)
    }

    /// `value` without the spaces and tabs around it (HTTP's optional whitespace), cheaply:
    /// a `Host` is read for every request.
    public static func trimmed(_ value: String) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = value.firstIndex(where: { !blank($0) }), let last = value.lastIndex(where: { !blank($0) }) else { return "" }
        return value[first...last]
    }

    /// Whether `port` is digits up to 65535, or empty (RFC 3986 §3.2.3 allows it).
    public static func isValidPort(_ port: Substring) -> Bool {
        guard port.utf8.count <= 5, port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
        return (Int(port) ?? 0) <= 65_535
    }
}
