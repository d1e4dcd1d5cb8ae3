import Foundation
import HTTPServer
import TopRegionsKit

/// A live list as the server follows it, whatever its rows: its events as Server-Sent
/// Events (`LiveList` fans them out; this only frames them).
protocol FollowedList: AnyObject, Sendable {
    /// Writes the list's events to `subscriber`'s stream from now on (after `token`: the
    /// batches since, while kept), framed by the list's `frames`.
    func follow(after token: Int64?, by subscriber: StreamSubscriber, frames: SSEFrames) -> ListSubscription
    var subscriberCount: Int { get }
    /// Whether the list ended: a new stream needs a new list.
    var hasEnded: Bool { get }
    func close()
}

extension LiveList: FollowedList {
    func follow(after token: Int64?, by subscriber: StreamSubscriber, frames: SSEFrames) -> ListSubscription {
        subscribe(after: token) { message in
            switch message {
            case .event(let delivery):
                subscriber.send(frames.frame(for: delivery))
            case .ended(let end):
                subscriber.end(end)
            }
        }
    }
}

/// A list's events as SSE frames: `id:`, `event:` and one `data:` line (JSON has no raw
/// newline), then a blank line. The frame of the event just framed is kept: the list hands
/// the same delivery to each of its subscribers in turn, on its queue, so each event is
/// framed once. The delivery is kept with it, so that no later one can take its address.
///
/// `@unchecked Sendable`: used only on its list's queue.
final class SSEFrames: @unchecked Sendable {
    private var last: (delivery: AnyObject, bytes: [UInt8])?

    func frame<Row>(for delivery: ListDelivery<Row>) -> [UInt8] {
        if let last, last.delivery === delivery { return last.bytes }
        let bytes = Self.frame(id: delivery.token, event: delivery.kind, data: delivery.json)
        last = (delivery, bytes)
        return bytes
    }

    static func frame(id: Int64?, event: String, data: [UInt8]) -> [UInt8] {
        var bytes = Array((id.map { "id: \($0)\n" } ?? "").utf8) + Array("event: \(event)\ndata: ".utf8)
        bytes.append(contentsOf: data)
        bytes.append(contentsOf: Array("\n\n".utf8))
        return bytes
    }
}

/// One client's change stream on one list: the list's events written to its connection
/// while its token still names its user (`isAuthorised`, asked of memory before each
/// event and heartbeat).
///
/// `@unchecked Sendable`: `subscription` is set once, right after the subscriber is made,
/// under `lock`.
final class StreamSubscriber: @unchecked Sendable {
    let stream: EventStream
    let isAuthorised: @Sendable () -> Bool
    private let lock = NSLock()
    private var subscription: ListSubscription?

    init(stream: EventStream, isAuthorised: @escaping @Sendable () -> Bool) {
        self.stream = stream
        self.isAuthorised = isAuthorised
    }

    func follow(_ list: any FollowedList, after token: Int64?, frames: SSEFrames) {
        let subscription = list.follow(after: token, by: self, frames: frames)
        lock.withLock { self.subscription = subscription }
    }

    /// Writes an event, or ends the stream if its token no longer names its user.
    func send(_ frame: [UInt8]) {
        if isAuthorised() { stream.write(frame) } else { revoke() }
    }

    /// A comment that keeps the connection open through proxies and finds clients gone.
    func heartbeat(_ bytes: [UInt8]) {
        if isAuthorised() { stream.write(bytes) } else { revoke() }
    }

    /// The list ended: gone (what it showed was removed), or failed (its rows could not be
    /// read: said in an `error` event, so a client does not keep a shorter list).
    func end(_ end: ListEnd) {
        if case .failed(let reason) = end {
            struct Failure: Encodable { var error: Detail }
            struct Detail: Encodable { var code = "list_failed"; var message: String }
            let data = (try? GalleryJSON.bytes(Failure(error: Detail(message: "\(reason); open the stream again")))) ?? []
            stream.write(SSEFrames.frame(id: nil, event: "error", data: data))
        }
        stream.finish()
    }

    /// Ends a subscriber whose token no longer names its user: it hears nothing more.
    func revoke() {
        cancel()
        stream.finish()
    }

    func cancel() {
        lock.withLock { subscription }?.cancel()
    }
}
