import CSQLite
import Flickr
import Foundation
import ResultsController
import SampleDataSupport
import Store
import Synchronization
import TopRegionsKit

/// The product's own scenarios: ingesting a sync, the top-regions and region-photos
/// queries, the command-line tool, and the daemon's memory.
enum ProductBenchmarks {
    /// The stores opened by `storeBeneath`, by path.
    static let storesBeneath = Mutex<[String: Store]>([:])

    static let scenarios = [
        Scenario(name: "sync.ingest", summary: "sync N photos from JSON pages on disk (places resolved) vs raw SQLite inserts") { quick in
            try (quick ? [20_000] : [100_000, 1_000_000]).flatMap { try ingest(n: $0) }
        },
        Scenario(name: "query.topRegions", summary: "top 50 regions of a 1M-photo store vs GROUP BY … COUNT(DISTINCT)") { quick in
            try queries(photos: quick ? 50_000 : 1_000_000, regions: quick ? 1_000 : 10_000, photographers: quick ? 5_000 : 100_000)
        },
    ]

    // MARK: sync.ingest

    /// Sync and baseline alternate, `runs` times each (3 up to 100,000 photos, else 1), and
    /// the medians are compared: the machine's speed drifts between minutes.
    static func ingest(n: Int) throws -> [Figure] {
        try withScratchDirectory { directory in
            let (small, large) = try generatePages(photos: n, in: directory)
            var ours: [(seconds: Double, stored: Int)] = [], baseline: [(seconds: Double, rows: Int)] = []
            for run in 0..<(n <= 100_000 ? 3 : 1) {
                let synced = directory.appendingPathComponent("ingest-\(run).sqlite").path
                flushFileSystems()
                ours.append(try timedSync(n: n, places: small, photos: large, into: synced))
                // Baseline: the same Photo rows the sync stored, already decoded (read back
                // from the synced store, untimed), inserted with one prepared statement in one
                // transaction into a store with the same schema and the same photographers,
                // places and regions.
                let rawPath = directory.appendingPathComponent("raw-\(run).sqlite").path
                try Gallery(path: rawPath).close()
                let rows = try copyReferencedRows(from: synced, into: rawPath)
                flushFileSystems()
                baseline.append((try measure { try rawInsert(rows, path: rawPath) }, rows.values.count))
            }
            let oursMedian = ours.sorted { $0.seconds < $1.seconds }[ours.count / 2]
            let baselineMedian = baseline.sorted { $0.seconds < $1.seconds }[baseline.count / 2]
            return [Figure(scenario: "sync.ingest", n: n, seconds: oursMedian.seconds, baseline: "raw SQLite inserts of the same photo rows",
                           baselineSeconds: baselineMedian.seconds,
                           extra: ["store": "sqlite", "perSecond": Double(oursMedian.stored) / oursMedian.seconds,
                                   "baselinePerSecond": Double(baselineMedian.rows) / baselineMedian.seconds, "runs": ours.count])]
        }
    }

    /// One timed sync pass of the photos into a fresh store (whose places are resolved
    /// beforehand, untimed), checked: every photo stored, counts consistent.
    static func timedSync(n: Int, places: URL, photos: URL, into path: String) throws -> (seconds: Double, stored: Int) {
        let gallery = try Gallery(path: path)
        defer { gallery.close() }
        return try timedSync(n: n, places: places, photos: photos, into: gallery) { try gallery.check() }
    }

    /// One timed sync pass of the photos into `gallery`, a fresh one of either store (its
    /// places resolved beforehand, untimed), checked: every photo stored, and `check` finds
    /// no problem.
    static func timedSync(n: Int, places: URL, photos: URL, into gallery: any GallerySyncing,
                          check: @escaping @Sendable () throws -> [String]) throws -> (seconds: Double, stored: Int) {
        try blockingAsync {
            _ = try await gallery.sync(client: FlickrClient(configuration: FlickrConfiguration(), transport: try SampleDataTransport(directory: places)))
            let count = { try gallery.readableStore.read { try $0.count(FetchRequest(PhotoRecord.self)) } }
            let before = try count()
            var options = SyncOptions(pages: n / 500 + 1, perPage: 500)
            options.overlap = 100 * 365 * 86_400
            let client = FlickrClient(configuration: FlickrConfiguration(), transport: try SampleDataTransport(directory: photos))
            let started = Date()
            let result = try await gallery.sync(client: client, options: options)
            let elapsed = Date().timeIntervalSince(started)
            // A few of the place-resolving set's ids recur in the large set: they are known.
            let stored = try count()
            guard result.outcome == .newData, stored >= n else { throw StoreError(.invalidRequest, "stored \(stored) of \(n) photos: \(result.error ?? "")") }
            guard try check().isEmpty else { throw StoreError(.invalidRequest, "counts do not match after the ingest") }
            return (elapsed, stored - before)
        }
    }

