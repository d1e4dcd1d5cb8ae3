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

    @Test("copy --from only reads the store it copies: one of an older version is not migrated (that version can still open it); the copy is")
    func copyFromAnOlderStore() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        let older = tool.directory.appendingPathComponent("older.sqlite").path
        #expect(try tool.run(["copy", "--to", older]).status == 0)
        // As a store of 0.2 is: without the store's own migration.
        try Self.sqlite(older, "DELETE FROM store_migrations WHERE name LIKE 'store.%'")
        let before = try Data(contentsOf: URL(fileURLWithPath: older))
        let copy = tool.directory.appendingPathComponent("copy.sqlite").path
        let made = try tool.runWithoutStore(["copy", "--from", older, "--to", copy])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: older)) == before, "the store copied is unchanged")
        #expect(try Self.sqlite(older, "SELECT count(*) FROM store_migrations WHERE name LIKE 'store.%'") == "0")
        #expect(try Self.sqlite(copy, "SELECT count(*) FROM store_migrations WHERE name LIKE 'store.%'") == "1")
        let missing = try tool.runWithoutStore(["copy", "--from", tool.directory.appendingPathComponent("none.sqlite").path, "--to", copy + "2"])
        #expect(missing.status == 1 && missing.stderr.contains("no store"), "\(missing.stderr)")
    }

    /// Runs one statement on a file with Python's sqlite3 (no store code involved),
    /// returning the first column of the first row, if any.
    @discardableResult
    private static func sqlite(_ path: String, _ sql: String) throws -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1])
            row = connection.execute(sys.argv[2]).fetchone()
            connection.commit()
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
            print("" if row is None else row[0])
            """, path, sql]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    @Test("A copy is taken while another process holds the store's write lock, and has what was committed")
    func copyDoesNotWaitForWriters() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync", "--pages", "1"]).status == 0)
        // Photographers: a table without triggers (the search index's need the program's collation).
        let holder = try StoreLockHolder(store: tool.store, sql: "DELETE FROM Photographer")
        defer { holder.release() }
        let copy = tool.directory.appendingPathComponent("copy.sqlite").path
        let made = try tool.run(["copy", "--to", copy], environment: ["TOPREGIONS_BUSY_TIMEOUT": "2s"])
        #expect(made.status == 0, "\(made.stderr)")
        let copied = try tool.runWithoutStore(["--store", copy, "--json", "status"]).json as? [String: Any]
        #expect((copied?["photographers"] as? Int ?? 0) > 0, "the uncommitted delete is not in the copy")
    }
}
