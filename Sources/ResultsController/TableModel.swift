import Foundation
/// A table of sections of ids that applies batches with every rule UIKit enforces, failing
/// with UIKit's own message when a rule is broken. Use it to check a batch before handing
/// it to a real table, or as the model of a terminal table.
public struct TableModel: Sendable, Equatable {
    public private(set) var sections: [Snapshot.Section]

    public init(_ snapshot: Snapshot) { sections = snapshot.sections }

    public init(sections: [Snapshot.Section] = []) { self.sections = sections }

    public var snapshot: Snapshot { Snapshot(sections: sections) }

    /// A broken rule, with the text UIKit would stop with.
    public struct InvalidUpdate: Error, Sendable, CustomStringConvertible, Equatable {
        public var message: String
        public var description: String { message }
    }

    // MARK: Batches

    /// Applies `batch` as `performBatchUpdates` would, given what the data source holds
    /// afterwards (`after`, as UIKit asks the data source for its counts). Throws when a
    /// rule is broken, or when the rows end up other than the data source says.
    public mutating func apply(_ batch: ChangeBatch, after: Snapshot) throws {
        let oldCount = sections.count
        try checkSections(batch, oldCount: oldCount, newCount: after.sections.count)
        let deletedSections = Set(batch.sectionDeletes)
        let insertedSections = Set(batch.sectionInserts)
        try checkOldRows(batch, deletedSections: deletedSections)
        try checkNewRows(batch, insertedSections: insertedSections, newCount: after.sections.count)

        // Old sections that survive, in order, fill the new slots not taken by inserts.
        let survivingOld = (0..<oldCount).filter { !deletedSections.contains($0) }
        let freeNew = (0..<after.sections.count).filter { !insertedSections.contains($0) }
        var oldForNew: [Int: Int] = [:]
        for (old, new) in zip(survivingOld, freeNew) { oldForNew[new] = old }

        var leaving = Set<IndexPath>()
        for row in batch.rowDeletes { leaving.insert(row.indexPath) }
        for move in batch.moves { leaving.insert(move.from) }
        var arriving: [Int: [Int: Int64]] = [:]
        for row in batch.rowInserts { arriving[row.indexPath.section, default: [:]][row.indexPath.row] = row.id }
        for move in batch.moves { arriving[move.to.section, default: [:]][move.to.row] = move.id }

        var result: [Snapshot.Section] = []
        for newSection in 0..<after.sections.count {
            let expected = after.sections[newSection]
            let staying: [Int64]
            var before = 0, deleted = 0, movedOut = 0
            if let old = oldForNew[newSection] {
                before = sections[old].ids.count
                deleted = batch.rowDeletes.filter { $0.indexPath.section == old }.count
                movedOut = batch.moves.filter { $0.from.section == old }.count
                staying = sections[old].ids.enumerated().filter { !leaving.contains(IndexPath(row: $0.offset, section: old)) }.map(\.element)
            } else {
                staying = []
            }
            let inserted = batch.rowInserts.filter { $0.indexPath.section == newSection }.count
            let movedIn = batch.moves.filter { $0.to.section == newSection }.count
            let count = staying.count + inserted + movedIn
            guard count == expected.ids.count else {
                if oldForNew[newSection] != nil {
                    throw InvalidUpdate(message: "Invalid update: invalid number of rows in section \(newSection). The number of rows contained in an existing section after the update (\(expected.ids.count)) must be equal to the number of rows contained in that section before the update (\(before)), plus or minus the number of rows inserted or deleted from that section (\(inserted) inserted, \(deleted) deleted) and plus or minus the number of rows moved into or out of that section (\(movedIn) moved in, \(movedOut) moved out).")
                }
                throw InvalidUpdate(message: "Invalid update: invalid number of rows in section \(newSection). The number of rows contained in an inserted section after the update (\(expected.ids.count)) must be equal to the number of rows inserted into that section (\(inserted)).")
            }
            var ids = [Int64](repeating: 0, count: count)
            var taken = [Bool](repeating: false, count: count)
            for (row, id) in arriving[newSection] ?? [:] {
                guard row < count else {
                    throw InvalidUpdate(message: "attempt to insert row \(row) into section \(newSection), but there are only \(count) rows in section \(newSection) after the update")
                }
                ids[row] = id
                taken[row] = true
            }
            var next = staying.makeIterator()
            for row in 0..<count where !taken[row] {
                ids[row] = next.next() ?? 0
            }
            result.append(Snapshot.Section(name: expected.name, ids: ids))
        }
        // Updates must name the row's place before and after the batch.
        for update in batch.updates {
            guard sections[update.old.section].ids[update.old.row] == update.id else {
                throw InvalidUpdate(message: "an update names row \(update.old) for object \(update.id), which was not there before the update")
            }
            guard update.new.section < result.count, update.new.row < result[update.new.section].ids.count,
                  result[update.new.section].ids[update.new.row] == update.id else {
                throw InvalidUpdate(message: "an update names new row \(update.new) for object \(update.id), which is not where the object is after the update")
            }
        }
        guard result.map(\.ids) == after.sections.map(\.ids) else {
            throw InvalidUpdate(message: "the table shows rows in another order than the data source after the update: \(result.map(\.ids)) against \(after.sections.map(\.ids))")
        }
        sections = result
    }

