import Foundation
import Store
import TopRegionsKit

/// The exit statuses (a contract: docs/cli.md), and the one mapping from errors to them.
enum ExitStatus {
    static let failure: Int32 = 1
    /// EX_USAGE.
    static let usage: Int32 = 64
    /// EX_TEMPFAIL: another sync holds the store, or a failure that may pass.
    static let temporaryFailure: Int32 = 75

    static func of(_ error: Error) -> Int32 {
        switch error {
        case is UsageError: return usage
        case let error as GalleryError:
            switch error.kind {
            case .busy, .syncRunning, .storeUnreachable: return temporaryFailure
            case .source(temporary: true): return temporaryFailure
            default: return failure
            }
        case let error as StoreError where error.isBusy: return temporaryFailure
        default: return failure
        }
    }

    /// The message an error prints: its description, with the next step when it has one,
    /// begun in lowercase after "topregions: " as every message the tool writes is (the
    /// libraries write sentences; "SQLite", "SampleData" and other names keep their capital).
    static func message(_ error: Error) -> String {
        if let error = error as? StoreError, error.isBusy {
            return "the store is busy: another process has held it locked for longer than this command waits; try again"
        }
        return lowercasingFirstWord((error as? GalleryError)?.description ?? "\(error)")
    }

    static func lowercasingFirstWord(_ text: String) -> String {
        let word = text.prefix { $0.isLetter }
        guard word.count >= 2, let first = word.first, first.isUppercase, word.dropFirst().allSatisfy(\.isLowercase) else { return text }
        return first.lowercased() + text.dropFirst()
    }
}
