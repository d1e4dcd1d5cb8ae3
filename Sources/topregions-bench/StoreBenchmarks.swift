import CSQLite
import Foundation
import Store

/// `store.insert` and `store.fetch`: the store against raw SQLite prepared statements on
/// the same schema, the same file settings and the same values.
enum StoreBenchmarks {
    static let scenarios = [
        Scenario(name: "store.insert", summary: "insert N photo-like records in one transaction, vs raw SQLite") { quick in
            try insert(n: quick ? 10_000 : 100_000, runs: quick ? 1 : 3)
        },
        Scenario(name: "store.fetch", summary: "fetch N photo-like records by a sorted query, vs raw SQLite") { quick in
            try fetch(n: quick ? 10_000 : 100_000, runs: quick ? 1 : 3)
        },
    ]

    static let regionCount = 100

    static func insert(n: Int, runs: Int) throws -> [Figure] {
        let photos = BenchPhoto.generate(count: n, regions: regionCount)
        return try withScratchDirectory { directory in
            var storeRun = 0
            var storePath = ""
            let ours = try medianSeconds(runs: runs, setUp: {
                storeRun += 1
                storePath = directory.appendingPathComponent("store-\(storeRun).sqlite").path
                try makeStore(at: storePath).close()
            }) {
                let store = try makeStore(at: storePath)
                try store.write { transaction in
                    for photo in photos { try transaction.inserted(photo) }
                }
            }
            var rawRun = 0
            var rawPath = ""
            let raw = try medianSeconds(runs: runs, setUp: {
                rawRun += 1
                rawPath = directory.appendingPathComponent("raw-\(rawRun).sqlite").path
                try makeStore(at: rawPath).close()
            }) {
                try RawSQLite.insert(photos, at: rawPath)
            }
            return [Figure(scenario: "store.insert", n: n, seconds: ours, baseline: "raw SQLite prepared statements",
                           baselineSeconds: raw, extra: ["store": "sqlite", "perSecond": Double(n) / ours, "baselinePerSecond": Double(n) / raw])]
        }
    }

    static func fetch(n: Int, runs: Int) throws -> [Figure] {
        let photos = BenchPhoto.generate(count: n, regions: regionCount)
        return try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("fetch.sqlite").path
            let store = try makeStore(at: path)
            try store.write { transaction in
                for photo in photos { try transaction.inserted(photo) }
            }
            let request = FetchRequest(BenchPhoto.self, sortDescriptors: [SortKey("uploaded", ascending: false)])
            var fetched = 0
            let ours = try medianSeconds(runs: runs) {
                fetched = try store.read { try $0.fetch(request, as: BenchPhoto.self) }.count
            }
            var rawFetched = 0
            let raw = try medianSeconds(runs: runs) {
                rawFetched = try RawSQLite.fetchSortedByUpload(at: path).count
            }
            guard fetched == n, rawFetched == n else {
                throw StoreError(.invalidRequest, "fetched \(fetched) and \(rawFetched) of \(n) records")
            }
            return [Figure(scenario: "store.fetch", n: n, seconds: ours, baseline: "raw SQLite prepared statements",
                           baselineSeconds: raw, extra: ["store": "sqlite", "perSecond": Double(n) / ours, "baselinePerSecond": Double(n) / raw])]
        }
    }

    static func makeStore(at path: String) throws -> Store {
        var migrator = Migrator.creating([BenchRegion.entity, BenchPhoto.entity], name: "bench.v1")
        migrator.register("bench.regions") { transaction in
            for index in 1...regionCount {
                try transaction.execute("INSERT INTO BenchRegion (id, name) VALUES (?, ?)", [.integer(Int64(index)), .text("Region \(index)")])
            }
        }
        return try Store(path: path, schema: Schema([BenchRegion.entity, BenchPhoto.entity]), migrator: migrator)
    }
}

struct BenchRegion {
    static let entity = Entity("BenchRegion", attributes: [Attribute("name", .text)],
                               relationships: [.toMany("photos", "BenchPhoto", inverse: "region")])
}

/// A record the shape of a Flickr photo: twelve stored columns, two indexes (the unique
/// Flickr id and the region's foreign key), declared as the product's records are.
struct BenchPhoto: TableRecord {
    static let table = RecordTable<BenchPhoto>("BenchPhoto", columns: [
        .column("flickrID", \.flickrID, unique: true),
        .column("title", \.title),
        .column("subtitle", \.subtitle),
        .column("ownerID", \.ownerID),
        .column("ownerName", \.ownerName),
        .column("uploaded", \.uploaded),
        .column("latitude", \.latitude),
        .column("longitude", \.longitude),
        .column("server", \.server),
        .column("secret", \.secret),
        .column("views", \.views),
        .toOne("region", "BenchRegion", \.regionID, inverse: "photos"),
    ])

    static var columns: [String] { entity.storedColumns }

    var id: Int64?
    var flickrID = ""
    var title = ""
    var subtitle = ""
    var ownerID = ""
    var ownerName = ""
    var uploaded = 0.0
    var latitude = 0.0
    var longitude = 0.0
    var server = ""
    var secret = ""
    var views: Int64 = 0
    var regionID: Int64 = 0

    init() {}

