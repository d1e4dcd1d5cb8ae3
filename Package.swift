// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "TopRegions",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Store", targets: ["Store"]),
        .library(name: "Flickr", targets: ["Flickr"]),
        .library(name: "ImageCodec", targets: ["ImageCodec"]),
        .library(name: "ResultsController", targets: ["ResultsController"]),
        .library(name: "TopRegionsKit", targets: ["TopRegionsKit"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "GalleryAPI", targets: ["GalleryAPI"]),
        .library(name: "PostgreSQL", targets: ["PostgreSQL"]),
        .library(name: "PostgresStore", targets: ["PostgresStore"]),
        .executable(name: "topregions", targets: ["topregions"]),
        .executable(name: "topregions-bench", targets: ["topregions-bench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // _FoundationICU: the toolchain's ICU (inside Foundation), whose collator orders
        // the `localizedStandard` collation.
        .target(name: "Store", dependencies: ["CSQLite"], linkerSettings: [.linkedLibrary("_FoundationICU")]),
        // libpq, Debian's libpq-dev: the client of PostgreSQL stores.
        .systemLibrary(
            name: "CPostgreSQL",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // A connection to PostgreSQL: statements prepared once per connection, transactions
        // retried on serialization failures, LISTEN/NOTIFY, advisory locks.
        .target(name: "PostgreSQL", dependencies: ["CPostgreSQL"]),
        // A gallery's store in PostgreSQL: its schema, version, copies in and out.
        .target(name: "PostgresStore", dependencies: ["Store", "PostgreSQL"]),
        // libcurl, loaded with dlopen on the first HTTP request (its headers are needed to
        // build; the library only at run time, and only by processes that go online).
        .target(name: "CCurlTransfer", linkerSettings: [.linkedLibrary("dl")]),
        // libjpeg-turbo, Debian's libjpeg62-turbo-dev: images are decoded whole before they are
        // kept, resized, and SampleData's pictures are encoded with it.
        .systemLibrary(
            name: "CJPEG",
            pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"])]
        ),
        // libjpeg behind a plain C API (its errors jump back with setjmp instead of exiting
        // the process), a resampler, and SampleData's picture drawing. Optimised in debug
        // builds too: the pictures are drawn pixel by pixel, and the tests draw thousands.
        .target(name: "CImageCodec", dependencies: ["CJPEG"], cSettings: [.unsafeFlags(["-O2"], .when(configuration: .debug))]),
        // JPEG decoding, encoding and resizing for Swift.
        .target(name: "ImageCodec", dependencies: ["CImageCodec"]),
        .target(name: "Flickr", dependencies: ["CCurlTransfer", "ImageCodec", "CImageCodec"]),
        // mallopt, which Swift's Glibc module does not import: the daemon caps its arenas.
        .target(name: "CProcessMemory"),
        .target(name: "ResultsController", dependencies: ["Store"]),
        // SHA-256 from libcrypto, loaded with dlopen: API tokens are kept only as hashes.
        .target(name: "CDigest", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "TopRegionsKit", dependencies: ["Store", "ResultsController", "Flickr", "CDigest", "PostgreSQL", "PostgresStore"]),
        // libmicrohttpd's header (the library itself is loaded with dlopen by CHTTPServer).
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .target(name: "CHTTPServer", dependencies: ["CMicroHTTPD"], linkerSettings: [.linkedLibrary("dl")]),
        // An HTTP/1.1 server on libmicrohttpd: requests in, responses and event streams out.
        .target(name: "HTTPServer", dependencies: ["CHTTPServer", "CMicroHTTPD"]),
        // The gallery's HTTP API: routes, JSON, users' tokens, live lists as event streams.
        .target(name: "GalleryAPI", dependencies: ["HTTPServer", "TopRegionsKit", "ResultsController", "Store", "CDigest", "Flickr"]),
        .executableTarget(
            name: "topregions",
            dependencies: ["TopRegionsKit", "ResultsController", "Store", "Flickr", "CProcessMemory", "GalleryAPI", "HTTPServer", "PostgreSQL", "PostgresStore"]
        ),
        // Depends on the tool too, so that `swift run topregions-bench` builds the
        // `topregions` that cli.regions and daemon.memory run.
        .executableTarget(
            name: "topregions-bench",
            dependencies: ["Store", "ResultsController", "TopRegionsKit", "Flickr", "CSQLite", "SampleDataSupport", "topregions", "CBenchStreams",
                           "PostgreSQL", "PostgresStore", "TestSupport"]
        ),
        // http.fanout's 10,000 subscribers: libcurl's multi interface, linked (bench only).
        .target(name: "CBenchStreams", linkerSettings: [.linkedLibrary("curl")]),
        // What tests and the benchmark harness share: the repository's paths and SampleData's
        // generator (in Sources, because the benchmarks, a product, depend on it).
        .target(name: "SampleDataSupport"),
        // The one test-support target: temporary directories, waiting for events, seeds,
        // fixture processes, a small photo-like schema, the Flickr test server's driver.
        .target(
            name: "TestSupport",
            dependencies: ["Store", "SampleDataSupport", "Flickr", "ResultsController", "PostgresStore"],
            path: "Tests/Fixtures/TestSupport"
        ),
        // A child process for the store's crash and multi-process tests: it writes
        // transactions in a loop until it is killed.
        .executableTarget(
            name: "store-fixture-writer",
            dependencies: ["Store", "TestSupport", "PostgreSQL", "PostgresStore"],
            path: "Tests/Fixtures/StoreFixtureWriter"
        ),
        // A child process for the sync's crash tests: a large sync, killed part way.
        .executableTarget(
            name: "gallery-fixture",
            dependencies: ["TopRegionsKit", "Flickr", "Store"],
            path: "Tests/Fixtures/GalleryFixture"
        ),
        .testTarget(
            name: "FlickrTests",
            dependencies: ["Flickr", "TestSupport", "SampleDataSupport", "ImageCodec"]
        ),
        .testTarget(
            name: "ImageCodecTests",
            dependencies: ["ImageCodec"]
        ),
        .testTarget(
            name: "ResultsControllerTests",
            dependencies: ["ResultsController", "Store", "TestSupport", "SampleDataSupport", "PostgresStore"]
        ),
        .testTarget(
            name: "TopRegionsKitTests",
            dependencies: ["TopRegionsKit", "Flickr", "ResultsController", "Store", "TestSupport", "CSQLite", "gallery-fixture", "SampleDataSupport",
                           "PostgreSQL", "PostgresStore", "ImageCodec"]
        ),
        .testTarget(
            name: "CLITests",
            dependencies: ["TestSupport", "SampleDataSupport", "TopRegionsKit", "ResultsController", "Store", "topregions", "ImageCodec"]
        ),
        .testTarget(
            name: "GalleryAPITests",
            dependencies: ["GalleryAPI", "HTTPServer", "TopRegionsKit"]
        ),
        .testTarget(
            name: "PostgreSQLTests",
            dependencies: ["PostgreSQL", "TestSupport"]
        ),
        .testTarget(
            name: "StoreTests",
            dependencies: ["Store", "TestSupport", "CSQLite", "ResultsController", "PostgreSQL", "PostgresStore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
