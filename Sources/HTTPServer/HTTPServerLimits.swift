import Foundation

/// What one server accepts at most, and for how long it waits.
public struct HTTPServerLimits: Sendable {
    /// Connections open at once.
    public var connections: Int = 4_096
    /// Connections open at once from one client address.
    public var connectionsPerAddress: Int = 256
    /// Seconds a client has to send a request's line and headers, from the moment it
    /// connects or its previous response ended (bounds a slowloris, and idle keep-alive).
    public var requestSeconds: TimeInterval = 10
    /// Seconds a connection may stay idle while a request's body is being sent.
    public var idleSeconds: Int = 30
    /// Bytes of a request's line and headers together (413 past it; libmicrohttpd answers 414
    /// or 431 itself to a head it cannot hold, about twice as large).
    public var headerBytes: Int = 8 * 1024
    /// Bytes of a request's body (413 past it).
    public var bodyBytes: Int = 64 * 1024
    /// Threads polling the connections.
    public var threads: Int = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))

    /// The default limits.
    public init() {}
}
