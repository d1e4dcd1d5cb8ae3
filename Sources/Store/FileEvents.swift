import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Linux's inotify on one directory, for the writes to some of its files: a descriptor a
/// dispatch source can wait on, so a waiting watcher costs nothing until a file changes.
///
/// Not thread-safe: one owner reads and closes it (a store's commit watcher, on its queue).
final class DirectoryFileEvents {
    let descriptor: Int32
    private let names: Set<String>

    /// Watches `directory` for writes to the files named `names`; nil when inotify is not
    /// available or the directory cannot be watched (the caller polls instead).
    init?(directory: String, names: Set<String>) {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        // Writes to a file in it (the WAL, or the database in rollback mode), a file made or
        // renamed into it (a new WAL).
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)
        guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        self.names = names
    }

    /// Reads every event queued; true when one concerns a watched file (or the queue
    /// overflowed, which may have lost one).
    func drain() -> Bool {
        var concerned = false
        let capacity = 16 * 1024
        var buffer = [UInt8](repeating: 0, count: capacity)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, capacity) }
            guard count > 0 else { return concerned }
            concerned = concerned || Self.concerns(buffer[0..<count], names: names)
        }
    }

    /// Whether the events in `bytes` (whole `inotify_event`s, each with its name) name a
    /// watched file.
    private static func concerns(_ bytes: ArraySlice<UInt8>, names: Set<String>) -> Bool {
        let headerSize = MemoryLayout<inotify_event>.size
        var offset = bytes.startIndex
        while offset + headerSize <= bytes.endIndex {
            let (mask, nameLength) = bytes[offset..<(offset + headerSize)].withUnsafeBytes { raw in
                (raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self), Int(raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
            }
            if mask & UInt32(IN_Q_OVERFLOW) != 0 { return true }
            let nameStart = offset + headerSize
            let nameEnd = min(nameStart + nameLength, bytes.endIndex)
            let name = String(decoding: bytes[nameStart..<nameEnd].prefix { $0 != 0 }, as: UTF8.self)
            if names.contains(name) { return true }
            offset = nameEnd
        }
        return false
    }

    deinit { close(descriptor) }
}

/// The file system a path lives on, from the kernel's mount table: inotify sees only this
/// machine's writes on a network file system, where other machines' commits must be polled.
enum FileSystemKind {
    /// File systems whose files other machines may write.
    static let shared: Set<String> = ["nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "fuse.sshfs",
                                      "fuse.glusterfs", "lustre", "gpfs", "afs", "ocfs2", "gfs2", "virtiofs"]

    /// The type of the file system holding `directory` (`ext4`, `nfs4`…), or nil when the
    /// mount table cannot be read.
    static func type(of directory: String) -> String? {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        let resolved = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        var best: (length: Int, type: String)?
        for line in table.split(separator: "\n") {
            // id parent major:minor root MOUNTPOINT options… - TYPE source superoptions
            let fields = line.split(separator: " ")
            guard fields.count > 4, let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count else { continue }
            let mountPoint = unescapeOctal(String(fields[4]))
            let isUnder = mountPoint == "/" || resolved == mountPoint || resolved.hasPrefix(mountPoint + "/")
            if isUnder, mountPoint.count >= (best?.length ?? -1) { best = (mountPoint.count, String(fields[dash + 1])) }
        }
        return best?.type
    }

    /// Whether other machines may write files under `directory` (so inotify would miss them).
    static func isShared(_ directory: String) -> Bool {
        guard let type = type(of: directory) else { return true }
        return shared.contains(type)
    }

    /// The mount table writes a space, tab, newline or backslash as `\` and three octal digits.
    private static func unescapeOctal(_ text: String) -> String {
        guard text.contains("\\") else { return text }
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "\\"), input.count >= 3, let value = UInt8(String(decoding: input.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                input = input.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
