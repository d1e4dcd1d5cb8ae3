import Foundation

/// What the server checks of a request's line and headers, as libmicrohttpd parsed them,
/// before the handler sees it: its size, and the framing a request must have to mean one
/// thing to every server and proxy on its way (RFC 9112 §3.2, §6.3).
struct RequestHead {
    var method: String
    var path: String
    var version: String
    /// The authority of a target in absolute form, which stands for `Host`.
    var authority: String? = nil
    var arguments: [(name: String, value: String?)]
    var headers: [(name: String, value: String?)]

    /// The line's and headers' bytes, as parsed (the line's spaces and each header's ": "
    /// and CRLF counted; percent-escapes counted decoded).
    var size: Int {
        let line = method.utf8.count + path.utf8.count + version.utf8.count + 4
        let query = arguments.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.utf8.count ?? 0) + 2 }
        return headers.reduce(line + query) { $0 + $1.name.utf8.count + ($1.value?.utf8.count ?? 0) + 4 }
    }

    /// Why the request is malformed, with the status that says so (400, or 501 for a
    /// transfer coding the server does not implement); nil when it is well framed.
    var framingProblem: (status: Int, message: String)? {
        if !Self.isToken(method) { return (400, "the request's method is not a token (RFC 9110 §9.1)") }
        if headers.contains(where: { !Self.isToken($0.name) }) {
            // RFC 9112 §5.1: whitespace before the colon must be refused, not trimmed, since
            // a proxy on the way may have read the header differently.
            return (400, "a header's name is not a token (it has a space or a separator before its colon)")
        }
        if headers.contains(where: { Self.isFoldedFraming($0.name) }) {
            return (400, "a header line continues the one before it (obs-fold), which is not accepted")
        }
        if headers.contains(where: { ($0.value ?? "").utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } }) {
            // A bare CR, a line break or a NUL inside a value: RFC 9112 §5.2 asks to refuse them.
            return (400, "a header's value holds a line break or a NUL (folded headers are not accepted)")
        }
        if let problem = hostAndLengthProblem { return (400, problem) }
        let codings = values("transfer-encoding")
        // Exactly `chunked`: libmicrohttpd reads the body as chunked only then, and would
        // otherwise wait for a body it cannot frame.
        if !codings.isEmpty, codings.map({ $0.lowercased() }) != ["chunked"] {
            return (501, "the only transfer coding a request may have is chunked")
        }
        return nil
    }

    private var hostAndLengthProblem: String? {
        if let authority, authority.isEmpty || authority.contains("@") {
            return "the request target's authority must be a host (and port), without user information"
        }
        let hosts = authority.map { [$0] } ?? values("host")
        if hosts.count > 1 { return "the request has \(hosts.count) Host headers; send one" }
        if hosts.isEmpty && version == "HTTP/1.1" { return "an HTTP/1.1 request needs a Host header" }
        if let host = hosts.first {
            let parts = HostHeader.parts(host)
            if parts == nil || parts?.name.contains(where: { $0 == " " || $0 == "\t" || $0 == "/" || $0 == "@" }) == true {
                return "the Host header is not a host name"
            }
            if let port = parts?.port, !HostHeader.isValidPort(port) {
                return "the Host header's port is not a port number (0 to 65535)"
            }
        }
        let authorizations = values("authorization")
        if authorizations.count > 1 { return "the request has \(authorizations.count) Authorization headers; send one" }
        let lengths = Set(values("content-length").map { $0.trimmingCharacters(in: .whitespaces) })
        if lengths.count > 1 { return "the request has Content-Length headers that disagree" }
        if let length = lengths.first, length.isEmpty || !length.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return "the Content-Length header is not a number of bytes"
        }
        if !values("transfer-encoding").isEmpty && !lengths.isEmpty {
            return "the request has both Content-Length and Transfer-Encoding; send one"
        }
        return nil
    }

    /// libmicrohttpd 0.9.75 joins a folded continuation line to the header's *name*
    /// (`Content-Length:` then ` 5` reads as `Content-Length5` with an empty value) and
    /// frames the body without it: a name that starts as a framing header's and goes on is
    /// such a fold, and the request cannot be framed as a proxy would have framed it.
    static func isFoldedFraming(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return ["content-length", "transfer-encoding"].contains { lowered.hasPrefix($0) && lowered != $0 }
    }

    /// RFC 9110 §5.6.2: a token is one or more of these characters.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private func values(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name }.map { $0.value ?? "" }
    }
}

/// A request target in absolute form (`GET http://host/path HTTP/1.1`, RFC 9112 §3.2.2),
/// which a server must accept: its authority stands for the `Host` header, its path for the
/// target.
enum AbsoluteForm {
    /// The authority and the path of an `http` or `https` target; nil for any other.
    static func split(_ target: String) -> (authority: String, path: String)? {
        let lowered = target.prefix(8).lowercased()
        let schemeLength = lowered.hasPrefix("http://") ? 7 : lowered.hasPrefix("https://") ? 8 : 0
        guard schemeLength > 0 else { return nil }
        let rest = target.dropFirst(schemeLength)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        return (String(rest[..<slash]), slash == rest.endIndex ? "/" : String(rest[slash...]))
    }
}
