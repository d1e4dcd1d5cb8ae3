import Foundation
import Testing

@Suite("An image cache that cannot be made")
struct ImageCacheErrorTests {
    @Test("is named with its cause in words, never as a Foundation error dump")
    func namesTheCause() throws {
        let tool = try Tool()
        #expect(try tool.run(["sync"]).status == 0)
        let file = tool.directory.appendingPathComponent("a-file").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let run = try tool.run(["image", "53300015459", "--output", tool.directory.appendingPathComponent("out.jpg").path],
                               environment: ["XDG_CACHE_HOME": file])
        #expect(run.status == 1)
        #expect(run.stderr.contains("cannot create the image cache \(file)/topregions/images: \(file) is not a directory"), "\(run.stderr)")
        #expect(!run.stderr.contains("NSCocoaErrorDomain"))
    }
}
