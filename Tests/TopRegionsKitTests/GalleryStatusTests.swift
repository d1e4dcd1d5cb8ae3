import Flickr
import TestSupport
import Foundation
import Testing
@testable import TopRegionsKit

@Suite("A gallery's status", .serialized)
struct GalleryStatusTests {
    @Test("An empty store: nothing held, no sync yet")
    func empty() throws {
        let test = try TestGallery()
        let status = try test.gallery.status()
        #expect(status == GalleryStatus(photos: 0, regions: 0, photographers: 0, pendingPlaces: 0, callsLastHour: 0, lastSync: nil, rateLimit: nil,
                                        rateLimitIsNone: false, observation: "inotify"),
                "a file on a local file system is watched with inotify")
    }

    @Test("After a sync of SampleData: the sample's photos, regions and photographers, and that pass")
    func afterSampleSync() async throws {
        let test = try TestGallery()
        let before = Date()
        let result = try await test.syncSample(SyncOptions(pages: 8, perPage: 500))
        let status = try test.gallery.status()
        let photos = try Expected.photos()
        #expect(status.photos == Int64(photos.count))
        #expect(status.regions == Int64(try Expected.regions().count))
        #expect(status.photographers == Int64(Set(photos.compactMap { $0["owner"] as? String }).count))
        #expect(status.pendingPlaces == 0)
        let run = try #require(status.lastSync)
        #expect(run.result == "newData" && run.error == nil)
        #expect(run.photosNew == Int64(photos.count) && run.photosUpdated == 0 && run.calls == Int64(result.calls))
        let finished = try #require(run.finishedAt)
        #expect(run.startedAt >= before.addingTimeInterval(-1) && finished >= run.startedAt && finished <= Date().addingTimeInterval(1))
    }

    @Test("The last sync is the latest pass, a failed one with its error")
    func lastSyncFailed() async throws {
        let server = try FlickrTestServer()
        let test = try TestGallery()
        _ = try await test.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 1, perPage: 100))
        try await server.addFault(["method": "flickr.photos.search", "page": 1, "malformed": true, "times": 1])
        let failed = try await test.gallery.sync(client: serverClient(server), options: SyncOptions(pages: 1, perPage: 100))
        #expect(failed.outcome == .failed)
        let run = try #require(try test.gallery.status().lastSync)
        #expect(run.result == "failed")
        #expect(run.error == failed.error && run.error?.isEmpty == false)
    }

    @Test("A pass whose process died is the last sync, failed and unfinished; a pass still running is not",
          arguments: StoreKind.available)
    func diedOrRunning(on kind: StoreKind) async throws {
        let test = try TestGallery()
        _ = try await test.syncSample(SyncOptions(pages: 1, perPage: 50))
        let store = try GalleryOnStore(test, on: kind)
        let synced = try #require(try store.gallery.status(now: Date()).lastSync)
        #expect(synced.result == "newData" && synced.finishedAt != nil && synced.photosNew == 50)
        // What a pass leaves behind when it is killed: the row it wrote as it started.
        try store.execute("INSERT INTO SyncRun (startedAt, result, error) VALUES (?, 'failed', ?)",
                          [.real(Date().timeIntervalSince1970 + 60), .text(Gallery.unfinishedPassError)])
        let died = try #require(try store.gallery.status(now: Date()).lastSync)
        #expect(died.result == "failed" && died.finishedAt == nil && died.error == Gallery.unfinishedPassError)
        let lock = try store.gallery.tryAcquireSyncLock()
        defer { lock.release() }
        let running = try #require(try store.gallery.status(now: Date()).lastSync)
        #expect(running == synced, "while a sync holds the lock its unfinished row is its own")
    }

    @Test("Calls in the last hour count the ledger's calls of the hour before `now`, not older ones")
    func callsLastHour() async throws {
        let test = try TestGallery()
        let now = Date(timeIntervalSince1970: 2_000_000_000)
        for secondsAgo in [10.0, 1_800, 3_599, 3_601, 7_200] {
            await test.gallery.callLedger.record(now.addingTimeInterval(-secondsAgo))
        }
        #expect(try test.gallery.status(now: now).callsLastHour == 3)
        #expect(try test.gallery.status(now: now.addingTimeInterval(3_600)).callsLastHour == 0)
    }
}
