import Flickr
import Foundation

/// How many of `attemptsEach` acquisitions per limiter, all started at once, are granted
/// within `seconds`; the others are cancelled while they wait.
public func grantedWithin(seconds: TimeInterval, limiters: [RateLimiter], attemptsEach: Int) async throws -> Int {
    let tasks = limiters.flatMap { limiter in
        (0..<attemptsEach).map { _ in Task { () -> Bool in (try? await limiter.acquire()) != nil } }
    }
    try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
    tasks.forEach { $0.cancel() }
    var granted = 0
    for task in tasks where await task.value { granted += 1 }
    return granted
}
