import Foundation
import Store

/// Where an object is, before or after a batch.
struct Placement {
    var id: Int64
    var global: Int
    var path: IndexPath
    var sectionKey: SectionValue
}

/// An object present before and after a batch.
struct Survivor {
    var old: Placement
    var new: Placement
    /// Its content changed (report it updated).
    var contentChanged: Bool
}

/// Turns placements into a `ChangeBatch` that obeys UIKit's rules, and a batch into array
/// edits.
enum BatchBuilder {
    /// The survivors that can stay where they are (not be moved): the heaviest subset whose
    /// relative order is the same before and after (a weighted longest increasing
    /// subsequence, O(m log m)). Survivors that changed section, or whose shown content
    /// changed along with their index path, never stay. Those with
    /// equal old and new index paths weigh more than all others together, so they always
    /// stay (a move to the same index path is not allowed).
    static func stableSurvivors(_ survivors: [Survivor]) -> Set<Int64> {
        // A survivor whose shown content changed and whose index path changed is a move
        // (flagged updated), never an update with two different paths: two objects that
        // swap sort values are two moves (Apple reported a move and an update).
        let candidates = survivors.filter { survivor in
            survivor.old.sectionKey == survivor.new.sectionKey && (!survivor.contentChanged || survivor.old.path == survivor.new.path)
        }.sorted { $0.new.global < $1.new.global }
        guard !candidates.isEmpty else { return [] }
        let heavy = candidates.count + 1
        let weights = candidates.map { $0.old.path == $0.new.path ? heavy : 1 }
        // Compress old positions to 1...m for a Fenwick tree of prefix maxima.
        let oldRanks: [Int] = {
            let sorted = candidates.indices.sorted { candidates[$0].old.global < candidates[$1].old.global }
            var ranks = [Int](repeating: 0, count: candidates.count)
            for (rank, index) in sorted.enumerated() { ranks[index] = rank + 1 }
            return ranks
        }()
        var tree = [(weight: Int, index: Int)](repeating: (0, -1), count: candidates.count + 1)
        var best = [Int](repeating: 0, count: candidates.count)
        var previous = [Int](repeating: -1, count: candidates.count)
        for index in candidates.indices {
            var position = oldRanks[index] - 1
            var bestBefore = (weight: 0, index: -1)
            while position > 0 {
                if tree[position].weight > bestBefore.weight { bestBefore = tree[position] }
                position -= position & -position
            }
            best[index] = bestBefore.weight + weights[index]
            previous[index] = bestBefore.index
            position = oldRanks[index]
            while position <= candidates.count {
                if best[index] > tree[position].weight { tree[position] = (best[index], index) }
                position += position & -position
            }
        }
        var stable = Set<Int64>()
        var cursor = best.indices.max { best[$0] < best[$1] } ?? -1
        while cursor >= 0 {
            stable.insert(candidates[cursor].old.id)
            cursor = previous[cursor]
        }
        return stable
    }

    /// Which sections a batch deletes and inserts: those that go or come, and those that
    /// stay but change their order relative to the others (the fewest: all but a longest
    /// run in the same order), each deleted at its old index and inserted at its new one.
    struct SectionPlan {
        var deleted: Set<Int>
        var inserted: Set<Int>
        var oldIndex: [SectionValue: Int]
        var newIndex: [SectionValue: Int]

        init(old: [SectionValue], new: [SectionValue]) {
            oldIndex = Dictionary(old.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            newIndex = Dictionary(new.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            deleted = Set(old.indices.filter { [newIndex] in newIndex[old[$0]] == nil })
            inserted = Set(new.indices.filter { [oldIndex] in oldIndex[new[$0]] == nil })
            // Staying sections in their new order, by old index: those outside a longest
            // increasing run are replaced.
            let staying = new.compactMap { [oldIndex] value in oldIndex[value].map { (value: value, old: $0) } }
            let kept = Set(BatchBuilder.longestIncreasingRun(staying.map(\.old)).map { staying[$0].value })
            for entry in staying where !kept.contains(entry.value) { replace(entry.value) }
        }

        /// Reports a staying section as deleted and inserted again.
        mutating func replace(_ value: SectionValue) {
            if let old = oldIndex[value] { deleted.insert(old) }
            if let new = newIndex[value] { inserted.insert(new) }
        }
    }

    /// The batch, or nil when a survivor that must move within its section has equal old and
    /// new index paths (the caller then diffs the whole result, where such survivors always
    /// stay). `sectionIDs` gives the ids of a section after the batch, by new index.
    static func batch(oldSections: [SectionValue], newSections: [SectionValue], removed: [Placement], inserted: [Placement],
                      survivors: [Survivor], stable: Set<Int64>, sectionIDs: (Int) -> [Int64]) -> ChangeBatch? {
        var plan = SectionPlan(old: oldSections, new: newSections)
        // An object that changes section while keeping its index path cannot be a move (a
        // move onto the same index path is refused): its new section is replaced instead,
        // and the object only leaves its old one.
        while let clash = survivors.first(where: { survivor in
            survivor.old.sectionKey != survivor.new.sectionKey && survivor.old.path == survivor.new.path
                && !plan.deleted.contains(survivor.old.path.section) && !plan.inserted.contains(survivor.new.path.section)
        }) {
            plan.replace(clash.new.sectionKey)
        }
        var batch = ChangeBatch()
        batch.sectionDeletes = plan.deleted.sorted()
        batch.sectionInserts = plan.inserted.sorted().map { index in
            ChangeBatch.SectionInsert(index: index, section: Snapshot.Section(value: newSections[index], ids: sectionIDs(index)))
        }
        batch.rowDeletes = removed.filter { !plan.deleted.contains($0.path.section) }.map { ChangeBatch.Row(id: $0.id, indexPath: $0.path) }
        batch.rowInserts = inserted.filter { !plan.inserted.contains($0.path.section) }.map { ChangeBatch.Row(id: $0.id, indexPath: $0.path) }
        for survivor in survivors {
            let leavesDeleted = plan.deleted.contains(survivor.old.path.section)
            let entersInserted = plan.inserted.contains(survivor.new.path.section)
            switch (leavesDeleted, entersInserted) {
            case (true, true):
                continue  // both sides are covered by section operations
            case (true, false):
                batch.rowInserts.append(ChangeBatch.Row(id: survivor.old.id, indexPath: survivor.new.path))
            case (false, true):
                batch.rowDeletes.append(ChangeBatch.Row(id: survivor.old.id, indexPath: survivor.old.path))
            case (false, false):
                if stable.contains(survivor.old.id) {
                    if survivor.contentChanged {
                        batch.updates.append(ChangeBatch.Update(id: survivor.old.id, old: survivor.old.path, new: survivor.new.path))
                    }
                } else if survivor.old.path == survivor.new.path {
                    return nil
                } else {
                    batch.moves.append(ChangeBatch.Move(id: survivor.old.id, from: survivor.old.path, to: survivor.new.path,
                                                       updated: survivor.contentChanged))
                }
            }
        }
        batch.rowDeletes.sort { $0.indexPath < $1.indexPath }
        batch.rowInserts.sort { $0.indexPath < $1.indexPath }
        batch.moves.sort { $0.to < $1.to }
        batch.updates.sort { $0.old < $1.old }
        return batch
    }

    /// Positions of a longest strictly increasing subsequence of `values`, in order
    /// (patience sorting, O(n log n)).
    static func longestIncreasingRun(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // positions: tails[k] ends the best run of length k + 1
        var previous = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var run: [Int] = []
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            run.append(cursor)
            cursor = previous[cursor]
        }
        return run.reversed()
    }

