import Foundation

/// A daemon keeping a store fresh: its process and the host it runs on.
public struct RunningDaemon: Sendable, Equatable {
    /// Its process id on its host; nil when its session's name could not be read.
    public var pid: Int32?
    /// The host's name (`gethostname`); nil when not known.
    public var host: String?

    public init(pid: Int32?, host: String?) {
        self.pid = pid
        self.host = host
    }

    /// This machine's name, as `gethostname(2)` gives it (no DNS lookup).
    public static let thisHost: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// Whether it runs on this machine.
    public var isOnThisHost: Bool { host == Self.thisHost }

    /// The one a status shows of several: one on this host first, then the first.
    static func shown(of daemons: [RunningDaemon]) -> RunningDaemon? {
        daemons.first(where: \.isOnThisHost) ?? daemons.first
    }
}
