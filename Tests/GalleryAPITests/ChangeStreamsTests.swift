import Foundation
import HTTPServer
import Synchronization
import Testing
import TopRegionsKit
@testable import GalleryAPI

/// A list that takes as long to make as its test says, and counts its subscribers.
private final class SlowList: FollowedList, @unchecked Sendable {
    private let count = Mutex(0)
    func follow(after token: Int64?, by subscriber: StreamSubscriber, frames: SSEFrames) -> ListSubscription {
        count.withLock { $0 += 1 }
        return ListSubscription { [self] in count.withLock { $0 -= 1 } }
    }
    var subscriberCount: Int { count.withLock { $0 } }
    var hasEnded: Bool { false }
    func close() {}
}

@Suite("The change streams' registry")
struct ChangeStreamsTests {
    @Test("Ten clients opening one new list at once make it once; a slow list delays no other list's opening")
    func listsAreMadeOnceAndOutsideTheLock() throws {
        let streams = ChangeStreams(streamsPerAddress: 100, heartbeatSeconds: 3_600, lingerSeconds: 3_600)
        defer { streams.close() }
        let made = Mutex(0)
        let release = DispatchSemaphore(value: 0)
        // Threads of their own: blocked openers must not starve Swift's or dispatch's pools.
        let opened = DispatchGroup()
        for _ in 0..<10 {
            opened.enter()
            Thread {
                _ = try? streams.open("slow", for: "client", lastEventID: nil) {
                    made.withLock { $0 += 1 }
                    release.wait()  // the list takes as long as the test says
                    return SlowList()
                }
                opened.leave()
            }.start()
        }
        Thread.sleep(forTimeInterval: 0.2)  // every opener is in
        // Meanwhile another list opens at once.
        let started = Date()
        _ = try streams.open("quick", for: "client", lastEventID: nil) { SlowList() }
        #expect(Date().timeIntervalSince(started) < 1, "another list's opening does not wait for the slow one")
        #expect(streams.listCount == 1)
        release.signal()
        #expect(opened.wait(timeout: .now() + 10) == .success)
        #expect(made.withLock { $0 } == 1, "the slow list was made once")
        #expect(streams.subscribers(of: "slow") == 10)
        #expect(streams.listCount == 2)
    }
}
