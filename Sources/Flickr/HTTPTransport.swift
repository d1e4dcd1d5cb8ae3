import CCurlTransfer
import Foundation

/// HTTP through libcurl, loaded only when the first request is made (see
/// `curl_transfer.h`): a command that never goes to the network starts without it.
///
/// Each request runs on a thread of its own while the caller awaits; the whole exchange
/// has one deadline (libcurl's total timeout); bodies are collected as they arrive and the
/// transfer is stopped as soon as they pass the size limit, so an endless or huge
/// response cannot exhaust memory; redirects are followed (at most 5, HTTP and HTTPS only).
public final class HTTPTransport: FlickrTransport {
    static let userAgent = "TopRegions/1.0 (Swift; Linux)"

    /// A transport; libcurl is not loaded until the first request.
    public init() {}

    /// GETs `url` over libcurl within `timeout` seconds, refusing a body over `maximumBytes`.
    public func get(_ url: URL, timeout: TimeInterval, maximumBytes: Int) async throws -> TransportResponse {
        let cancellation = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let thread = Thread {
                    continuation.resume(with: Self.transfer(url, timeout: timeout, maximumBytes: maximumBytes, cancellation: cancellation))
                }
                thread.name = "topregions.http"
                thread.start()
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// One blocking transfer, its outcome as a response or a `FlickrError`.
    private static func transfer(_ url: URL, timeout: TimeInterval, maximumBytes: Int,
                                 cancellation: CancellationFlag) -> Result<TransportResponse, Error> {
        var result = tr_transfer_result()
        defer { tr_transfer_free(&result) }
        let timeoutMilliseconds = max(1, Int(timeout * 1000))
        let outcome = tr_transfer_get(url.absoluteString, userAgent, timeoutMilliseconds, max(0, maximumBytes), cancellation.pointer, &result)
        switch outcome {
        case TR_TRANSFER_OK:
            let body = result.body.map { Data(bytes: $0, count: result.body_length) } ?? Data()
            return .success(TransportResponse(status: result.status, headers: headers(result), body: body))
        case TR_TRANSFER_CANCELLED:
            return .failure(CancellationError())
        default:
            let words = withUnsafeBytes(of: result.curl_message) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            return .failure(error(for: outcome, curlCode: result.curl_code, curlWords: words, timeout: timeout, maximumBytes: maximumBytes))
        }
    }

    /// "Name: value" lines of the last response; the status line and folded or malformed
    /// lines are skipped.
    private static func headers(_ result: tr_transfer_result) -> [String: String] {
        guard let bytes = result.headers, result.headers_length > 0 else { return [:] }
        let text = String(decoding: UnsafeRawBufferPointer(start: bytes, count: result.headers_length), as: UTF8.self)
        var headers: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":"), !line.hasPrefix("HTTP/") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty && headers[name] == nil { headers[name] = value }
        }
        return headers
    }

    /// The transfer's failure in the client's terms, without libcurl's error buffer (which
    /// can quote the URL, and so the key); `curlWords` is curl_easy_strerror's fixed text
    /// for the code, which quotes nothing.
    private static func error(for outcome: tr_transfer_outcome, curlCode: Int32, curlWords: String, timeout: TimeInterval,
                              maximumBytes: Int) -> FlickrError {
        switch outcome {
        case TR_TRANSFER_TIMEOUT: return FlickrError(.timeout, "no complete answer within \(timeout) s")
        case TR_TRANSFER_TOO_LARGE: return FlickrError(.responseTooLarge, "the response is larger than the limit of \(maximumBytes) bytes; refused")
        case TR_TRANSFER_CANNOT_CONNECT: return FlickrError(.transport, "cannot connect to the server")
        case TR_TRANSFER_CANNOT_RESOLVE: return FlickrError(.transport, "cannot find the server (DNS)")
        case TR_TRANSFER_CONNECTION_LOST: return FlickrError(.transport, "the connection was lost before the answer was complete")
        case TR_TRANSFER_TLS: return FlickrError(.transport, "the TLS connection failed")
        case TR_TRANSFER_NO_LIBCURL:
            // The machine's configuration, not a passing failure: not worth a retry.
            return FlickrError(.invalidRequest, "HTTP needs libcurl, which could not be loaded (\(String(cString: tr_transfer_load_error()))); "
                               + "install Debian's libcurl4, or name another build in TOPREGIONS_LIBCURL")
        default:
            let words = curlWords.isEmpty ? "" : curlWords.prefix(1).lowercased() + curlWords.dropFirst() + ", "
            return FlickrError(.transport, "the request failed (\(words)libcurl error \(curlCode))")
        }
    }
}

/// A flag the transfer's thread polls (libcurl's progress callback) and a task's
/// cancellation handler sets.
///
/// `@unchecked Sendable`: one `CInt`, written by the canceller and read by the transfer's
/// thread; a stale read only delays the cancellation to the next progress callback.
private final class CancellationFlag: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<CInt>

    init() {
        pointer = UnsafeMutablePointer<CInt>.allocate(capacity: 1)
        pointer.initialize(to: 0)
    }

    deinit { pointer.deallocate() }

    /// A single aligned word written once; the C side reads it as `volatile`.
    func cancel() { pointer.pointee = 1 }
}
