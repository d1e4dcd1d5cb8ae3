import Foundation
import Store
import TopRegionsKit

/// An error as the API answers it: a status and `{"error": {"code": …, "message": …}}`.
/// Codes are stable (a contract: docs/openapi.yaml); messages are for people.
public struct APIError: Error, Sendable, Equatable {
    /// The HTTP status of the answer.
    public var status: Int
    /// A stable, machine-readable code (`not_found`, `bad_request`); clients may match on it.
    public var code: String
    /// What went wrong, for people; its wording may change.
    public var message: String
    /// Extra headers (`Allow` with a 405, `WWW-Authenticate` with a 401, `Retry-After`).
    public var headers: [Header]

    /// A header of an error response.
    public struct Header: Sendable, Equatable {
        /// The header's name.
        public var name: String
        /// The header's value.
        public var value: String
    }

    /// An error with this status, code and message, and any extra headers.
    public init(_ status: Int, _ code: String, _ message: String, headers: [Header] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    static func badRequest(_ message: String) -> APIError { APIError(400, "bad_request", message) }
    static func notFound(_ message: String) -> APIError { APIError(404, "not_found", message) }
    static func unauthorized(_ message: String) -> APIError {
        APIError(401, "unauthorized", message, headers: [Header(name: "WWW-Authenticate", value: "Bearer realm=\"topregions\"")])
    }
    static func methodNotAllowed(_ method: String, allowed: [String]) -> APIError {
        APIError(405, "method_not_allowed", "\(method) is not allowed here; allowed: \(allowed.joined(separator: ", "))",
                 headers: [Header(name: "Allow", value: allowed.joined(separator: ", "))])
    }

    /// The API's answer to an error of the gallery (or anything else thrown).
    static func from(_ error: Error) -> APIError {
        if let error = error as? APIError { return error }
        if let error = error as? StoreError { return from(error) }
        guard let error = error as? GalleryError else {
            return APIError(500, "internal", "the server failed to answer: \(error)")
        }
        switch error.kind {
        case .notFound: return APIError(404, "not_found", error.message)
        case .notAFavorite: return APIError(404, "not_a_favorite", error.message)
        case .ambiguous: return APIError(409, "ambiguous", error.description)
        case .alreadyExists: return APIError(409, "already_exists", error.message)
        case .invalidArgument: return APIError(400, "bad_request", error.message)
        case .syncRunning(let pid):
            return APIError(409, "sync_running", pid.map { "a sync pass is running (pid \($0))" } ?? "a sync pass is running")
        case .busy:
            return storeBusy
        case .noImage: return APIError(404, "no_image", error.message)
        case .source(temporary: true):
            return APIError(503, "source_unavailable", error.message, headers: [Header(name: "Retry-After", value: "30")])
        case .source(temporary: false): return APIError(502, "source_failed", error.message)
        case .noStore, .storeUnavailable, .storeUnreachable:
            // Where the store is (a path; a database's host, role and name) is not a
            // client's business: `topregions status` on the server says what is wrong.
            return APIError(503, "store_unavailable", "the store cannot be read or written now; try again",
                            headers: [Header(name: "Retry-After", value: "5")])
        }
    }

    /// The server is stopping: nothing new is begun.
    static let shuttingDown = APIError(503, "shutting_down", "the server is shutting down")

    /// Another process has held the store locked for longer than the server waits.
    /// A request that needed the store and did not get an answer within `serve --store-wait`.
    static func storeWaitedTooLong(_ seconds: TimeInterval) -> APIError {
        APIError(503, "store_unavailable", "the store did not answer within \(seconds.formatted()) s; try again",
                 headers: [Header(name: "Retry-After", value: "2")])
    }

    static let storeBusy = APIError(503, "store_unavailable", "the store is busy: another process has held it locked for longer than the server waits; try again",
                                    headers: [Header(name: "Retry-After", value: "5")])

    /// The store's own failures: another process holding it locked is a 503 that passes;
    /// the rest are 500, told without the SQL.
    private static func from(_ error: StoreError) -> APIError {
        if error.isBusy { return storeBusy }
        return APIError(500, "internal", "the store failed: \(error.message)")
    }
}
