import Foundation
/// What one batch of changes does to a table, with UIKit's batch-update semantics:
/// deletes (sections and rows) and the old side of moves and updates use index paths
/// *before* the batch; inserts and the new side of moves and updates use index paths
/// *after* it. Each object appears at most once: a moved object whose content also changed
/// is one move flagged `updated`. No move has equal old and new paths (that is an update),
/// and nothing moves out of a deleted section or into an inserted one (that is a delete
/// plus an insert).
public struct ChangeBatch: Sendable, Equatable {
    public struct Move: Sendable, Equatable {
        public var id: Int64
        public var from: IndexPath
        public var to: IndexPath
        /// The object's content changed too: redraw it at its new place.
        public var updated: Bool

        public init(id: Int64, from: IndexPath, to: IndexPath, updated: Bool) {
            self.id = id
            self.from = from
            self.to = to
            self.updated = updated
        }
    }

    public struct Update: Sendable, Equatable {
        public var id: Int64
        /// Where the row was before the batch (UIKit's reload index).
        public var old: IndexPath
        /// Where the row is after the batch (differs from `old` when other rows moved).
        public var new: IndexPath

        public init(id: Int64, old: IndexPath, new: IndexPath) {
            self.id = id
            self.old = old
            self.new = new
        }
    }

    public struct Row: Sendable, Equatable {
        public var id: Int64
        public var indexPath: IndexPath

        public init(id: Int64, indexPath: IndexPath) {
            self.id = id
            self.indexPath = indexPath
        }
    }

    public var sectionDeletes: [Int] = []
    public var sectionInserts: [Int] = []
    public var rowDeletes: [Row] = []
    public var rowInserts: [Row] = []
    public var moves: [Move] = []
    public var updates: [Update] = []

    public init() {}

    public var isEmpty: Bool {
        sectionDeletes.isEmpty && sectionInserts.isEmpty && rowDeletes.isEmpty && rowInserts.isEmpty
            && moves.isEmpty && updates.isEmpty
    }

    /// Every object the batch names.
    public var changedIDs: Set<Int64> {
        Set(rowDeletes.map(\.id) + rowInserts.map(\.id) + moves.map(\.id) + updates.map(\.id))
    }
}

/// One step of an array-edit script: applied in order, each index is valid at the moment
/// it applies (for NSTableView-style consumers and terminal tables).
public enum ArrayEdit: Sendable, Equatable {
    case removeSection(Int)
    case insertSection(Int, name: String)
    case removeRow(IndexPath)
    case insertRow(IndexPath, id: Int64)
}

/// The names and ids of a controller's sections at one moment.
public struct Snapshot: Sendable, Equatable {
    public struct Section: Sendable, Equatable {
        public var name: String
        public var ids: [Int64]

        public init(name: String, ids: [Int64]) {
            self.name = name
            self.ids = ids
        }
    }

    public var sections: [Section]

    public init(sections: [Section]) { self.sections = sections }

    public var ids: [Int64] { sections.flatMap(\.ids) }
}

/// One reported batch, in all its forms, consistent with each other.
public struct ResultsChange: Sendable {
    public var batch: ChangeBatch
    public var edits: [ArrayEdit]
    public var snapshot: Snapshot
    /// The store token of the newest commit the batch includes (nil for a changed request).
    public var token: Int64?
}
