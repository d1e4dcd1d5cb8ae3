import Foundation
import HTTPServer

/// `serve`'s access log, written off the request path: a request's record is queued (a
/// lock and an append on the server's thread) and a thread of its own formats and writes
/// the lines, many at a time. Still one line per request, in the order they ended; `close`
/// writes every line queued before it returns, so none is lost at exit.
///
/// `@unchecked Sendable`: `queued` and `closing` are guarded by `condition`.
final class RequestLog: @unchecked Sendable {
    private let log: DaemonLog
    private let condition = NSCondition()
    private var queued: [HTTPRequestRecord] = []
    private var closing = false
    private var finished = false

    init(_ log: DaemonLog) {
        self.log = log
        let thread = Thread { [self] in writeUntilClosed() }
        thread.name = "topregions.serve.access-log"
        thread.start()
    }

    /// Queues a request's line.
    func record(_ record: HTTPRequestRecord) {
        condition.withLock {
            queued.append(record)
            if queued.count == 1 { condition.signal() }
        }
    }

    /// Writes what is queued, then stops the writer.
    func close() {
        condition.withLock {
            closing = true
            condition.broadcast()
            while !finished { condition.wait() }
        }
    }

    private func writeUntilClosed() {
        while true {
            let (records, last) = condition.withLock { () -> ([HTTPRequestRecord], Bool) in
                while queued.isEmpty && !closing { condition.wait() }
                defer { queued.removeAll(keepingCapacity: true) }
                return (queued, closing)
            }
            for record in records { log.request(record) }
            if last {
                condition.withLock {
                    finished = true
                    condition.broadcast()
                }
                return
            }
        }
    }
}
