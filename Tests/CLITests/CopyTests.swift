import Foundation
import TestSupport
import Testing

@Suite("topregions copy", .serialized)
struct CopyTests {
    @Test("A copy holds the same regions, users, Recents, Favorites and thumbnails, and checks clean; it overwrites nothing")
    func copyKeepsEverything() throws {
        let server = try FlickrTestServer()
        let tool = try Tool()
        let source = ["--endpoint", server.endpoint.absoluteString, "--image-base", server.imageBase.absoluteString, "--rate-limit", "none"]
        #expect(try tool.run(["sync"] + source).status == 0)
        let withImage = try Expected.thumbnailOfAPhotoInARegion().id
        let photos = try #require(try tool.run(["--json", "regions", "--limit", "3"]).json as? [[String: Any]]).compactMap { $0["id"] as? String }
            .flatMap { region in (try? tool.run(["--json", "photos", "--region", region]).json as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? [] }
        try #require(photos.count >= 3)
        #expect(try tool.run(["users", "add", "ann"]).status == 0)
        for photo in photos.prefix(3) { #expect(try tool.run(["view", photo, "--user", "ann"]).status == 0) }
        #expect(try tool.run(["favorites", "add", photos[1]]).status == 0)
        #expect(try tool.run(["favorites", "add", photos[0]]).status == 0)
        let thumbnail = try tool.run(["thumbnail", withImage, "--output", "-"])
        #expect(thumbnail.status == 0 && !thumbnail.stdout.isEmpty, "\(thumbnail.stderr)")

        let copy = tool.directory.appendingPathComponent("copy.sqlite").path
        let made = try tool.run(["--json", "copy", "--to", copy])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(((made.json as? [String: Any])?["check"] as? [String: Any])?["ok"] as? Bool == true)
        for words in [["regions", "--limit", "1000"], ["recents", "--user", "ann"], ["favorites"], ["users"], ["status"]] {
            let original = try tool.run(["--json"] + words).stdout
            var copied = try tool.runWithoutStore(["--store", copy, "--json"] + words).stdout
            if words == ["status"] { copied = copied.replacingOccurrences(of: "copy.sqlite", with: "store.sqlite") }
            #expect(copied == original, "\(words) is the same on the copy")
        }
        // The thumbnail is in the copy: it is answered without the image server.
        let offline = try tool.runWithoutStore(["--store", copy, "thumbnail", withImage, "--output", "-", "--image-base", "http://127.0.0.1:9/"])
        #expect(offline.status == 0 && offline.stdout == thumbnail.stdout, "\(offline.stderr)")
        #expect(try tool.runWithoutStore(["--store", copy, "check"]).status == 0)

        let mode = (try FileManager.default.attributesOfItem(atPath: copy)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600, "the copy, like the store, is its user's only: \(String(mode ?? 0, radix: 8))")
        let target = tool.directory.appendingPathComponent("elsewhere.sqlite").path
        let link = tool.directory.appendingPathComponent("link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let throughLink = try tool.run(["copy", "--to", link])
        #expect(throughLink.status == 1 && throughLink.stderr.contains("symbolic link"), "\(throughLink.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target), "nothing was written where the dangling link points")

        let walName = try tool.run(["copy", "--to", copy + "-wal"])
        #expect(walName.status == 1 && walName.stderr.contains("SQLite's own file"), "\(walName.stderr)")
        let again = try tool.run(["copy", "--to", copy])
        #expect(again.status == 1 && again.stderr.contains("overwrites nothing"), "\(again.stderr)")
        #expect(try tool.run(["copy"]).status == 64, "--to is needed")
        let postgres = try tool.run(["copy", "--to", "postgresql://ann:secret@db/gallery"])
        #expect(postgres.status == 1 && !postgres.stderr.contains("secret"), "\(postgres.stderr)")
    }

    @Test("A copy is taken while another process holds the store's write lock, and has what was committed")
    func copyDoesNotWaitForWriters() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        let holder = try StoreLockHolder(store: tool.store, sql: "DELETE FROM Photo")
        defer { holder.release() }
        let copy = tool.directory.appendingPathComponent("copy.sqlite").path
        let made = try tool.run(["copy", "--to", copy], environment: ["TOPREGIONS_BUSY_TIMEOUT": "2s"])
        #expect(made.status == 0, "\(made.stderr)")
        let copied = try tool.runWithoutStore(["--store", copy, "--json", "status"]).json as? [String: Any]
        #expect((copied?["photos"] as? Int ?? 0) > 0, "the uncommitted delete is not in the copy")
    }
}
