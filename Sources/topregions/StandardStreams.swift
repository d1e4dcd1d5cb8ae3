import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr without Foundation's `FileHandle.write`, which ends the
/// process with a fatal error when the write fails (a full disk, a closed descriptor).
enum StandardStreams {
    /// Whether stdout was closed when the process started (it now points at /dev/null).
    nonisolated(unsafe) private static var outWasClosed = false

    /// Opens /dev/null on any of descriptors 0, 1 and 2 that the process started without:
    /// otherwise the next file opened (the store itself) would take its number, and output
    /// meant for stdout would be written into it. Called first thing, on one thread.
    static func guardDescriptors() {
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY)
            if opened >= 0, opened != descriptor {
                _ = dup2(opened, descriptor)
                close(opened)
            }
            if descriptor == STDOUT_FILENO { outWasClosed = true }
        }
    }

    /// Writes to stdout. When stdout cannot take it, the results are lost: the command ends
    /// with status 1 and says why on stderr (quietly when the reader has gone, as `| head`
    /// does, which is no error).
    static func out(_ bytes: Data) {
        if outWasClosed {
            err(Data("topregions: cannot write to standard output: it is closed\n".utf8))
            exit(ExitStatus.failure)
        }
        let failure = write(bytes, to: STDOUT_FILENO)
        guard failure != 0 else { return }
        if failure != EPIPE {
            err(Data("topregions: cannot write to standard output: \(String(cString: strerror(failure)))\n".utf8))
        }
        exit(ExitStatus.failure)
    }

    /// Writes to stderr; a failure is ignored, since there is nowhere left to report it
    /// (a daemon keeps running when its log cannot be written).
    static func err(_ bytes: Data) {
        _ = write(bytes, to: STDERR_FILENO)
    }

    /// Writes every byte, retrying short writes and interruptions; 0, or the errno that
    /// stopped it.
    private static func write(_ bytes: Data, to descriptor: Int32) -> Int32 {
        bytes.withUnsafeBytes { buffer -> Int32 in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return 0
        }
    }
}
