import Foundation

extension StoreReading {
    /// `read`, off the calling task's thread (a read blocks): on the SQLite store's reader
    /// threads, or on a global queue for another store.
    public func reading<T: Sendable>(_ body: @escaping @Sendable (ReadContext) throws -> T) async throws -> T {
        if let store = self as? Store { return try await store.read(body) }
        return try await Self.offThePool { try self.read(body) }
    }

    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }
}

extension StoreWriting {
    /// `write`, off the calling task's thread (a write blocks): on the SQLite store's
    /// writer thread, or on a global queue for another store.
    @discardableResult
    public func writing<T: Sendable>(author: String? = nil, _ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        if let store = self as? Store { return try await store.write(author: author, body) }
        return try await Self.offThePool { try self.write(author: author, body) }
    }
}
