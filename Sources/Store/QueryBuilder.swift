import Foundation

/// Turns a fetch request into SQL: resolves key paths to columns (joining to-one
/// relationships as needed), compiles the predicate with bound arguments, and orders the
/// rows. The primary key ends every ORDER BY, so equal sort keys still give one order.
struct QueryBuilder {
    let schema: Schema
    let root: Entity
    private(set) var arguments: [SQLValue] = []
    private var joins: [(path: String, alias: String, clause: String, entity: Entity)] = []

    static let rootAlias = "t0"

    init(schema: Schema, entityName: String) throws {
        self.schema = schema
        self.root = try schema.entity(named: entityName)
    }

    /// What a query returns.
    enum Selection {
        /// Every stored column of the root entity, primary key first.
        case records
        /// The primary key, then the values of these key paths.
        case keys([String])
        /// `count(*)`.
        case count
    }

    /// The SQL and arguments of `request`.
    static func compile(_ request: FetchRequest, schema: Schema, selecting selection: Selection,
                        extraCondition: FetchPredicate? = nil) throws -> (sql: String, arguments: [SQLValue]) {
        var builder = try QueryBuilder(schema: schema, entityName: request.entityName)
        return try builder.build(request, selecting: selection, extraCondition: extraCondition)
    }

    private mutating func build(_ request: FetchRequest, selecting selection: Selection,
                                extraCondition: FetchPredicate?) throws -> (sql: String, arguments: [SQLValue]) {
        let root = Self.rootAlias
        let primaryKey = "\(root).\(SQL.quote(self.root.primaryKey))"
        var columns: [String]
        switch selection {
        case .records:
            columns = [primaryKey] + self.root.storedColumns.map { "\(root).\(SQL.quote($0))" }
        case .keys(let keyPaths):
            columns = [primaryKey]
            for keyPath in keyPaths { columns.append(try expression(for: keyPath)) }
        case .count:
            columns = [primaryKey]
        }
        // Arguments are bound in text order: the select list (no arguments), WHERE, then
        // ORDER BY (no arguments) and LIMIT.
        var conditions: [String] = []
        if let predicate = request.predicate { conditions.append(try compile(predicate)) }
        if let extraCondition { conditions.append(try compile(extraCondition)) }
        var orderings: [String] = []
        for descriptor in request.sortDescriptors {
            let expression = try expression(for: descriptor.keyPath)
            let collation = descriptor.collation == .binary ? "" : " COLLATE \(descriptor.collation.rawValue)"
            orderings.append("\(expression)\(collation) \(descriptor.ascending ? "ASC" : "DESC")")
        }
        if request.sortDescriptors.last?.keyPath != self.root.primaryKey {
            orderings.append("\(primaryKey) ASC")
        }
        var sql = "SELECT \(columns.joined(separator: ", ")) FROM \(SQL.quote(self.root.name)) AS \(root)"
        for join in joins { sql += " " + join.clause }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if case .count = selection, request.fetchLimit == nil, request.fetchOffset == 0 {
            return ("SELECT count(*) FROM (\(sql))", arguments)
        }
        sql += " ORDER BY " + orderings.joined(separator: ", ")
        if request.fetchLimit != nil || request.fetchOffset > 0 {
            sql += " LIMIT ? OFFSET ?"
            arguments.append(.integer(Int64(request.fetchLimit ?? -1)))
            arguments.append(.integer(Int64(request.fetchOffset)))
        }
        if case .count = selection { sql = "SELECT count(*) FROM (\(sql))" }
        return (sql, arguments)
    }

    // MARK: Key paths

    /// The SQL expression for a key path, adding the joins it crosses.
    mutating func expression(for keyPath: String) throws -> String {
        let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !components.contains(where: \.isEmpty) else {
            throw StoreError(.invalidRequest, "Key path \"\(keyPath)\" has an empty component")
        }
        var entity = root
        var alias = Self.rootAlias
        for (position, component) in components.enumerated() {
            let isLast = position == components.count - 1
            if isLast, component == entity.primaryKey || entity.attribute(named: component) != nil {
                return "\(alias).\(SQL.quote(component))"
            }
            guard let relationship = entity.relationship(named: component) else {
                throw StoreError(.invalidRequest, "Key path \"\(keyPath)\": \(entity.name) has no attribute or relationship \(component)")
            }
            if isLast, let column = relationship.foreignKeyColumn {
                return "\(alias).\(SQL.quote(column))"
            }
            guard relationship.isToOne else {
                throw StoreError(.invalidRequest, "Key path \"\(keyPath)\" crosses the to-many relationship \(entity.name).\(component); only to-one relationships can be crossed")
            }
            let path = components[0...position].joined(separator: ".")
            (entity, alias) = try join(relationship, from: entity, alias: alias, path: path)
            if isLast { return "\(alias).\(SQL.quote(entity.primaryKey))" }
        }
        throw StoreError(.invalidRequest, "Key path \"\(keyPath)\" is empty")
    }