    /// Generated pages in `directory`: 1,200 photos whose places a first sync resolves, and
    /// `photos` photos to time.
    static func generatePages(photos: Int, in directory: URL) throws -> (places: URL, photos: URL) {
        let small = directory.appendingPathComponent("places"), large = directory.appendingPathComponent("photos")
        try SampleDataGenerator.generateJSONPages(photos: 1_200, into: small)
        try SampleDataGenerator.generateJSONPages(photos: photos, into: large)
        return (small, large)
    }

    /// The photo rows of a synced store, decoded, with the rows they refer to copied into
    /// the store at `path` (which must have the same schema).
    static func copyReferencedRows(from synced: String, into path: String) throws -> (columns: [String], values: [[SQLValue]]) {
        let rows = try photoRows(of: synced)
        try copyReferences(from: synced, into: path)
        return rows
    }

    /// The `Photo` rows of a synced store, decoded, in id order.
    static func photoRows(of synced: String) throws -> (columns: [String], values: [[SQLValue]]) {
        let gallery = try Gallery(path: synced)
        defer { gallery.close() }
        let rows = try Self.storeBeneath(gallery).read { try $0.rows("SELECT * FROM Photo ORDER BY id") }
        return (rows.first?.columnNames ?? [], rows.map(\.values))
    }

    /// Copies the regions, places and photographers that photo rows refer to from a synced
    /// store into the store at `path` (which must have the same schema).
    static func copyReferences(from synced: String, into path: String) throws {
        let db = try RawSQLite.open(path)
        defer { sqlite3_close_v2(db) }
        try RawSQLite.check(sqlite3_exec(db, "ATTACH DATABASE '\(synced)' AS synced", nil, nil, nil), db)
        for table in ["Region", "Place", "Photographer"] {
            try RawSQLite.check(sqlite3_exec(db, "INSERT INTO main.\(table) SELECT * FROM synced.\(table)", nil, nil, nil), db)
        }
        try RawSQLite.check(sqlite3_exec(db, "DETACH DATABASE synced", nil, nil, nil), db)
    }

