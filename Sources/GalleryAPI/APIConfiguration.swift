import Foundation
import TopRegionsKit

/// How an API answers: who may read, which origin a browser may call from, where images
/// come from, and the limits of change streams.
public struct APIConfiguration: Sendable {
    /// Catalogue reads (regions, photos, images, status) need a user's token too.
    public var isPrivate = false
    /// The one origin browsers may call the API from (`https://gallery.example`), or `*`;
    /// nil: no CORS headers, and a cross-origin write is refused (403).
    public var corsOrigin: String?
    /// Where thumbnails and images are fetched from when the store has none.
    public var imageSource = ImageSource()
    /// Where large images are cached (bounded).
    public var imageCacheDirectory: URL
    /// Change streams open at once from one client address (429 past it).
    public var streamsPerAddress = 64
    /// Seconds between heartbeat comments on idle change streams.
    public var heartbeatSeconds: TimeInterval = 15
    /// Seconds a list stays followed after its last subscriber leaves, for clients that
    /// reconnect to resume.
    public var lingerSeconds: TimeInterval = 60
    /// The host names a request's `Host` may give (any port), lowercase; nil: any. A server
    /// on loopback answers only loopback names, so a web page whose name was made to
    /// resolve to 127.0.0.1 (DNS rebinding) cannot read or write through a browser.
    public var allowedHosts: Set<String>?
    /// With `allowedHosts`: any loopback address (127.0.0.0/8, ::1) is answered too.
    public var answersLoopbackAddresses = false
    /// Threads that answer the requests needing the store (`serve --workers`).
    public var workers = StoreWorkers.defaultCount
    /// How long a request that needs the store waits for it before it is answered 503 with
    /// `Retry-After` (`serve --store-wait`); a write already begun is waited for.
    public var storeWait: TimeInterval = 2

    /// The defaults, with large images cached in `imageCacheDirectory`.
    public init(imageCacheDirectory: URL) {
        self.imageCacheDirectory = imageCacheDirectory
    }
}
