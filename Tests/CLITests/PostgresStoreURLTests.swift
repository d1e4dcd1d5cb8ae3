import Foundation
import Testing

@Suite("A PostgreSQL store URL given to the tool")
struct PostgresStoreURLTests {
    @Test("by a command that reads or writes, with no server there, is a connection error naming the URL redacted, status 75 (it may pass); nothing is created on disk",
          arguments: [["regions"], ["photos", "--region", "x"], ["recents"], ["favorites"], ["users"], ["photo", "1"],
                      ["view", "1"], ["favorites", "add", "1"], ["sync"], ["daemon"], ["watch", "recents"], ["prune"],
                      ["thumbnail", "53300015459"], ["image", "53300015459"], ["serve", "--listen", "127.0.0.1:0"]])
    func readingWithoutServer(words: [String]) throws {
        let tool = try Tool()
        let run = try tool.runWithoutStore(["--store", "postgresql://alice:hunter2@127.0.0.1:1/gallery"] + words, inOwnDirectory: true)
        #expect(run.status == 75)
        #expect(run.stderr.hasPrefix("topregions: cannot connect to postgresql://alice:***@127.0.0.1:1/gallery"), "\(run.stderr)")
        #expect(!(run.stderr + run.stdout).contains("hunter2"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: tool.directory.path) == [])
    }

    @Test("A Unix socket with no server on it is status 75, as a refused TCP connection is")
    func socketWithoutServer() throws {
        let tool = try Tool()
        let run = try tool.runWithoutStore(["--store", "postgresql://alice@/gallery?host=\(tool.directory.path)&port=1", "regions"], inOwnDirectory: true)
        #expect(run.status == 75, "\(run.stderr)")
    }

    @Test("in TOPREGIONS_STORE is taken the same way: no server there is status 75, the password redacted")
    func takenFromTheEnvironment() throws {
        let tool = try Tool()
        let run = try tool.runWithoutStore(["sync"], environment: ["TOPREGIONS_STORE": "postgresql://bob:pw-secret@127.0.0.1:1/gallery"], inOwnDirectory: true)
        #expect(run.status == 75)
        #expect(run.stderr.contains("postgresql://bob:***@127.0.0.1:1/gallery"))
        #expect(!(run.stderr + run.stdout).contains("pw-secret"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: tool.directory.path) == [])
    }

    @Test("A URL quoted back in a usage error, or with a / or ? in its password, or a misspelled keyword, shows no password",
          arguments: [["--store", "postgresql://a@127.0.0.1:1/g", "regions", "--stor=postgresql://tr:hunter9@x/conc"],
                      ["--store", "postgresql://a@127.0.0.1:1/g", "regions", "postgresql://tr:hunter9@x/conc"],
                      ["--store", "postgresql://tr:hunter9/x@127.0.0.1:1/conc", "regions"],
                      ["--store", "postgresql://tr:hunter9?x@127.0.0.1:1/conc", "regions"],
                      ["--store", "postgresql://tr@127.0.0.1:1/conc?passwrd=hunter9", "regions"]])
    func passwordNeverQuoted(arguments: [String]) throws {
        let tool = try Tool()
        let run = try tool.runWithoutStore(arguments, inOwnDirectory: true)
        #expect(run.status != 0 && !run.stderr.isEmpty)
        #expect(!(run.stderr + run.stdout).contains("hunter9"), "\(run.stderr)")
    }

    @Test("A password cut by an unencoded / shows none of its pieces, however short, in libpq's complaint")
    func shortPiecesOfAPassword() throws {
        let tool = try Tool()
        for url in ["postgresql://tr:SEC/RET6@127.0.0.1:1/conc", "postgresql://tr:Zq/9@127.0.0.1:1/conc"] {
            let run = try tool.runWithoutStore(["--store", url, "status"], inOwnDirectory: true)
            #expect(run.status != 0 && run.stderr.contains("***"), "\(run.stderr)")
            for piece in ["SEC", "RET6", "Zq"] { #expect(!run.stderr.contains(piece), "\(piece): \(run.stderr)") }
        }
    }
}
