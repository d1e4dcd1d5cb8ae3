import Foundation

/// A table of sections of ids that applies batches with every rule UIKit enforces, failing
/// with UIKit's own message when a rule is broken. Use it to check a batch before handing
/// it to a real table, or as the model of a terminal table or a web page's list.
///
/// It needs nothing but the table as it was and the batch: the table after a batch is
/// derived from the two (`apply(_:)`), so a batch that is wrong for the table it is applied
/// to is refused even when it agrees with itself.
public struct TableModel: Sendable, Equatable {
    /// The table's sections, each with its row ids, in order.
    public private(set) var sections: [Snapshot.Section]

    /// A table showing this snapshot.
    public init(_ snapshot: Snapshot) { sections = snapshot.sections }

    /// A table of these sections; empty by default.
    public init(sections: [Snapshot.Section] = []) { self.sections = sections }

    /// The table as a snapshot.
    public var snapshot: Snapshot { Snapshot(sections: sections) }

    /// A broken rule, with the text UIKit would stop with.
    public struct InvalidUpdate: Error, Sendable, CustomStringConvertible, Equatable {
        /// UIKit's message for the broken rule.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    // MARK: Batches

    /// Applies `batch` as `performBatchUpdates` would, to the table as it is. Throws when a
    /// UIKit rule is broken, when the batch is not in `ChangeBatch`'s canonical form (a row
    /// operation inside a deleted or inserted section, an object named twice), or when it
    /// names an object at a row that holds another.
    public mutating func apply(_ batch: ChangeBatch) throws {
        try checkStructure(batch)
        let oldCount = sections.count
        let newCount = oldCount - batch.sectionDeletes.count + batch.sectionInserts.count
        let deletedSections = Set(batch.sectionDeletes)
        let inserts = Dictionary(batch.sectionInserts.map { ($0.index, $0.section) }, uniquingKeysWith: { first, _ in first })

        // Old sections that survive, in order, fill the new slots not taken by inserts.
        let survivingOld = (0..<oldCount).filter { !deletedSections.contains($0) }
        let freeNew = (0..<newCount).filter { inserts[$0] == nil }
        let oldForNew = Dictionary(uniqueKeysWithValues: zip(freeNew, survivingOld))

        var leaving = Set<IndexPath>()
        for row in batch.rowDeletes { leaving.insert(row.indexPath) }
        for move in batch.moves { leaving.insert(move.from) }
        var arriving: [Int: [Int: Int64]] = [:]
        for row in batch.rowInserts { arriving[row.indexPath.section, default: [:]][row.indexPath.row] = row.id }
        for move in batch.moves { arriving[move.to.section, default: [:]][move.to.row] = move.id }

        var result: [Snapshot.Section] = []
        for newSection in 0..<newCount {
            if let inserted = inserts[newSection] {
                result.append(inserted)
                continue
            }
            guard let old = oldForNew[newSection] else { continue }
            let staying = sections[old].ids.enumerated().filter { !leaving.contains(IndexPath(row: $0.offset, section: old)) }.map(\.element)
            let arrivals = arriving[newSection] ?? [:]
            let count = staying.count + arrivals.count
            var ids = [Int64](repeating: 0, count: count)
            var taken = [Bool](repeating: false, count: count)
            for (row, id) in arrivals {
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
            result.append(Snapshot.Section(value: sections[old].value, ids: ids))
        }
        try checkUpdates(batch, after: result)
        try checkNoDuplicates(result)
        sections = result
    }

    /// `apply(_:)`, then checks that the table holds what the data source holds afterwards
    /// (`after`), as UIKit asks its data source for the counts: a batch that leaves another
    /// count or order than the data source's is refused with UIKit's message.
    public mutating func apply(_ batch: ChangeBatch, after: Snapshot) throws {
        try checkStructure(batch)
        try checkCounts(batch, after: after)
        var model = self
        try model.apply(batch)
        guard model.sections.map(\.ids) == after.sections.map(\.ids) else {
            throw InvalidUpdate(message: "the table shows rows in another order than the data source after the update: \(model.sections.map(\.ids)) against \(after.sections.map(\.ids))")
        }
        guard model.sections.map(\.value) == after.sections.map(\.value) else {
            throw InvalidUpdate(message: "the table's sections are \(model.sections.map(\.value)) after the update, the data source's \(after.sections.map(\.value))")
        }
        self = model
    }

    // MARK: Checks

    /// The rules that need only the table before and the batch's index paths.
    private func checkStructure(_ batch: ChangeBatch) throws {
        let newCount = sections.count - batch.sectionDeletes.count + batch.sectionInserts.count
        try checkSections(batch, oldCount: sections.count, newCount: newCount)
        try checkOldRows(batch, deletedSections: Set(batch.sectionDeletes))
        try checkNewRows(batch, insertedSections: Set(batch.insertedSectionIndexes), newCount: newCount)
        try checkEachObjectOnce(batch)
    }

    private func checkSections(_ batch: ChangeBatch, oldCount: Int, newCount: Int) throws {
        guard Set(batch.sectionDeletes).count == batch.sectionDeletes.count else {
            throw InvalidUpdate(message: "attempt to delete the same section twice")
        }
        guard Set(batch.insertedSectionIndexes).count == batch.sectionInserts.count else {
            throw InvalidUpdate(message: "attempt to insert the same section twice")
        }
        for section in batch.sectionDeletes where !(0..<oldCount).contains(section) {
            throw InvalidUpdate(message: "attempt to delete section \(section), but there are only \(oldCount) sections before the update")
        }
        for section in batch.insertedSectionIndexes where !(0..<newCount).contains(section) {
            throw InvalidUpdate(message: "attempt to insert section \(section) but there are only \(newCount) sections after the update")
        }
    }

    /// The counts UIKit compares with its data source: sections, then rows per section.
    private func checkCounts(_ batch: ChangeBatch, after: Snapshot) throws {
        let oldCount = sections.count, newCount = after.sections.count
        let expected = oldCount - batch.sectionDeletes.count + batch.sectionInserts.count
        guard expected == newCount else {
            throw InvalidUpdate(message: "Invalid update: invalid number of sections. The number of sections contained in the table view after the update (\(newCount)) must be equal to the number of sections contained in the table view before the update (\(oldCount)), plus or minus the number of sections inserted or deleted (\(batch.sectionInserts.count) inserted, \(batch.sectionDeletes.count) deleted).")
        }
        let deletedSections = Set(batch.sectionDeletes)
        let inserts = Dictionary(batch.sectionInserts.map { ($0.index, $0.section) }, uniquingKeysWith: { first, _ in first })
        let survivingOld = (0..<oldCount).filter { !deletedSections.contains($0) }
        let freeNew = (0..<newCount).filter { inserts[$0] == nil }
        for (newSection, old) in zip(freeNew, survivingOld) {
            let before = sections[old].ids.count
            let deleted = batch.rowDeletes.filter { $0.indexPath.section == old }.count
            let movedOut = batch.moves.filter { $0.from.section == old }.count
            let inserted = batch.rowInserts.filter { $0.indexPath.section == newSection }.count
            let movedIn = batch.moves.filter { $0.to.section == newSection }.count
            let count = after.sections[newSection].ids.count
            guard before - deleted - movedOut + inserted + movedIn == count else {
                throw InvalidUpdate(message: "Invalid update: invalid number of rows in section \(newSection). The number of rows contained in an existing section after the update (\(count)) must be equal to the number of rows contained in that section before the update (\(before)), plus or minus the number of rows inserted or deleted from that section (\(inserted) inserted, \(deleted) deleted) and plus or minus the number of rows moved into or out of that section (\(movedIn) moved in, \(movedOut) moved out).")
            }
        }
        for (index, section) in inserts where index < newCount && section.ids.count != after.sections[index].ids.count {
            throw InvalidUpdate(message: "Invalid update: invalid number of rows in section \(index). The number of rows contained in an inserted section after the update (\(after.sections[index].ids.count)) must be equal to the number of rows the batch inserts with it (\(section.ids.count)).")
        }
    }

    private func checkOldRows(_ batch: ChangeBatch, deletedSections: Set<Int>) throws {
        var deleted = Set<IndexPath>(), reloaded = Set<IndexPath>(), movedFrom = Set<IndexPath>()
        func checkExists(_ path: IndexPath, _ id: Int64, _ verb: String) throws {
            guard path.section < sections.count else {
                throw InvalidUpdate(message: "attempt to \(verb) row \(path.row) from section \(path.section), but there are only \(sections.count) sections before the update")
            }
            guard path.row < sections[path.section].ids.count else {
                throw InvalidUpdate(message: "attempt to \(verb) row \(path.row) from section \(path.section) which only contains \(sections[path.section].ids.count) rows before the update")
            }
            guard sections[path.section].ids[path.row] == id else {
                throw InvalidUpdate(message: "the batch would \(verb) object \(id) at \(path), but that row holds object \(sections[path.section].ids[path.row]) before the update")
            }
        }
        for row in batch.rowDeletes {
            try checkExists(row.indexPath, row.id, "delete")
            if deletedSections.contains(row.indexPath.section) {
                throw InvalidUpdate(message: "a row delete at \(row.indexPath) inside deleted section \(row.indexPath.section) (the section delete covers its rows)")
            }
            guard deleted.insert(row.indexPath).inserted else {
                throw InvalidUpdate(message: "attempt to delete the same index path \(row.indexPath) twice")
            }
        }
        for update in batch.updates {
            try checkExists(update.old, update.id, "reload")
            if deleted.contains(update.old) { throw InvalidUpdate(message: "attempt to delete and reload the same index path (\(update.old))") }
            if deletedSections.contains(update.old.section) {
                throw InvalidUpdate(message: "attempt to reload row \(update.old.row) in section \(update.old.section), which is being deleted")
            }
            guard reloaded.insert(update.old).inserted else {
                throw InvalidUpdate(message: "attempt to reload the same index path \(update.old) twice")
            }
        }
        for move in batch.moves {
            try checkExists(move.from, move.id, "move")
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
            if insertedSections.contains(row.indexPath.section) {
                throw InvalidUpdate(message: "a row insert at \(row.indexPath) inside inserted section \(row.indexPath.section) (the section insert carries its rows)")
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

    /// The canonical form: each object in at most one of delete, insert, move, update.
    private func checkEachObjectOnce(_ batch: ChangeBatch) throws {
        var seen = Set<Int64>()
        let named = batch.rowDeletes.map(\.id) + batch.rowInserts.map(\.id) + batch.moves.map(\.id) + batch.updates.map(\.id)
        for id in named where !seen.insert(id).inserted {
            throw InvalidUpdate(message: "object \(id) is named twice among the batch's deletes, inserts, moves and updates")
        }
    }

    /// Updates name the row's place before and after the batch.
    private func checkUpdates(_ batch: ChangeBatch, after result: [Snapshot.Section]) throws {
        for update in batch.updates {
            guard update.new.section < result.count, update.new.row < result[update.new.section].ids.count,
                  result[update.new.section].ids[update.new.row] == update.id else {
                throw InvalidUpdate(message: "an update names new row \(update.new) for object \(update.id), which is not where the object is after the update")
            }
        }
    }

    private func checkNoDuplicates(_ result: [Snapshot.Section]) throws {
        var seen = Set<Int64>()
        for section in result {
            for id in section.ids where !seen.insert(id).inserted {
                throw InvalidUpdate(message: "object \(id) is in the table twice after the update")
            }
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
            case .insertSection(let section, let value):
                guard section <= sections.count else { throw InvalidUpdate(message: "insert section \(section): only \(sections.count) sections") }
                sections.insert(Snapshot.Section(value: value, ids: []), at: section)
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