    /// The batch as edits applied one at a time: rows out of staying sections (highest
    /// first), sections out, then sections in and rows in, lowest first (an inserted
    /// section is inserted empty and filled row by row).
    static func edits(_ batch: ChangeBatch) -> [ArrayEdit] {
        let leaving = batch.rowDeletes.map(\.indexPath) + batch.moves.map(\.from)
        var edits: [ArrayEdit] = leaving.sorted(by: >).map { .removeRow($0) }
        edits += batch.sectionDeletes.sorted(by: >).map { .removeSection($0) }
        var arriving = batch.rowInserts.map { ($0.indexPath, $0.id) } + batch.moves.map { ($0.to, $0.id) }
        for insert in batch.sectionInserts {
            arriving += insert.section.ids.enumerated().map { (IndexPath(row: $0.offset, section: insert.index), $0.element) }
        }
        arriving.sort { $0.0 < $1.0 }
        var sectionsIn = batch.sectionInserts.makeIterator()
        var nextSection = sectionsIn.next()
        for (path, id) in arriving {
            while let section = nextSection, section.index <= path.section {
                edits.append(.insertSection(section.index, section.section.value))
                nextSection = sectionsIn.next()
            }
            edits.append(.insertRow(path, id: id))
        }
        while let section = nextSection {
            edits.append(.insertSection(section.index, section.section.value))
            nextSection = sectionsIn.next()
        }
        return edits
    }
}

extension ChangeBatch {
    /// The batch, in the canonical form, that turns one section holding the objects `old`
    /// into one holding `new` (both in order); an object of `contentChanged` that stays is
    /// an update, one that moves a move flagged `updated`. For a list that shows a part of
    /// another controller's results (one section of it, the first rows of one).
    public static func difference(from old: [Int64], to new: [Int64], contentChanged: Set<Int64>) -> ChangeBatch {
        func placements(_ ids: [Int64]) -> [Int64: Placement] {
            var result: [Int64: Placement] = [:]
            result.reserveCapacity(ids.count)
            for (row, id) in ids.enumerated() { result[id] = Placement(id: id, global: row, path: IndexPath(row: row, section: 0), sectionKey: .null) }
            return result
        }
        let before = placements(old), after = placements(new)
        let removed = old.compactMap { before[$0] }.filter { after[$0.id] == nil }
        let inserted = new.compactMap { after[$0] }.filter { before[$0.id] == nil }
        let survivors = old.compactMap { id -> Survivor? in
            guard let was = before[id], let now = after[id] else { return nil }
            return Survivor(old: was, new: now, contentChanged: contentChanged.contains(id))
        }
        let stable = BatchBuilder.stableSurvivors(survivors)
        if let batch = BatchBuilder.batch(oldSections: [.null], newSections: [.null], removed: removed, inserted: inserted,
                                          survivors: survivors, stable: stable, sectionIDs: { _ in new }) {
            return batch
        }
        // Cannot happen in one section (a survivor on its own index path always stays);
        // should it, every row is replaced.
        var replaced = ChangeBatch()
        replaced.rowDeletes = old.enumerated().map { Row(id: $0.element, indexPath: IndexPath(row: $0.offset, section: 0)) }
        replaced.rowInserts = new.enumerated().map { Row(id: $0.element, indexPath: IndexPath(row: $0.offset, section: 0)) }
        return replaced
    }
}
