import Foundation
@testable import Store
import TestSupport
import Testing

@Suite("Waiting for another connection's lock")
struct BusyWaitTests {
    /// Two stores on one file: the first holds a write open (on a thread of its own) until
    /// `release` is called; the second, returned, waits for it up to `timeout`.
    private func lockedStore(_ directory: TemporaryDirectory, timeout: TimeInterval) throws -> (waiter: Store, release: () -> Void) {
        let path = directory.path("store.sqlite")
        let holder = try TestSchema.openStore(at: path)
        var configuration = StoreConfiguration()
        configuration.busyTimeout = timeout
        let waiter = try TestSchema.openStore(at: path, configuration: configuration)
        let release = DispatchSemaphore(value: 0), held = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? holder.write { transaction in
                try transaction.inserted(Region(name: "held"))
                held.signal()
                release.wait()
            }
        }
        held.wait()
        return (waiter, { release.signal() })
    }

    @Test("A write waits up to the busy timeout for another connection, then fails as busy")
    func waitsUpToTheTimeout() throws {
        let directory = try TemporaryDirectory()
        let (waiter, release) = try lockedStore(directory, timeout: 0.5)
        defer { release() }
        let started = Date()
        let error = #expect(throws: StoreError.self) { try waiter.write { try $0.inserted(Region(name: "late")) } }
        let waited = Date().timeIntervalSince(started)
        #expect(error?.resultCode?.primary == .busy)
        #expect(waited >= 0.45 && waited < 5, "waited \(waited) s for a 0.5 s timeout")
    }

    @Test("interruptWaits ends a write's wait at once, and later writes do not wait")
    func interruptEndsTheWait() throws {
        let directory = try TemporaryDirectory()
        let (waiter, release) = try lockedStore(directory, timeout: 60)
        defer { release() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { waiter.interruptWaits() }
        let started = Date()
        let error = #expect(throws: StoreError.self) { try waiter.write { try $0.inserted(Region(name: "late")) } }
        #expect(error?.resultCode?.primary == .busy)
        #expect(Date().timeIntervalSince(started) < 5, "the 60 s wait ended when interrupted")
        let again = Date()
        #expect(throws: StoreError.self) { try waiter.write { try $0.inserted(Region(name: "later")) } }
        #expect(Date().timeIntervalSince(again) < 1, "a later write does not wait")
        #expect(try waiter.read { try $0.count(FetchRequest(Region.self)) } >= 0, "reading still works")
    }
}
