import Foundation

/// One download per image, however many ask for it at once: the first request starts it,
/// the others that come while it runs wait for the same bytes. Process-wide, because a
/// gallery makes a new client and cache for every request. The download runs in its own
/// task, so a requester that goes away (a client that hangs up) does not cancel it for the
/// others.
actor ImageDownloads {
    static let shared = ImageDownloads()

    private var running: [String: Task<Data, Error>] = [:]

    /// The bytes `download` gives, or the bytes of the one already running under `key`.
    func load(_ key: String, _ download: @escaping @Sendable () async throws -> Data) async throws -> Data {
        if let task = running[key] { return try await task.value }
        let task = Task { try await download() }
        running[key] = task
        defer { running[key] = nil }
        return try await task.value
    }

    /// How many downloads are running now.
    var count: Int { running.count }
}
