import Foundation
import ResultsController

/// A section of a live list: its name, its identity (the section key's value: JSON null
/// for the NULL section), and its rows.
public struct ListSection<Row: Sendable & Encodable>: Sendable, Encodable {
    /// The section's name: its value as text; `""` for the NULL section (an unsectioned list's).
    public var name: String
    /// The section's identity, written as JSON null, a number or text.
    public var value: SectionValue
    /// The section's rows, in list order.
    public var rows: [Row]

    enum CodingKeys: String, CodingKey { case name, value, rows }

    /// Writes `name`, `value` (null for the NULL section) and `rows`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(JSONSectionValue(value), forKey: .value)
        try container.encode(rows, forKey: .rows)
    }
}

/// A section value as JSON writes it: null, a number, or text.
struct JSONSectionValue: Encodable {
    let value: SectionValue
    init(_ value: SectionValue) { self.value = value }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value.value {
        case .null: try container.encodeNil()
        case .integer(let number): try container.encode(number)
        case .real(let number): try container.encode(number)
        case .text, .blob: try container.encode(value.name)
        }
    }
}

/// What a live list says: first the whole list, then each change as a batch.
public enum ListEvent<Row: Sendable & Encodable>: Sendable, Encodable {
    /// The whole list, as of `token`.
    case snapshot(token: Int64, sections: [ListSection<Row>])
    /// One change, with UIKit's index rules in the results controller's canonical form
    /// (see docs/results-controller.md), bringing the list to `token`.
    case batch(ListBatch<Row>)

    /// The history token the event brings its list to.
    public var token: Int64 {
        switch self {
        case .snapshot(let token, _): return token
        case .batch(let batch): return batch.token
        }
    }

    enum CodingKeys: String, CodingKey { case type, token, sections }

    /// Writes a snapshot as `type`, `token` and `sections`; a batch as `ListBatch` does.
    public func encode(to encoder: Encoder) throws {
        switch self {
        case .snapshot(let token, let sections):
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("snapshot", forKey: .type)
            try container.encode(token, forKey: .token)
            try container.encode(sections, forKey: .sections)
        case .batch(let batch):
            try batch.encode(to: encoder)
        }
    }
}

/// One batch of a live list: index paths as `[section, row]`, rows after the batch.
public struct ListBatch<Row: Sendable & Encodable>: Sendable, Encodable {
    /// A row that arrives: where (after the batch) and what it holds.
    public struct Arrival: Sendable, Encodable {
        /// The section index after the batch.
        public var section: Int
        /// The row index within the section after the batch.
        public var row: Int
        /// The row as it arrives.
        public var value: Row

        /// Writes `[section, row, value]`.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(section)
            try container.encode(row)
            try container.encode(value)
        }
    }

    /// A row that moves or is redrawn: from (before), to (after), and what it holds.
    public struct Change: Sendable, Encodable {
        /// Where the row was before the batch.
        public var from: IndexPath
        /// Where the row is after the batch.
        public var to: IndexPath
        /// The row as it is after the batch.
        public var value: Row

        /// Writes `[fromSection, fromRow, toSection, toRow, value]`.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(from.section)
            try container.encode(from.row)
            try container.encode(to.section)
            try container.encode(to.row)
            try container.encode(value)
        }
    }

    /// A section inserted at `index` (after the batch), with its rows.
    public struct InsertedSection: Sendable, Encodable {
        /// The section's index after the batch.
        public var index: Int
        /// The section's name, value and rows.
        public var section: ListSection<Row>

        enum CodingKeys: String, CodingKey { case index, name, value, rows }

        /// Writes `index`, `name`, `value` and `rows`.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(index, forKey: .index)
            try container.encode(section.name, forKey: .name)
            try container.encode(JSONSectionValue(section.value), forKey: .value)
            try container.encode(section.rows, forKey: .rows)
        }
    }

    /// The history token the batch brings the list to.
    public var token: Int64
    /// The indexes, before the batch, of the sections deleted.
    public var sectionDeletes: [Int]
    /// The sections inserted, with their rows, by index after the batch.
    public var sectionInserts: [InsertedSection]
    /// Rows deleted, at their index paths before the batch.
    public var deletes: [IndexPath]
    /// Rows inserted, with where they go after the batch.
    public var inserts: [Arrival]
    /// Rows that move, with their content after the batch.
    public var moves: [Change]
    /// Rows redrawn in place, from their path before the batch to their path after it.
    public var updates: [Change]

    enum CodingKeys: String, CodingKey { case type, token, sectionDeletes, sectionInserts, deletes, inserts, moves, updates }

    /// Writes `type: "batch"`, the token, and each list; index paths as `[section, row]`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("batch", forKey: .type)
        try container.encode(token, forKey: .token)
        try container.encode(sectionDeletes, forKey: .sectionDeletes)
        try container.encode(sectionInserts, forKey: .sectionInserts)
        try container.encode(deletes.map { [$0.section, $0.row] }, forKey: .deletes)
        try container.encode(inserts, forKey: .inserts)
        try container.encode(moves, forKey: .moves)
        try container.encode(updates, forKey: .updates)
    }
}

