import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a server listens: a numeric IPv4 or IPv6 address and a port (0: any free one).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The numeric IPv4 or IPv6 address, without brackets.
    public var host: String
    /// The port; 0 asks for any free one.
    public var port: UInt16

    /// The address `host` at `port`; `parse` checks text from a user.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:80`; nil with why when it is none of those.
    public static func parse(_ text: String) -> Result<ListenAddress, ListenAddressError> {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return .failure(ListenAddressError("\(text) is not [IPv6 address]:port"))
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                return .failure(ListenAddressError("\(text) has no port: write address:port, as 127.0.0.1:8080"))
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = UInt16(portText), portText.allSatisfy(\.isASCII) else {
            return .failure(ListenAddressError("\(text): the port must be a number from 0 to 65535"))
        }
        let address = ListenAddress(host: String(host), port: port)
        guard address.socketAddress() != nil else {
            return .failure(ListenAddressError("\(host) is not a numeric IPv4 or IPv6 address (names are not resolved)"))
        }
        return .success(address)
    }

    /// Whether only this machine can connect (127.0.0.0/8 or ::1).
    public var isLoopback: Bool {
        host == "::1" || host.hasPrefix("127.")
    }

    /// The host as a URL writes it (an IPv6 address in brackets).
    public var hostForURL: String { host.contains(":") ? "[\(host)]" : host }

    /// `host:port`, with an IPv6 host in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The address as a `sockaddr_in` or `sockaddr_in6`, in bytes.
    func socketAddress() -> [UInt8]? {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}

/// Why a listen address was refused.
public struct ListenAddressError: Error, CustomStringConvertible {
    /// Why, in a sentence for people.
    public let description: String
    init(_ description: String) { self.description = description }
}