    private func checkSections(_ batch: ChangeBatch, oldCount: Int, newCount: Int) throws {
        guard Set(batch.sectionDeletes).count == batch.sectionDeletes.count else {
            throw InvalidUpdate(message: "attempt to delete the same section twice")
        }
        guard Set(batch.sectionInserts).count == batch.sectionInserts.count else {
            throw InvalidUpdate(message: "attempt to insert the same section twice")
        }
        for section in batch.sectionDeletes where !(0..<oldCount).contains(section) {
            throw InvalidUpdate(message: "attempt to delete section \(section), but there are only \(oldCount) sections before the update")
        }
        let expected = oldCount - batch.sectionDeletes.count + batch.sectionInserts.count
        guard expected == newCount else {
            throw InvalidUpdate(message: "Invalid update: invalid number of sections. The number of sections contained in the table view after the update (\(newCount)) must be equal to the number of sections contained in the table view before the update (\(oldCount)), plus or minus the number of sections inserted or deleted (\(batch.sectionInserts.count) inserted, \(batch.sectionDeletes.count) deleted).")
        }
        for section in batch.sectionInserts where !(0..<newCount).contains(section) {
            throw InvalidUpdate(message: "attempt to insert section \(section) but there are only \(newCount) sections after the update")
        }
    }

    private func checkOldRows(_ batch: ChangeBatch, deletedSections: Set<Int>) throws {
        var deleted = Set<IndexPath>(), reloaded = Set<IndexPath>(), movedFrom = Set<IndexPath>()
        func checkExists(_ path: IndexPath, _ verb: String) throws {
            guard path.section < sections.count else {
                throw InvalidUpdate(message: "attempt to \(verb) row \(path.row) from section \(path.section), but there are only \(sections.count) sections before the update")
            }
            guard path.row < sections[path.section].ids.count else {
                throw InvalidUpdate(message: "attempt to \(verb) row \(path.row) from section \(path.section) which only contains \(sections[path.section].ids.count) rows before the update")
            }
        }
        for row in batch.rowDeletes {
            try checkExists(row.indexPath, "delete")
            guard deleted.insert(row.indexPath).inserted else {
                throw InvalidUpdate(message: "attempt to delete the same index path \(row.indexPath) twice")
            }
        }
        for update in batch.updates {
            try checkExists(update.old, "reload")
            if deleted.contains(update.old) { throw InvalidUpdate(message: "attempt to delete and reload the same index path (\(update.old))") }
            if deletedSections.contains(update.old.section) {
                throw InvalidUpdate(message: "attempt to reload row \(update.old.row) in section \(update.old.section), which is being deleted")
            }
            guard reloaded.insert(update.old).inserted else {
                throw InvalidUpdate(message: "attempt to reload the same index path \(update.old) twice")
            }
        }
        for move in batch.moves {
            try checkExists(move.from, "move")
            if deletedSections.contains(move.from.section) { throw InvalidUpdate(message: "cannot move a row from a deleted section") }
            if deleted.contains(move.from) { throw InvalidUpdate(message: "attempt to perform a delete and a move from the same index path (\(move.from))") }
            if reloaded.contains(move.from) { throw InvalidUpdate(message: "attempt to perform a reload and a move from the same index path (\(move.from))") }
            guard movedFrom.insert(move.from).inserted else {
                throw InvalidUpdate(message: "attempt to move the same index path \(move.from) twice")
            }
        }
    }

    private func checkNewRows(_ batch: ChangeBatch, insertedSections: Set<Int>, newCount: Int) throws {
        var inserted = Set<IndexPath>(), movedTo = Set<IndexPath>()
        for row in batch.rowInserts {
            guard row.indexPath.section < newCount else {
                throw InvalidUpdate(message: "attempt to insert row \(row.indexPath.row) into section \(row.indexPath.section), but there are only \(newCount) sections after the update")
            }
            guard inserted.insert(row.indexPath).inserted else {
                throw InvalidUpdate(message: "attempt to insert the same index path \(row.indexPath) twice")
            }
        }
        for move in batch.moves {
            guard move.to.section < newCount else {
                throw InvalidUpdate(message: "attempt to move a row to section \(move.to.section), but there are only \(newCount) sections after the update")
            }
            if insertedSections.contains(move.to.section) { throw InvalidUpdate(message: "cannot move a row into a newly inserted section") }
            if inserted.contains(move.to) { throw InvalidUpdate(message: "attempt to perform an insert and a move to the same index path (\(move.to))") }
            guard movedTo.insert(move.to).inserted else {
                throw InvalidUpdate(message: "attempt to move two rows to the same index path \(move.to)")
            }
            if move.from == move.to { throw InvalidUpdate(message: "a move from \(move.from) to the same index path, which is an update") }
        }
    }

    // MARK: Array edits

    /// Applies edits one at a time, as NSTableView does, checking each index when it applies.
    public mutating func apply(_ edits: [ArrayEdit]) throws {
        for edit in edits {
            switch edit {
            case .removeSection(let section):
                guard section < sections.count else { throw InvalidUpdate(message: "remove section \(section): only \(sections.count) sections") }
                sections.remove(at: section)
            case .insertSection(let section, let name):
                guard section <= sections.count else { throw InvalidUpdate(message: "insert section \(section): only \(sections.count) sections") }
                sections.insert(Snapshot.Section(name: name, ids: []), at: section)
            case .removeRow(let path):
                guard path.section < sections.count, path.row < sections[path.section].ids.count else {
                    throw InvalidUpdate(message: "remove row \(path): no such row at that moment")
                }
                sections[path.section].ids.remove(at: path.row)
            case .insertRow(let path, let id):
                guard path.section < sections.count, path.row <= sections[path.section].ids.count else {
                    throw InvalidUpdate(message: "insert row \(path): past the end at that moment")
                }
                sections[path.section].ids.insert(id, at: path.row)
            }
        }
    }
}
