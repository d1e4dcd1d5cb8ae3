import Foundation
import Glibc
import Store

/// One measured figure, printed as one JSON object per line.
struct Figure {
    var scenario: String
    var n: Int
    var seconds: Double
    var baseline: String?
    var baselineSeconds: Double?
    /// Scenario parameters and derived figures (`k`, `sections`, `perSecond`, …).
    var extra: [String: Any] = [:]

    var json: String {
        var object: [String: Any] = ["scenario": scenario, "n": n, "seconds": Self.rounded(seconds),
                                     "rssMB": Self.rounded(residentMegabytes())]
        if let baseline, let baselineSeconds {
            object["baseline"] = baseline
            object["baselineSeconds"] = Self.rounded(baselineSeconds)
            object["ratio"] = Self.rounded(baselineSeconds / seconds)
        }
        for (key, value) in extra { object[key] = (value as? Double).map(Self.rounded) ?? value }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    private static func rounded(_ value: Double) -> Double {
        guard value.isFinite, value != 0 else { return value }
        let digits = max(0, 4 - Int(floor(log10(abs(value)))))
        let scale = pow(10, Double(min(digits, 9)))
        return (value * scale).rounded() / scale
    }
}

/// Wall-clock seconds of `body`.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// Writes every dirty page of the machine's file systems to disk (`sync(2)`), so that a
/// timed phase does not pay for the writeback of files an earlier, untimed phase wrote
/// (a million photos' JSON pages are about a gigabyte).
func flushFileSystems() {
    Glibc.sync()
}

/// The median of `runs` measurements, each after `setUp` (which is not timed).
func medianSeconds(runs: Int, setUp: () throws -> Void = {}, _ body: () throws -> Void) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<runs {
        try setUp()
        times.append(try measure(body))
    }
    times.sort()
    return times[times.count / 2]
}

/// A process's resident memory, from /proc/PID/status, in megabytes: all of it (`VmRSS`),
/// and the part no file backs (`RssAnon`, the heap: where a leak shows), as against mapped
/// files (`RssFile`, e.g. SQLite's shared-memory WAL index, which grows with the WAL).
struct ResidentMemory {
    var total = 0.0, anonymous = 0.0, file = 0.0

    init(process: String = "self") throws {
        let path = "/proc/\(process)/status"
        let status = try String(contentsOfFile: path, encoding: .utf8)
        var found = false
        for line in status.split(separator: "\n") {
            // "VmRSS:\t   38000 kB": a tab, then spaces.
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 2, let kilobytes = Double(fields[1]) else { continue }
            switch fields[0] {
            case "VmRSS:": total = kilobytes / 1024; found = true
            case "RssAnon:": anonymous = kilobytes / 1024
            case "RssFile:": file = kilobytes / 1024
            default: break
            }
        }
        guard found else { throw StoreError(.invalidRequest, "\(path) has no VmRSS line") }
    }

    init(pid: Int32) throws { try self.init(process: "\(pid)") }
}

/// This process's resident memory now.
func residentMegabytes() -> Double { (try? ResidentMemory())?.total ?? 0 }

/// A scratch directory for a scenario's files, removed afterwards.
func withScratchDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("topregions-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

/// A named group of figures.
struct Scenario: Sendable {
    var name: String
    var summary: String
    var run: @Sendable (_ quick: Bool) throws -> [Figure]
}
