import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SampleDataSupport

/// The Flickr-compatible test server (`Tests/Fixtures/FlickrServer/flickr_server.py`),
/// started on 127.0.0.1 and a free port for one test, and stopped when released.
public final class FlickrTestServer: @unchecked Sendable {
    public let port: Int
    public let process: Process
    /// The REST endpoint, like `https://api.flickr.com/services/rest/`.
    public var endpoint: URL { URL(string: "http://127.0.0.1:\(port)/services/rest/")! }  // built from a number
    /// The base of image URLs.
    public var imageBase: URL { URL(string: "http://127.0.0.1:\(port)")! }  // built from a number

    public static let sampleData = Repository.sampleData

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts a server on `data` (default: the bundled SampleData); with `apiKey`, it
    /// answers error 100 to requests without that key.
    public init(data: URL = FlickrTestServer.sampleData, apiKey: String? = nil) throws {
        let script = Repository.flickrServer
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--data", data.path] + (apiKey.map { ["--api-key", $0] } ?? [])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // The first line is "PORT <n>".
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            process.terminate()
            throw StartError(description: "the Flickr test server did not start (said \"\(text)\")")
        }
        self.port = port
    }

    deinit {
        // The server unblocks and handles SIGTERM itself (children inherit a blocked mask
        // from Foundation's Process); SIGKILL is the fallback.
        process.terminate()
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    // MARK: Control

    public func addFaults(_ faults: [[String: Any]]) async throws {
        try await control("POST", "/_control/faults", body: try JSONSerialization.data(withJSONObject: faults))
    }

    public func addFault(_ fault: [String: Any]) async throws {
        try await addFaults([fault])
    }

    /// A fault written as JSON text, for values `JSONSerialization` cannot write (an
    /// integer of more than 64 bits).
    public func addFault(json: String) async throws {
        try await control("POST", "/_control/faults", body: Data(json.utf8))
    }

    public func clearFaults() async throws {
        try await control("DELETE", "/_control/faults", body: nil)
    }

    public func setRateLimit(calls: Int, window: Double) async throws {
        try await control("POST", "/_control/rate_limit",
                          body: try JSONSerialization.data(withJSONObject: ["calls": calls, "window": window]))
    }

    /// One request the server served.
    public struct LoggedRequest: Sendable {
        public var path: String
        public var query: [String: String]
        public var time: Double
        public var method: String? { query["method"] }
    }

    public func requests() async throws -> [LoggedRequest] {
        let data = try await control("GET", "/_control/requests", body: nil)
        guard let list = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return [] }
        return list.map { entry in
            LoggedRequest(path: entry["path"] as? String ?? "", query: entry["query"] as? [String: String] ?? [:],
                          time: entry["time"] as? Double ?? 0)
        }
    }

    /// The most requests the server was serving at one moment.
    public func maximumInFlight() async throws -> Int {
        let data = try await control("GET", "/_control/stats", body: nil)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["max_in_flight"] as? Int ?? -1
    }

    public func clearRequests() async throws {
        try await control("DELETE", "/_control/requests", body: nil)
    }

    @discardableResult
    private func control(_ method: String, _ path: String, body: Data?) async throws -> Data {
        var request = URLRequest(url: imageBase.appendingPathComponent(path))
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        let (data, _) = try await URLSession.shared.data(for: request)
        return data
    }
}