    /// Inserts `rows` with one prepared statement, committing every `rowsPerCommit` rows
    /// (by default all in one transaction).
    static func rawInsert(_ rows: (columns: [String], values: [[SQLValue]]), path: String, rowsPerCommit: Int = .max) throws {
        let db = try RawSQLite.open(path)
        defer { sqlite3_close_v2(db) }
        var statement: OpaquePointer?
        let sql = "INSERT INTO Photo (\(rows.columns.joined(separator: ", "))) VALUES (\(rows.columns.map { _ in "?" }.joined(separator: ", ")))"
        try RawSQLite.check(sqlite3_prepare_v2(db, sql, -1, &statement, nil), db)
        defer { sqlite3_finalize(statement) }
        try RawSQLite.check(sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil), db)
        let transient = topregions_sqlite_transient()
        for (number, row) in rows.values.enumerated() {
            if number > 0 && number % rowsPerCommit == 0 {
                try RawSQLite.check(sqlite3_exec(db, "COMMIT; BEGIN IMMEDIATE", nil, nil, nil), db)
            }
            for (index, value) in row.enumerated() {
                let position = Int32(index + 1)
                switch value {
                case .null: sqlite3_bind_null(statement, position)
                case .integer(let integer): sqlite3_bind_int64(statement, position, integer)
                case .real(let real): sqlite3_bind_double(statement, position, real)
                case .text(let text): sqlite3_bind_text(statement, position, text, -1, transient)
                case .blob(let bytes): sqlite3_bind_blob(statement, position, bytes, Int32(bytes.count), transient)
                }
            }
            try RawSQLite.check(sqlite3_step(statement), db)
            sqlite3_reset(statement)
        }
        try RawSQLite.check(sqlite3_exec(db, "COMMIT", nil, nil, nil), db)
    }

    // MARK: query.topRegions, query.regionPhotos, cli.regions

    /// A store with the given shape, written directly (a sync would take long): photos spread
    /// over regions with a skew, one region holding 10,000 photos, counts computed by SQL.
    static func buildStore(path: String, photos: Int, regions: Int, photographers: Int) throws {
        try Gallery(path: path).close()
        let db = try RawSQLite.open(path)
        defer { sqlite3_close_v2(db) }
        var random = BenchRandom(state: 42)
        try RawSQLite.check(sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil), db)
        func exec(_ sql: String) throws { try RawSQLite.check(sqlite3_exec(db, sql, nil, nil, nil), db) }
        var statement: OpaquePointer?
        let transient = topregions_sqlite_transient()
        try RawSQLite.check(sqlite3_prepare_v2(db, "INSERT INTO Region (id, placeID, name, country, searchName) VALUES (?, ?, ?, ?, ?)", -1, &statement, nil), db)
        var regionNames: [(name: String, country: String)] = [("", "")]
        for index in 1...regions {
            let name = "Region \(index % 997) \(["Nord", "Süd", "東", "West"][index % 4])", country = "Country \(index % 50)"
            regionNames.append((name, country))
            sqlite3_bind_int64(statement, 1, Int64(index))
            sqlite3_bind_text(statement, 2, "region\(index)", -1, transient)
            sqlite3_bind_text(statement, 3, name, -1, transient)
            sqlite3_bind_text(statement, 4, country, -1, transient)
            sqlite3_bind_text(statement, 5, SearchTerms.column(name, country), -1, transient)
            try RawSQLite.check(sqlite3_step(statement), db)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        try RawSQLite.check(sqlite3_prepare_v2(db, "INSERT INTO Photographer (id, ownerID, name) VALUES (?, ?, ?)", -1, &statement, nil), db)
        for index in 1...photographers {
            sqlite3_bind_int64(statement, 1, Int64(index))
            sqlite3_bind_text(statement, 2, "\(index)@N01", -1, transient)
            sqlite3_bind_text(statement, 3, "Photographer \(index)", -1, transient)
            try RawSQLite.check(sqlite3_step(statement), db)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        // The search columns as the gallery writes them (`SearchIndex`): the title's terms,
        // then the photographer's and the region's.
        try RawSQLite.check(sqlite3_prepare_v2(db, "INSERT INTO Photo (flickrID, flickrNumber, title, subtitle, photoDescription, downloaded, region_id, photographer_id, searchTitle, searchText) VALUES (?, ?, ?, '', '', ?, ?, ?, ?, ?)", -1, &statement, nil), db)
        let now = Date().timeIntervalSince1970
        for index in 0..<photos {
            // Region 1 gets 10,000 photos; the rest follow a skew.
            let region = index < 10_000 ? 1 : 2 + Int(Double(regions - 2) * pow(Double.random(in: 0..<1, using: &random), 2))
            sqlite3_bind_text(statement, 1, String(53_000_000_000 + index), -1, transient)
            sqlite3_bind_int64(statement, 2, Int64(53_000_000_000 + index))
            let title = "IMG \(Int.random(in: 0..<5000, using: &random)) \(["été", "Tokyo", "東京", ""][index % 4])"
            sqlite3_bind_text(statement, 3, title, -1, transient)
            sqlite3_bind_double(statement, 4, now)
            sqlite3_bind_int64(statement, 5, Int64(region))
            let photographer = Int64.random(in: 1...Int64(photographers), using: &random)
            sqlite3_bind_int64(statement, 6, photographer)
            sqlite3_bind_text(statement, 7, SearchTerms.column(title), -1, transient)
            sqlite3_bind_text(statement, 8, SearchTerms.column("", "Photographer \(photographer)", regionNames[region].name, regionNames[region].country),
                              -1, transient)
            try RawSQLite.check(sqlite3_step(statement), db)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        try exec("INSERT INTO RegionPhotographer (region_id, photographer_id, photoCount) SELECT region_id, photographer_id, count(*) FROM Photo GROUP BY region_id, photographer_id")
        try exec("UPDATE Region SET photoCount = (SELECT count(*) FROM Photo p WHERE p.region_id = Region.id), photographerCount = (SELECT count(*) FROM RegionPhotographer l WHERE l.region_id = Region.id)")
        try exec("COMMIT")
        try exec("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    static let naiveTopRegions = """
        SELECT r.placeID, r.name, count(DISTINCT p.photographer_id) AS photographers, count(*) AS photos
        FROM Photo p JOIN Region r ON r.id = p.region_id
        GROUP BY p.region_id ORDER BY photographers DESC, r.name, r.placeID LIMIT 50
        """

    static func queries(photos: Int, regions: Int, photographers: Int) throws -> [Figure] {
        try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("query.sqlite").path
            try buildStore(path: path, photos: photos, regions: regions, photographers: photographers)
            flushFileSystems()
            let gallery = try Gallery(path: path)
            defer { gallery.close() }
            var figures: [Figure] = []
            // Top regions: the indexed query against the naive GROUP BY.
            var top: [RegionSummary] = []
            let ours = try medianSeconds(runs: 21) { top = try gallery.topRegions() }
            let controllerFetch = try medianSeconds(runs: 11) {
                let controller = try gallery.topRegionsController()
                try controller.performFetch()
            }
            var naive: [Row] = []
            let baseline = try medianSeconds(runs: 3) {
                naive = try Self.storeBeneath(gallery).read { try $0.rows(naiveTopRegions) }
            }
            guard top.map(\.photographers) == naive.compactMap({ $0[2].int64 }).map(Int.init) else {
                throw StoreError(.invalidRequest, "the top regions disagree with the naive query")
            }
            figures.append(Figure(scenario: "query.topRegions", n: photos, seconds: ours, baseline: "GROUP BY region COUNT(DISTINCT photographer)",
                                  baselineSeconds: baseline, extra: ["store": "sqlite", "regions": regions, "photographers": photographers]))
            figures.append(Figure(scenario: "query.topRegions.performFetch", n: photos, seconds: controllerFetch,
                                  baseline: "GROUP BY region COUNT(DISTINCT photographer)", baselineSeconds: baseline, extra: ["store": "sqlite"]))
            // The photos of the region with 10,000 photos, by localized title.
            var records: [PhotoRecord] = [], rawRecords: [PhotoRecord] = []
            let raw = try RawRegionPhotos(path: path)
            let regionPhotos = try medianSeconds(runs: 11) {
                records = try Self.storeBeneath(gallery).read { try $0.fetch(Gallery.regionPhotosRequest(regionID: 1), as: PhotoRecord.self) }
            }
            let rawRegionPhotos = try medianSeconds(runs: 11) { rawRecords = try raw.photos(regionID: 1) }
            guard records == rawRecords, records.count == 10_000 else {
                throw StoreError(.invalidRequest, "the region's photos disagree with SQLite's C API (\(records.count) and \(rawRecords.count))")
            }
            figures.append(Figure(scenario: "query.regionPhotos", n: records.count, seconds: regionPhotos,
                                  baseline: "the same query and records through SQLite's C API", baselineSeconds: rawRegionPhotos,
                                  extra: ["store": "sqlite"]))
            // The whole command, cold process, warm disk, against sqlite3 running the naive query.
            figures.append(try cliRegions(storePath: path, photos: photos))
            return figures
        }
    }

    static func cliRegions(storePath: String, photos: Int) throws -> Figure {
        let tool = try ToolBinary.path()
        let linking = try ToolBinary.warnIfDynamic()
        func run(_ executable: String, _ arguments: [String]) throws -> Double {
            try measure { try spawnAndWait(executable, arguments) }
        }
        _ = try run(tool, ["--store", storePath, "regions", "--json"])  // warm the disk cache
        var ours: [Double] = [], baseline: [Double] = []
        for _ in 0..<7 {
            ours.append(try run(tool, ["--store", storePath, "regions", "--json"]))
            baseline.append(try run("/usr/bin/sqlite3", [storePath, naiveTopRegions]))
        }
        return Figure(scenario: "cli.regions", n: photos, seconds: ours.sorted()[3], baseline: "sqlite3 running the naive query",
                      baselineSeconds: baseline.sorted()[3], extra: ["toolLinking": linking.rawValue])
    }

    /// Runs a program with its output discarded and waits for it, with posix_spawn and
    /// waitpid: Foundation's `Process.waitUntilExit` notices an exit only on a 50 ms tick
    /// (even `/bin/true` took 51 ms through it), which made every process time here 50 ms
    /// too long until 2026-12-01.
    static func spawnAndWait(_ executable: String, _ arguments: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw StoreError(.invalidRequest, "cannot start \(executable): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // Exited normally with status 0: the low 7 bits (the signal) and the exit code are 0.
        guard status == 0 else { throw StoreError(.invalidRequest, "\(executable) failed (wait status \(status))") }
    }

    /// Runs async work from the synchronous harness.
    static func blockingAsync<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let semaphore = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<T, Error>?
        Task {
            do { result = .success(try await work()) } catch { result = .failure(error) }
            semaphore.signal()
        }
        semaphore.wait()
        guard let result else { throw StoreError(.invalidRequest, "no result") }
        return try result.get()
    }
}

extension ProductBenchmarks {
    /// The gallery's file as a store of its own, for the baselines that query it directly
    /// (the gallery keeps its store to itself).
    static func storeBeneath(_ gallery: Gallery) throws -> Store {
        if let open = storesBeneath.withLock({ $0[gallery.path ?? ""] }) { return open }
        let store = try Store(path: gallery.path ?? ":memory:", schema: TopRegionsSchema.schema, migrator: TopRegionsSchema.migrator)
        storesBeneath.withLock { $0[gallery.path ?? ""] = store }
        return store
    }

    static let daemonScenario = Scenario(name: "daemon.memory", summary: "resident memory of a daemon over many sync passes against the test server") { quick in
        try daemonMemory(passes: quick ? 150 : 1_000)
    }

    /// Starts the test server and a daemon with a fast interval; reads the daemon's resident
    /// memory after the 100th pass, halfway and after the last.
    static func daemonMemory(passes: Int) throws -> [Figure] {
        try withScratchDirectory { directory in
            let server = Process()
            server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            server.arguments = ["python3", Repository.flickrServer.path, "--data", Repository.sampleData.path]
            let serverOutput = Pipe()
            server.standardOutput = serverOutput
            try server.run()
            defer { kill(server.processIdentifier, SIGKILL) }
            let portLine = String(decoding: serverOutput.fileHandleForReading.availableData, as: UTF8.self)
            guard let port = portLine.split(separator: " ").last.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
                throw StoreError(.invalidRequest, "the test server did not start")
            }
            let daemon = Process()
            daemon.executableURL = URL(fileURLWithPath: try ToolBinary.path())
            daemon.arguments = ["--store", directory.appendingPathComponent("daemon.sqlite").path, "daemon", "--interval", "0.02s",
                                "--endpoint", "http://127.0.0.1:\(port)/services/rest/", "--rate-limit", "none"]
            let log = Pipe()
            daemon.standardError = log
            try daemon.run()
            defer { kill(daemon.processIdentifier, SIGKILL) }
            var syncs = 0
            var at100: ResidentMemory?, atHalf: ResidentMemory?
            let started = Date()
            while syncs < passes {
                let chunk = String(decoding: log.fileHandleForReading.availableData, as: UTF8.self)
                syncs += chunk.components(separatedBy: "event=sync ").count - 1
                if at100 == nil && syncs >= 100 { at100 = try ResidentMemory(pid: daemon.processIdentifier) }
                if atHalf == nil && syncs >= passes / 2 { atHalf = try ResidentMemory(pid: daemon.processIdentifier) }
                if Date().timeIntervalSince(started) > 900 { throw StoreError(.invalidRequest, "the daemon ran \(syncs) passes in 15 minutes") }
            }
            let atEnd = try ResidentMemory(pid: daemon.processIdentifier)
            kill(daemon.processIdentifier, SIGTERM)
            daemon.waitUntilExit()
            guard let at100, let atHalf else { throw StoreError(.invalidRequest, "the daemon's memory was not read during its passes") }
            // Growth that slows down (SQLite's page caches filling, up to their limit) differs
            // from a leak (the same growth per pass throughout): hence the second half's. And
            // a leak is on the heap (anonymous memory), while mapped files (the WAL index,
            // which follows the WAL's length) come and go with checkpoints.
            return [Figure(scenario: "daemon.memory", n: syncs, seconds: Date().timeIntervalSince(started),
                           extra: ["rssMBAfter100": at100.total, "rssMBAtHalf": atHalf.total, "rssMBAtEnd": atEnd.total,
                                   "growthMB": atEnd.total - at100.total, "growthMBSecondHalf": atEnd.total - atHalf.total,
                                   "anonymousMBAfter100": at100.anonymous, "anonymousMBAtEnd": atEnd.anonymous,
                                   "anonymousGrowthMBSecondHalf": atEnd.anonymous - atHalf.anonymous,
                                   "fileMBAfter100": at100.file, "fileMBAtEnd": atEnd.file])]
        }
    }
}
