import Foundation
import TopRegionsKit

// The columns each kind of row shows, shared by the list commands and `watch`.
protocol TableRow {
    static var columns: [(String, Table.Kind)] { get }
    var cells: [String] { get }
}

extension RegionRow: TableRow {
    static let columns: [(String, Table.Kind)] = [("#", .number), ("REGION", .text), ("COUNTRY", .text), ("PHOTOGRAPHERS", .number), ("PHOTOS", .number)]
    var cells: [String] { ["\(rank)", name, country ?? "", "\(photographers)", "\(photos)"] }
}

extension PhotoRow: TableRow {
    static let columns: [(String, Table.Kind)] = [("ID", .key), ("TITLE", .text), ("PHOTOGRAPHER", .text), ("UPLOADED", .key)]
    var cells: [String] { [id, title, photographer ?? "", uploaded?.iso8601 ?? ""] }
}

extension RecentRow: TableRow {
    static let columns: [(String, Table.Kind)] = [("ID", .key), ("TITLE", .text), ("VIEWED", .key)]
    var cells: [String] { [id, title, lastViewed.iso8601] }
}

extension FavoriteRow: TableRow {
    static let columns: [(String, Table.Kind)] = [("#", .number), ("ID", .key), ("TITLE", .text)]
    var cells: [String] { ["\(position)", id, title] }
}

/// The table of some rows, with a heading before each section that has a name.
func table<Row: TableRow>(_ sections: [(heading: String?, rows: [Row])]) -> Table {
    var table = Table(Row.columns)
    for section in sections {
        if let heading = section.heading { table.heading("— \(heading) —") }
        for row in section.rows { table.append(row.cells) }
    }
    return table
}

/// Prints rows as JSON or a table, or says that there are none (and what to do).
/// `orderedBy` names the column the rows are ordered by, which is never dropped.
func show<Row: TableRow & Encodable>(_ rows: [Row], _ output: Output, empty: String, orderedBy: String? = nil) throws {
    if output.json { return try output.emit(rows) }
    if rows.isEmpty { return output.line(empty) }
    var shown = table([(nil, rows)])
    shown.orderedBy = orderedBy.flatMap { name in Row.columns.firstIndex { $0.0 == name } }
    output.table(shown)
}