    init(id: Int64?, flickrID: String, title: String, subtitle: String, ownerID: String, ownerName: String, uploaded: Double,
         latitude: Double, longitude: Double, server: String, secret: String, views: Int64, regionID: Int64) {
        self.id = id
        self.flickrID = flickrID
        self.title = title
        self.subtitle = subtitle
        self.ownerID = ownerID
        self.ownerName = ownerName
        self.uploaded = uploaded
        self.latitude = latitude
        self.longitude = longitude
        self.server = server
        self.secret = secret
        self.views = views
        self.regionID = regionID
    }

    /// Deterministic photos with realistic lengths of text.
    static func generate(count: Int, regions: Int) -> [BenchPhoto] {
        (0..<count).map { photo(index: $0, regions: regions) }
    }

    private static func photo(index: Int, regions: Int) -> BenchPhoto {
        let uploaded: Double = 1_700_000_000 + Double((index * 7919) % 1_000_003)
        let latitude: Double = Double(index % 180) - 89.5
        let longitude: Double = Double(index % 360) - 179.75
        let secret = String(index &* 2_654_435_761 % 0xff_ffff_ffff, radix: 16)
        return BenchPhoto(id: nil, flickrID: String(53_300_000_000 + index * 7), title: "IMG \(index % 9973) at dusk",
                          subtitle: "From the headlands, photo \(index)", ownerID: "\(10_000 + index % 5000)@N0\(index % 9)",
                          ownerName: "Photographer \(index % 5000)", uploaded: uploaded, latitude: latitude, longitude: longitude,
                          server: "65535", secret: secret, views: Int64(index % 1000), regionID: Int64(index % regions + 1))
    }
}

/// The baseline: what a programmer writes against the C API directly.
enum RawSQLite {
    static func open(_ path: String) throws -> OpaquePointer {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
            throw StoreError(.sqlite, "cannot open \(path)")
        }
        sqlite3_exec(handle, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", nil, nil, nil)
        // The product's indexes use the store's collations.
        Store.registerFunctions(on: handle)
        return handle
    }

    static func check(_ result: Int32, _ handle: OpaquePointer) throws {
        guard result == SQLITE_OK || result == SQLITE_DONE || result == SQLITE_ROW else {
            throw StoreError(.sqlite, String(cString: sqlite3_errmsg(handle)), resultCode: ResultCode(rawValue: result))
        }
    }

    /// Runs `statements` on the file at `path` in one transaction (nothing when empty).
    static func execute(_ statements: [String], path: String) throws {
        guard !statements.isEmpty else { return }
        let db = try open(path)
        defer { sqlite3_close_v2(db) }
        try check(sqlite3_exec(db, (["BEGIN IMMEDIATE"] + statements + ["COMMIT"]).joined(separator: ";\n"), nil, nil, nil), db)
    }

    static func insert(_ photos: [BenchPhoto], at path: String) throws {
        let db = try open(path)
        defer { sqlite3_close_v2(db) }
        let sql = "INSERT INTO BenchPhoto (\(BenchPhoto.columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: BenchPhoto.columns.count).joined(separator: ", ")))"
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(db, sql, -1, &statement, nil), db)
        defer { sqlite3_finalize(statement) }
        try check(sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil), db)
        let transient = topregions_sqlite_transient()
        for photo in photos {
            sqlite3_bind_text(statement, 1, photo.flickrID, -1, transient)
            sqlite3_bind_text(statement, 2, photo.title, -1, transient)
            sqlite3_bind_text(statement, 3, photo.subtitle, -1, transient)
            sqlite3_bind_text(statement, 4, photo.ownerID, -1, transient)
            sqlite3_bind_text(statement, 5, photo.ownerName, -1, transient)
            sqlite3_bind_double(statement, 6, photo.uploaded)
            sqlite3_bind_double(statement, 7, photo.latitude)
            sqlite3_bind_double(statement, 8, photo.longitude)
            sqlite3_bind_text(statement, 9, photo.server, -1, transient)
            sqlite3_bind_text(statement, 10, photo.secret, -1, transient)
            sqlite3_bind_int64(statement, 11, photo.views)
            sqlite3_bind_int64(statement, 12, photo.regionID)
            try check(sqlite3_step(statement), db)
            sqlite3_reset(statement)
        }
        try check(sqlite3_exec(db, "COMMIT", nil, nil, nil), db)
    }

    static func fetchSortedByUpload(at path: String) throws -> [BenchPhoto] {
        let db = try open(path)
        defer { sqlite3_close_v2(db) }
        let sql = "SELECT id, \(BenchPhoto.columns.joined(separator: ", ")) FROM BenchPhoto ORDER BY uploaded DESC, id"
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(db, sql, -1, &statement, nil), db)
        defer { sqlite3_finalize(statement) }
        func text(_ column: Int32) -> String {
            guard let pointer = sqlite3_column_text(statement, column) else { return "" }
            return String(cString: pointer)
        }
        var photos: [BenchPhoto] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            photos.append(BenchPhoto(id: sqlite3_column_int64(statement, 0), flickrID: text(1), title: text(2), subtitle: text(3),
                                     ownerID: text(4), ownerName: text(5), uploaded: sqlite3_column_double(statement, 6),
                                     latitude: sqlite3_column_double(statement, 7), longitude: sqlite3_column_double(statement, 8),
                                     server: text(9), secret: text(10), views: sqlite3_column_int64(statement, 11),
                                     regionID: sqlite3_column_int64(statement, 12)))
        }
        return photos
    }
}
