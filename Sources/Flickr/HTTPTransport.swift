import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP through URLSession (libcurl underneath on Linux). Bodies are streamed and the
/// transfer is cancelled as soon as it passes the size limit, so an endless or huge
/// response cannot exhaust memory.
public final class HTTPTransport: FlickrTransport {
    private let session: URLSession
    private let delegate: TransferDelegate

    public init() {
        let delegate = TransferDelegate()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["User-Agent": "TopRegions/1.0 (Swift; Linux)"]
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit { session.invalidateAndCancel() }

    public func get(_ url: URL, timeout: TimeInterval, maximumBytes: Int) async throws -> TransportResponse {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "GET"
        let task = session.dataTask(with: request)
        let delegate = self.delegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.begin(task, maximumBytes: maximumBytes, continuation: continuation)
                task.resume()
                // URLSession on Linux does not always enforce the request's timeout; this
                // deadline covers the whole exchange.
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                    delegate.fail(task, FlickrError(.timeout, "no complete answer within \(timeout) s"))
                    task.cancel()
                }
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// Collects each transfer's bytes and resumes its caller once.
///
/// `@unchecked Sendable`: URLSession calls it on its own queue while callers register
/// tasks from theirs; `transfers` is guarded by `lock`.
private final class TransferDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Transfer {
        var continuation: CheckedContinuation<TransportResponse, Error>
        var maximumBytes: Int
        var body = Data()
        var response: HTTPURLResponse?
    }

    private let lock = NSLock()
    private var transfers: [Int: Transfer] = [:]

    func begin(_ task: URLSessionTask, maximumBytes: Int, continuation: CheckedContinuation<TransportResponse, Error>) {
        lock.lock()
        transfers[task.taskIdentifier] = Transfer(continuation: continuation, maximumBytes: maximumBytes)
        lock.unlock()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.lock()
        transfers[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse
        let limit = transfers[dataTask.taskIdentifier]?.maximumBytes ?? Int.max
        lock.unlock()
        if response.expectedContentLength > Int64(limit) {
            fail(dataTask, tooLarge(limit))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        guard var transfer = transfers[dataTask.taskIdentifier] else {
            lock.unlock()
            return
        }
        transfer.body.append(data)
        let exceeded = transfer.body.count > transfer.maximumBytes
        transfers[dataTask.taskIdentifier] = transfer
        lock.unlock()
        if exceeded {
            fail(dataTask, tooLarge(transfer.maximumBytes))
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock()
        let transfer = transfers.removeValue(forKey: task.taskIdentifier)
        lock.unlock()
        guard let transfer else { return }
        if let error {
            transfer.continuation.resume(throwing: Self.flickrError(error))
            return
        }
        guard let response = transfer.response ?? task.response as? HTTPURLResponse else {
            transfer.continuation.resume(throwing: FlickrError(.transport, "the server sent no HTTP response"))
            return
        }
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        transfer.continuation.resume(returning: TransportResponse(status: response.statusCode, headers: headers, body: transfer.body))
    }

    func fail(_ task: URLSessionTask, _ error: FlickrError) {
        lock.lock()
        let transfer = transfers.removeValue(forKey: task.taskIdentifier)
        lock.unlock()
        transfer?.continuation.resume(throwing: error)
    }

    private func tooLarge(_ limit: Int) -> FlickrError {
        FlickrError(.responseTooLarge, "the response is larger than the limit of \(limit) bytes; refused")
    }

    /// URLSession's errors, without their text (which can quote the URL, and so the key).
    private static func flickrError(_ error: Error) -> Error {
        if error is CancellationError { return error }
        guard let urlError = error as? URLError else {
            return FlickrError(.transport, "the request failed")
        }
        switch urlError.code {
        case .timedOut: return FlickrError(.timeout, "no answer before the timeout")
        case .cancelled: return CancellationError()
        case .cannotConnectToHost: return FlickrError(.transport, "cannot connect to the server")
        case .cannotFindHost, .dnsLookupFailed: return FlickrError(.transport, "cannot find the server (DNS)")
        case .networkConnectionLost: return FlickrError(.transport, "the connection was lost")
        case .notConnectedToInternet: return FlickrError(.transport, "no network connection")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate:
            return FlickrError(.transport, "the TLS connection failed")
        default: return FlickrError(.transport, "the request failed (URL error \(urlError.code.rawValue))")
        }
    }
}
