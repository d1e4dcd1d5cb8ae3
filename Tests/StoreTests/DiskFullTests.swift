import Foundation
import Store
import TestSupport
import Testing

/// A small tmpfs mounted for one test, so the disk really runs out of space. Mounting
/// needs root; where it is not allowed the test is skipped (and says so).
final class SmallDisk {
    let directory: TemporaryDirectory

    init?(kilobytes: Int) {
        guard let directory = try? TemporaryDirectory() else { return nil }
        self.directory = directory
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", directory.url.path]
        mount.standardError = FileHandle.nullDevice
        guard (try? mount.run()) != nil else { return nil }
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else { return nil }
    }

    static var canMount: Bool { SmallDisk(kilobytes: 64) != nil }

    deinit {
        let unmount = Process()
        unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
        unmount.arguments = [directory.url.path]
        try? unmount.run()
        unmount.waitUntilExit()
    }
}

@Suite("A full disk")
struct DiskFullTests {
    @Test("Running out of disk space mid-transaction rolls it back; the store stays usable",
          .enabled(if: SmallDisk.canMount, "needs permission to mount a tmpfs"))
    func realDiskFull() throws {
        guard let disk = SmallDisk(kilobytes: 1024) else { return }
        let path = disk.directory.path("store.sqlite")
        let store = try TestSchema.openStore(at: path)
        try store.write { try $0.inserted(Region(name: "before")) }
        // Leave little room: a filler file takes most of what is free.
        let filler = disk.directory.path("filler")
        try Data(count: 600 * 1024).write(to: URL(fileURLWithPath: filler))
        #expect {
            try store.write { transaction in
                for index in 0..<5000 {
                    try transaction.inserted(Photo(flickrID: "\(index)", title: String(repeating: "a long title ", count: 10)))
                }
            }
        } throws: { error in
            let code = (error as? StoreError)?.resultCode?.primary
            return code == .full || code == .ioError
        }
        #expect(try store.read { try $0.count(FetchRequest(Photo.self)) } == 0)
        #expect(try store.read { try $0.fetch(Region.self) }.map(\.name) == ["before"])
        try FileManager.default.removeItem(atPath: filler)
        try store.write { try $0.inserted(Region(name: "after")) }
        #expect(try store.read { try $0.count(FetchRequest(Region.self)) } == 2)
        #expect(try store.integrityCheck() == ["ok"])
        store.close()
    }
}
