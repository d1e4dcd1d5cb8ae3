import Foundation

/// Where the store's async API runs its blocking work: one serial queue for writes (there
/// is one writer anyway) and a queue for reads as wide as the reader pool, so that waiting
/// for SQLite never holds a thread of Swift's cooperative pool, and a burst of async calls
/// makes no more threads than connections.
///
/// The writer is a serial dispatch queue, which runs on a thread of its own: a write can
/// wait a minute for another process's lock, and on the shared, CPU-wide pool (where an
/// OperationQueue's work runs) it would hold up every reader and task meanwhile.
///
/// `@unchecked Sendable`: OperationQueue is thread-safe; its configuration is set once here.
final class StoreExecutor: @unchecked Sendable {
    private let writer = DispatchQueue(label: "store.writer")
    private let readers = OperationQueue()

    init(readers readerCount: Int) {
        readers.name = "store.readers"
        readers.maxConcurrentOperationCount = max(1, readerCount)
    }

    func writing<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writer.async { continuation.resume(with: Result { try work() }) }
        }
    }

    func reading<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await run(work, on: readers)
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T, on queue: OperationQueue) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.addOperation { continuation.resume(with: Result { try work() }) }
        }
    }
}
