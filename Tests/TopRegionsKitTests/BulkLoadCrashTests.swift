import CSQLite
import Flickr
import Foundation
import SampleDataSupport
import Store
import TestSupport
import Testing
@testable import TopRegionsKit

@Suite("A sync killed during its bulk load", .serialized)
struct BulkLoadCrashTests {
    static let photos = 20_000

    /// The SQL of Photo's declared indexes in the store (not the unique index SQLite makes).
    static func photoIndexStatements(_ gallery: Gallery) throws -> Set<String> {
        Set(try BulkLoadTests.photoIndexes(gallery).values.filter { $0 != BulkLoadTests.uniqueIndexSQL })
    }

    /// Whether the store at `path` notes deferred indexes, read with SQLite's C API so that
    /// watching does not take the store's locks the child needs.
    static func notesDeferredIndexes(_ path: String) -> Bool {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return false }
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(db, "SELECT count(*) FROM store_metadata WHERE key = 'deferred_indexes'", -1, &statement, nil) == SQLITE_OK,
              sqlite3_step(statement) == SQLITE_ROW else { return false }
        return sqlite3_column_int64(statement, 0) > 0
    }

    static func pass(_ gallery: Gallery, photos: URL) async throws -> SyncResult {
        var options = SyncOptions(pages: 200, perPage: 500)
        options.overlap = 100 * 365 * 86_400
        options.bulkLoadMinimumPhotos = 1_000
        return try await gallery.sync(client: FlickrClient(configuration: FlickrConfiguration(), transport: try SampleDataTransport(directory: photos)),
                                      options: options)
    }

    @Test("Killed with SIGKILL part way through a 20,000-photo pass, 5 times: each Photo index is in the file or noted, and the next pass builds them and completes")
    func killedDuringBulkLoad() async throws {
        let test = try TestGallery()
        let places = test.directory.appendingPathComponent("places"), photos = test.directory.appendingPathComponent("photos")
        try SampleDataGenerator.generateJSONPages(photos: 1_200, into: places)
        try SampleDataGenerator.generateJSONPages(photos: Self.photos, into: photos)
        let declared = try Self.photoIndexStatements(test.gallery)
        var random = SeededGenerator(seed: testSeed("CRASH_SEED", test: "crash test"))
        let seed = random.state
        var killedWhileDeferred = 0
        for round in 0..<5 {
            let context = "round \(round), seed \(seed)"
            let path = test.directory.appendingPathComponent("round-\(round).sqlite").path
            let child = try FixtureProcess([path, places.path, photos.path], executable: "gallery-fixture")
            #expect(eventually(timeout: 60) { child.outputLines.contains("places") }, "\(context): \(child.outputLines)")
            // Odd rounds kill at any moment of the pass; even rounds once the indexes are dropped
            // (a child that shares two cores with the whole suite may take long to get there).
            // No suspension point from here to the kill: a task that awaits may resume late in
            // a suite whose tests hold the concurrency pool's threads, after the (one second)
            // load is over.
            if round % 2 == 0 { _ = eventually(timeout: 180) { Self.notesDeferredIndexes(path) || !child.process.isRunning } }
            usleep(useconds_t(Int.random(in: 0...(round % 2 == 0 ? 150 : 600), using: &random) * 1_000))
            child.kill()
            // A pass may end before the kill on a loaded machine: that round still checks the
            // store, and the count below asks that enough rounds killed a load.
            let gallery = try Gallery(path: path)
            defer { gallery.close() }
            #expect(try gallery.store.integrityCheck() == ["ok"], "\(context)")
            let present = try Self.photoIndexStatements(gallery), noted = Set(try gallery.store.deferredIndexStatements())
            #expect(present.isDisjoint(with: noted) && present.union(noted) == declared, "\(context): \(present) and \(noted)")
            if !noted.isEmpty { killedWhileDeferred += 1 }
            let next = try await Self.pass(gallery, photos: photos)
            #expect(next.outcome != .failed, "\(context): \(next.error ?? "")")
            #expect(try Self.photoIndexStatements(gallery) == declared && gallery.store.deferredIndexStatements().isEmpty, "\(context)")
            let stored = try await gallery.store.read { try $0.count(FetchRequest(PhotoRecord.self)) }
            #expect(stored >= Self.photos, "\(context): \(stored) photos")
            #expect(try gallery.check().isEmpty, "\(context)")
        }
        #expect(killedWhileDeferred >= 2, "kills should land while Photo's indexes are dropped: \(killedWhileDeferred) of 5")
    }
}
