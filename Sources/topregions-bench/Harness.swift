import Foundation
import Glibc

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

/// This process's resident memory now, from /proc.
func residentMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
        return kilobytes / 1024
    }
    return 0
}

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
