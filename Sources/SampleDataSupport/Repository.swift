import Foundation

/// Paths in the repository, found from this file's own path, for tests, fixtures and the
/// benchmark harness (which all run from a checkout; the product itself never uses this).
public enum Repository {
    /// The checkout's top folder, the one holding `Package.swift`.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The bundled Flickr responses and their generator.
    public static let sampleData = root.appendingPathComponent("SampleData")
    /// The Flickr-compatible test server.
    public static let flickrServer = root.appendingPathComponent("Tests/Fixtures/FlickrServer/flickr_server.py")
}
