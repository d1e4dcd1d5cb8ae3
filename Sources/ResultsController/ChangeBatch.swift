import Foundation

/// What one batch of changes does to a table, with UIKit's batch-update semantics, in a
/// canonical form:
///
/// - Deletes (sections and rows) and the old side of moves and updates use index paths
///   *before* the batch; inserts and the new side of moves and updates use index paths
///   *after* it.
/// - No row operation lies inside a deleted or inserted section: a section delete covers
///   its rows, and a section insert carries its rows (`SectionInsert.section.ids`). An
///   object that leaves a deleted section for a surviving one is one row insert; one that
///   leaves a surviving section for an inserted one is one row delete.
/// - Each object appears at most once among row deletes, row inserts, moves and updates:
///   a moved object whose content also changed is one move flagged `updated`.
/// - No move has equal old and new paths (that is an update).
/// - A change in the order of sections that stay is reported as those sections deleted
///   and inserted again (the fewest such sections).
///
/// Applied to the table as it was before (`TableModel.apply(_:)`), it gives the table as
/// it is after, with no other source of information.
public struct ChangeBatch: Sendable, Equatable {
    /// An object that stays in the results but changes place.
    public struct Move: Sendable, Equatable {
        /// The object's primary key.
        public var id: Int64
        /// Where the row was before the batch.
        public var from: IndexPath
        /// Where the row is after the batch.
        public var to: IndexPath
        /// The object's content changed too: redraw it at its new place once the batch is
        /// applied (UIKit cannot reload a row that moves in the same batch).
        public var updated: Bool

        /// A move with these values.
        public init(id: Int64, from: IndexPath, to: IndexPath, updated: Bool) {
            self.id = id
            self.from = from
            self.to = to
            self.updated = updated
        }
    }

    /// An object whose shown content changed and that did not move (other rows may shift it).
    public struct Update: Sendable, Equatable {
        /// The object's primary key.
        public var id: Int64
        /// Where the row was before the batch (UIKit's reload index).
        public var old: IndexPath
        /// Where the row is after the batch (differs from `old` when other rows moved).
        public var new: IndexPath

        /// An update with these values.
        public init(id: Int64, old: IndexPath, new: IndexPath) {
            self.id = id
            self.old = old
            self.new = new
        }
    }

    /// A row deleted (at its index path before the batch) or inserted (after it).
    public struct Row: Sendable, Equatable {
        /// The object's primary key.
        public var id: Int64
        /// The row's place: before the batch for a delete, after it for an insert.
        public var indexPath: IndexPath

        /// A row with these values.
        public init(id: Int64, indexPath: IndexPath) {
            self.id = id
            self.indexPath = indexPath
        }
    }

    /// A section inserted at `index` (after the batch), with all of its rows.
    public struct SectionInsert: Sendable, Equatable {
        /// The section's index after the batch.
        public var index: Int
        /// The section's value and the ids of its rows, in order.
        public var section: Snapshot.Section

        /// A section insert with these values.
        public init(index: Int, section: Snapshot.Section) {
            self.index = index
            self.section = section
        }
    }

    /// Old indexes of the sections deleted.
    public var sectionDeletes: [Int] = []
    /// The sections inserted, by new index, ascending.
    public var sectionInserts: [SectionInsert] = []
    /// Rows deleted, by old index path, ascending; none inside a deleted section.
    public var rowDeletes: [Row] = []
    /// Rows inserted, by new index path, ascending; none inside an inserted section.
    public var rowInserts: [Row] = []
    /// Rows moved, by new index path, ascending.
    public var moves: [Move] = []
    /// Rows whose content changed and that did not move, by old index path, ascending.
    public var updates: [Update] = []

    /// An empty batch.
    public init() {}

    /// The new indexes of the inserted sections.
    public var insertedSectionIndexes: [Int] { sectionInserts.map(\.index) }

    /// Whether the batch changes nothing.
    public var isEmpty: Bool {
        sectionDeletes.isEmpty && sectionInserts.isEmpty && rowDeletes.isEmpty && rowInserts.isEmpty
            && moves.isEmpty && updates.isEmpty
    }

    /// Every object the batch names, inserted sections' rows included.
    public var changedIDs: Set<Int64> {
        Set(rowDeletes.map(\.id) + rowInserts.map(\.id) + moves.map(\.id) + updates.map(\.id)
            + sectionInserts.flatMap(\.section.ids))
    }
}

/// One step of an array-edit script: applied in order, each index is valid at the moment
/// it applies (for NSTableView-style consumers and terminal tables). An inserted section
/// is inserted empty and then filled row by row.
public enum ArrayEdit: Sendable, Equatable {
    /// Remove the section at this index, rows and all.
    case removeSection(Int)
    /// Insert an empty section with this value at this index.
    case insertSection(Int, SectionValue)
    /// Remove the row at this index path.
    case removeRow(IndexPath)
    /// Insert the object with this id at this index path.
    case insertRow(IndexPath, id: Int64)
}

/// The sections of a controller, with their ids, at one moment.
public struct Snapshot: Sendable, Equatable {
    /// One section: its value and its objects, in order.
    public struct Section: Sendable, Equatable {
        /// The section's identity (NULL for an unsectioned controller's one section).
        public var value: SectionValue
        /// The primary keys of the section's objects, in the controller's order.
        public var ids: [Int64]
        /// The section's name (`""` for NULL).
        public var name: String { value.name }

        /// A section with these values.
        public init(value: SectionValue, ids: [Int64]) {
            self.value = value
            self.ids = ids
        }

        /// A section whose value is the text `name`.
        public init(name: String, ids: [Int64]) {
            self.init(value: SectionValue(.text(name)), ids: ids)
        }
    }

    /// The sections, in order.
    public var sections: [Section]

    /// A snapshot of these sections.
    public init(sections: [Section]) { self.sections = sections }

    /// Every object's primary key, section by section, in order.
    public var ids: [Int64] { sections.flatMap(\.ids) }
}

/// One reported batch, in all its forms, consistent with each other.
public struct ResultsChange: Sendable {
    /// The change as one UIKit-style batch, in canonical form.
    public var batch: ChangeBatch
    /// The same change as array edits to apply one after another.
    public var edits: [ArrayEdit]
    /// The controller's sections after the batch (empty when the controller's
    /// `includesSnapshots` is off).
    public var snapshot: Snapshot
    /// The store token of the newest commit the batch includes (nil for a changed request).
    public var token: Int64?
}
