import Foundation
import PostgreSQL
import Store

extension PostgresStore {
    /// A row whose stored sort key is not its text's: written by a program whose order
    /// differed (another ICU), or behind the store's back. Its rows are listed out of order.
    public struct StaleSortKey: Sendable, Equatable {
        public var entity: String
        public var id: Int64
        public var attribute: String
    }

    /// Every row whose sort key differs from the one this program computes for its text.
    public func staleSortKeys() throws -> [StaleSortKey] {
        try PostgresStoreError.wrapping("cannot read the sort keys of", location: redactedLocation) {
            var stale: [StaleSortKey] = []
            for entity in schema.schema.entities {
                for attribute in schema.sortKeys(of: entity) {
                    stale += try staleSortKeys(entity, attribute)
                }
            }
            return stale
        }
    }

    private func staleSortKeys(_ entity: Entity, _ attribute: String) throws -> [StaleSortKey] {
        let table = PostgresSchema.identifier(entity.name), key = PostgresSchema.identifier(entity.primaryKey)
        let sql = "SELECT \(key) AS id, \(PostgresSchema.identifier(attribute)) AS text, \(PostgresSchema.identifier(PostgresSchema.sortKeyColumn(attribute))) AS key "
            + "FROM \(table) WHERE \(key) > $1 ORDER BY \(key) LIMIT \(Self.pageSize)"
        var stale: [StaleSortKey] = []
        var last = Int64.min
        while true {
            let result = try connection.query(sql, [.integer(last)])
            guard !result.rows.isEmpty else { return stale }
            for row in result.rows.indices {
                guard let id = try result.integer(row, "id") else { continue }
                last = id
                let expected = try result.text(row, "text").map(Collation.localizedStandardSortKey)
                if try result.bytes(row, "key") != expected {
                    stale.append(StaleSortKey(entity: entity.name, id: id, attribute: attribute))
                }
            }
        }
    }
}
