import CSQLite
import Foundation

/// The collations and functions every connection of the store registers, so that SQL can
/// sort and match text the way Foundation does.
///
/// A file whose indexes use these collations needs them registered to be written to by
/// other tools (the `sqlite3` shell can still read it).
enum SQLFunctions {
    /// Orders as the Finder does (case-insensitive, numbers compared as numbers): ICU's
    /// collation, a total order (`LocalizedStandardOrder`).
    static let localizedStandardCollation = "localizedStandard"
    /// Orders as `String.caseInsensitiveCompare`, for all of Unicode (SQLite's NOCASE
    /// folds ASCII only).
    static let caseInsensitiveCollation = "caseInsensitive"
    /// `store_fold(text)`: text case-folded and stripped of nothing else, for case-insensitive
    /// `beginsWith`/`contains`/`endsWith` predicates.
    static let foldFunction = "store_fold"

    static func register(on handle: OpaquePointer) {
        sqlite3_create_collation_v2(handle, localizedStandardCollation, SQLITE_UTF8, nil, { _, count1, bytes1, count2, bytes2 in
            SQLFunctions.order(Collation.localizedStandard.compare(bytes1, Int(count1), bytes2, Int(count2)))
        }, nil)
        // Foundation's comparison is slow: each connection's collation has a memo of its
        // own, released by SQLite (xDestroy) when the connection closes.
        registerMemoizedCollation(caseInsensitiveCollation, on: handle) { context, count1, bytes1, count2, bytes2 in
            SQLFunctions.order(Collation.caseInsensitive.compare(bytes1, Int(count1), bytes2, Int(count2), memo: SQLFunctions.memo(context)))
        }
        sqlite3_create_function_v2(handle, foldFunction, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil, { context, _, arguments in
            guard let argument = arguments?[0], sqlite3_value_type(argument) != SQLITE_NULL,
                  let text = sqlite3_value_text(argument) else {
                sqlite3_result_null(context)
                return
            }
            let count = Int(sqlite3_value_bytes(argument))
            var folded = SQLFunctions.fold(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
            folded.withUTF8 { buffer in
                guard !buffer.isEmpty else { return sqlite3_result_text(context, "", 0, nil) }
                buffer.withMemoryRebound(to: CChar.self) { characters in
                    sqlite3_result_text(context, characters.baseAddress, Int32(characters.count), topregions_sqlite_transient())
                }
            }
        }, nil, nil, nil)
    }

    private typealias CollationFunction = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32

    private static func registerMemoizedCollation(_ name: String, on handle: OpaquePointer, _ compare: CollationFunction) {
        let memo = Unmanaged.passRetained(CollationMemo()).toOpaque()
        let result = sqlite3_create_collation_v2(handle, name, SQLITE_UTF8, memo, compare) { context in
            context.map { Unmanaged<CollationMemo>.fromOpaque($0).release() }
        }
        // SQLite calls xDestroy only for a collation it registered.
        if result != SQLITE_OK { Unmanaged<CollationMemo>.fromOpaque(memo).release() }
    }

    private static func memo(_ context: UnsafeMutableRawPointer?) -> CollationMemo? {
        context.map { Unmanaged<CollationMemo>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The case folding used by case-insensitive string predicates, on both sides.
    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive], locale: nil)
    }

    private static func order(_ result: ComparisonResult) -> Int32 {
        switch result {
        case .orderedAscending: return -1
        case .orderedSame: return 0
        case .orderedDescending: return 1
        }
    }
}

extension Store {
    /// Registers the store's collations and functions on a connection opened with the C API,
    /// which it needs to write to tables whose indexes use them.
    public static func registerFunctions(on handle: OpaquePointer) {
        SQLFunctions.register(on: handle)
    }
}
