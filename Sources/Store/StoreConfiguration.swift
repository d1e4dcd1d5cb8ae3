import Foundation

/// How a store behaves; the defaults suit a daemon and command-line readers sharing a file.
public struct StoreConfiguration: Sendable {
    /// How the file is opened.
    public enum Access: Sendable, Equatable {
        /// Read and write; the file (and its directory) is created when missing, and
        /// migrations are applied.
        case readWriteCreate
        /// Read and write an existing store (`notFound` when there is none); migrations
        /// are applied.
        case readWrite
        /// Read an existing store without writing anything to it, for a user or a file
        /// system that may not write. Writes throw `readOnly`; a store that needs a
        /// migration is refused (`migrationNeeded`).
        case readOnly
    }

    /// How the file is opened: created if missing by default.
    public var access: Access = .readWriteCreate
    /// How long a writer waits for another process's write to finish before failing.
    public var busyTimeout: TimeInterval = 60
    /// Read connections kept open for concurrent readers.
    public var maximumReaders: Int = 4
    /// History older than this is trimmed after commits (checked at most once a minute).
    public var historyRetention: TimeInterval = 7 * 24 * 3600
    /// How often observers look for commits made by other processes when they poll (see
    /// `observationMethod`).
    public var observationInterval: TimeInterval = 0.05
    /// How observers notice commits made by other processes: woken by inotify where it sees
    /// every writer, else by polling.
    public var observationMethod: ObservationMethod = .automatic

    /// The defaults.
    public init() {}
}
