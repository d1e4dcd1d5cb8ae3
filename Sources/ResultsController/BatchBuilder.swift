import Foundation
import Store

/// Where an object is, before or after a batch.
struct Placement {
    var id: Int64
    var global: Int
    var path: IndexPath
    var sectionKey: SQLValue
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

    /// The batch, or nil when a survivor that must move within its section has equal old and
    /// new index paths (the caller then diffs the whole result, where such survivors always
    /// stay).
    static func batch(oldSectionKeys: [SQLValue], newSectionKeys: [SQLValue], removed: [Placement], inserted: [Placement],
                      survivors: [Survivor], stable: Set<Int64>) -> ChangeBatch? {
        var batch = ChangeBatch()
        let oldKeys = Set(oldSectionKeys), newKeys = Set(newSectionKeys)
        batch.sectionDeletes = oldSectionKeys.indices.filter { !newKeys.contains(oldSectionKeys[$0]) }
        batch.sectionInserts = newSectionKeys.indices.filter { !oldKeys.contains(newSectionKeys[$0]) }
        let deletedSections = Set(batch.sectionDeletes), insertedSections = Set(batch.sectionInserts)
        batch.rowDeletes = removed.map { ChangeBatch.Row(id: $0.id, indexPath: $0.path) }
        batch.rowInserts = inserted.map { ChangeBatch.Row(id: $0.id, indexPath: $0.path) }
        for survivor in survivors {
            if stable.contains(survivor.old.id) {
                if survivor.contentChanged {
                    batch.updates.append(ChangeBatch.Update(id: survivor.old.id, old: survivor.old.path, new: survivor.new.path))
                }
            } else if deletedSections.contains(survivor.old.path.section) || insertedSections.contains(survivor.new.path.section)
                        || (survivor.old.path == survivor.new.path && survivor.old.sectionKey != survivor.new.sectionKey) {
                // Out of a deleted section, into an inserted one, or into another section at
                // the same index path: a move cannot say it, a delete and an insert can.
                batch.rowDeletes.append(ChangeBatch.Row(id: survivor.old.id, indexPath: survivor.old.path))
                batch.rowInserts.append(ChangeBatch.Row(id: survivor.old.id, indexPath: survivor.new.path))
            } else if survivor.old.path == survivor.new.path {
                return nil
            } else {
                batch.moves.append(ChangeBatch.Move(id: survivor.old.id, from: survivor.old.path, to: survivor.new.path,
                                                   updated: survivor.contentChanged))
            }
        }
        batch.rowDeletes.sort { $0.indexPath < $1.indexPath }
        batch.rowInserts.sort { $0.indexPath < $1.indexPath }
        batch.moves.sort { $0.to < $1.to }
        batch.updates.sort { $0.old < $1.old }
        return batch
    }

    /// The batch as edits applied one at a time: rows out (highest first), sections out,
    /// sections in, rows in (lowest first). Rows of deleted sections go with their section.
    static func edits(_ batch: ChangeBatch, newSectionNames: [String]) -> [ArrayEdit] {
        let deletedSections = Set(batch.sectionDeletes)
        var leaving = batch.rowDeletes.map(\.indexPath) + batch.moves.map(\.from)
        leaving.removeAll { deletedSections.contains($0.section) }
        var edits: [ArrayEdit] = leaving.sorted(by: >).map { .removeRow($0) }
        edits += batch.sectionDeletes.sorted(by: >).map { .removeSection($0) }
        edits += batch.sectionInserts.sorted().map { .insertSection($0, name: newSectionNames[$0]) }
        let arriving = batch.rowInserts.map { ($0.indexPath, $0.id) } + batch.moves.map { ($0.to, $0.id) }
        edits += arriving.sorted { $0.0 < $1.0 }.map { .insertRow($0.0, id: $0.1) }
        return edits
    }
}