    private mutating func join(_ relationship: Relationship, from entity: Entity, alias: String,
                               path: String) throws -> (Entity, String) {
        if let existing = joins.first(where: { $0.path == path }) { return (existing.entity, existing.alias) }
        let destination = try schema.entity(named: relationship.destination)
        let joinAlias = "j\(joins.count + 1)"
        let condition: String
        if let column = relationship.foreignKeyColumn {
            condition = "\(joinAlias).\(SQL.quote(destination.primaryKey)) = \(alias).\(SQL.quote(column))"
        } else {
            let (_, column) = try schema.foreignKeySide(of: relationship)
            condition = "\(joinAlias).\(SQL.quote(column)) = \(alias).\(SQL.quote(entity.primaryKey))"
        }
        let clause = "LEFT JOIN \(SQL.quote(destination.name)) AS \(joinAlias) ON \(condition)"
        joins.append((path, joinAlias, clause, destination))
        return (destination, joinAlias)
    }

    // MARK: Predicates

    mutating func compile(_ predicate: FetchPredicate) throws -> String {
        switch predicate {
        case .constant(let value):
            return value ? "1" : "0"
        case .compare(let keyPath, let comparison, let value):
            let column = try expression(for: keyPath)
            if value.isNull {
                switch comparison {
                case .equal: return "\(column) IS NULL"
                case .notEqual: return "\(column) IS NOT NULL"
                default: return "0"
                }
            }
            arguments.append(value)
            // As Core Data does, "not equal" also matches NULL.
            return comparison == .notEqual ? "\(column) IS NOT ?" : "\(column) \(comparison.rawValue) ?"
        case .compareKeys(let left, let comparison, let right):
            let leftColumn = try expression(for: left)
            let rightColumn = try expression(for: right)
            switch comparison {
            case .equal: return "\(leftColumn) IS \(rightColumn)"
            case .notEqual: return "\(leftColumn) IS NOT \(rightColumn)"
            default: return "\(leftColumn) \(comparison.rawValue) \(rightColumn)"
            }
        case .isIn(let keyPath, let values):
            let column = try expression(for: keyPath)
            let present = values.filter { !$0.isNull }
            var clauses: [String] = []
            if !present.isEmpty {
                clauses.append(try membership(column, present))
            }
            if present.count < values.count { clauses.append("\(column) IS NULL") }
            return clauses.isEmpty ? "0" : "(" + clauses.joined(separator: " OR ") + ")"
        case .isNull(let keyPath):
            return "\(try expression(for: keyPath)) IS NULL"
        case .text(let keyPath, let match, let pattern, let caseInsensitive):
            var column = try expression(for: keyPath)
            var pattern = pattern
            if caseInsensitive {
                column = "\(SQLFunctions.foldFunction)(\(column))"
                pattern = SQLFunctions.fold(pattern)
            }
            return textMatch(column, match, pattern)
        case .not(let inner):
            // Two-valued logic: a comparison with NULL is false, so its negation is true.
            return "NOT coalesce((\(try compile(inner))), 0)"
        case .and(let parts):
            guard !parts.isEmpty else { return "1" }
            return "(" + (try parts.map { try compile($0) }).joined(separator: " AND ") + ")"
        case .or(let parts):
            guard !parts.isEmpty else { return "0" }
            return "(" + (try parts.map { try compile($0) }).joined(separator: " OR ") + ")"
        }
    }

    private mutating func membership(_ column: String, _ values: [SQLValue]) throws -> String {
        if values.count <= SQL.maximumParametersPerStatement {
            arguments.append(contentsOf: values)
            return "\(column) IN (\(SQL.placeholders(values.count)))"
        }
        // Past the parameter budget, the list travels as one JSON array argument.
        arguments.append(.text(try Self.jsonArray(values)))
        return "\(column) IN (SELECT value FROM json_each(?))"
    }

    static func jsonArray(_ values: [SQLValue]) throws -> String {
        let objects: [Any] = try values.map { value in
            switch value {
            case .integer(let integer): return integer
            case .real(let real): return real
            case .text(let text): return text
            case .null, .blob:
                throw StoreError(.invalidRequest, "An IN list can hold integers, reals and text, not blobs")
            }
        }
        let data = try JSONSerialization.data(withJSONObject: objects)
        return String(decoding: data, as: UTF8.self)
    }

    private mutating func textMatch(_ column: String, _ match: FetchPredicate.TextMatch, _ pattern: String) -> String {
        guard !pattern.isEmpty else { return "\(column) IS NOT NULL" }
        switch match {
        case .contains:
            arguments.append(.text(pattern))
            return "instr(\(column), ?) > 0"
        case .beginsWith:
            arguments.append(.text(pattern))
            return "instr(\(column), ?) = 1"
        case .endsWith:
            // substr counts characters as SQLite does: Unicode scalars.
            arguments.append(.integer(-Int64(pattern.unicodeScalars.count)))
            arguments.append(.text(pattern))
            return "substr(\(column), ?) = ?"
        }
    }
}
