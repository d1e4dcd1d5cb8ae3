import Foundation
import Store

/// The `topregions` tool that `cli.regions` and `daemon.memory` run: the one built beside
/// this benchmark (the bench's target depends on the tool's, so `swift run` builds both).
enum ToolBinary {
    /// How the tool links the Swift runtime and Foundation. A tool that loads them as shared
    /// libraries starts a few milliseconds slower than one that carries them (as
    /// `scripts/bootstrap` builds it, and as a deployment should), which `cli.regions` counts.
    enum Linking: String {
        case `static`, dynamic
    }

    static var url: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("topregions")
    }

    /// The tool's path, or an error that says how to build it.
    static func path() throws -> String {
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw StoreError(.invalidRequest, "\(url.path) is missing: build it in release, swift build -c release --static-swift-stdlib")
        }
        return url.path
    }

    /// Dynamic when the binary names the shared Swift runtime (`libswiftCore.so`, among the
    /// libraries it needs); a statically linked tool has no such name in it.
    static func linking() throws -> Linking {
        let binary = try Data(contentsOf: URL(fileURLWithPath: try path()), options: .alwaysMapped)
        return binary.range(of: Data("libswiftCore.so".utf8)) == nil ? .static : .dynamic
    }

    /// Says on standard error when the tool measured is not linked as deployed.
    static func warnIfDynamic() throws -> Linking {
        let linking = try linking()
        if linking == .dynamic {
            FileHandle.standardError.write(Data("""
                topregions-bench: \(url.path) loads the Swift runtime as shared libraries (swift run cannot link it statically), \
                which adds a few milliseconds to each start that cli.regions counts; for the deployed figure: \
                swift build -c release --static-swift-stdlib && .build/release/topregions-bench\n
                """.utf8))
        }
        return linking
    }
}
