import Foundation
import ResultsController

/// What `watch --json` printed, replayed as a table view would: the snapshot, then each
/// batch applied with the table model's rules. Rows are known by their Flickr id.
public struct WatchReplay {
    /// The messages, in order (a snapshot first).
    public let messages: [[String: Any]]
    /// The list after every batch: its rows' Flickr ids, by section.
    public let table: TableModel
    /// The tokens the messages brought the list to, in order.
    public var tokens: [Int64] { messages.compactMap { ($0["token"] as? NSNumber)?.int64Value } }

    public init(_ output: String) throws {
        messages = output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let snapshotRows = ((messages.first?["sections"] as? [[String: Any]])?.first?["rows"] as? [Any]) ?? []
        var table = TableModel(Snapshot(sections: [Snapshot.Section(value: .null, ids: snapshotRows.map(Self.id))]))
        for message in messages.dropFirst() {
            var edits: [ArrayEdit] = []
            let deletes = (message["deletes"] as? [[Int]]) ?? []
            let moves = (message["moves"] as? [[Any]]) ?? []
            let inserts = (message["inserts"] as? [[Any]]) ?? []
            let leaving = deletes.map { IndexPath(row: $0[1], section: $0[0]) } + moves.map { IndexPath(row: $0[1] as? Int ?? 0, section: $0[0] as? Int ?? 0) }
            edits += leaving.sorted(by: >).map { .removeRow($0) }
            let arriving = inserts.map { (IndexPath(row: $0[1] as? Int ?? 0, section: $0[0] as? Int ?? 0), Self.id($0[2])) }
                + moves.map { (IndexPath(row: $0[3] as? Int ?? 0, section: $0[2] as? Int ?? 0), Self.id($0[4])) }
            edits += arriving.sorted { $0.0 < $1.0 }.map { .insertRow($0.0, id: $0.1) }
            try table.apply(edits)
        }
        self.table = table
    }

    /// The replay of what `output` returns once its rows are `expected`, or at `timeout`
    /// (the last commits may still be on their way to the watcher).
    public static func reaching(_ expected: [Int64], timeout: TimeInterval = 20, of output: () -> String) throws -> WatchReplay {
        let deadline = Date().addingTimeInterval(timeout)
        var replay = try WatchReplay(output())
        while replay.ids != expected && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            replay = try WatchReplay(output())
        }
        return replay
    }

    /// The rows' Flickr ids in list order.
    public var ids: [Int64] { table.sections.flatMap(\.ids) }

    /// A row's id as a number: a Flickr photo id as it is, another id (a region's place id)
    /// by its FNV-1a hash; -1 when it has none.
    public static func id(_ row: Any?) -> Int64 {
        guard let text = (row as? [String: Any])?["id"] as? String else { return -1 }
        if let number = Int64(text) { return number }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int64(bitPattern: hash)
    }
}
