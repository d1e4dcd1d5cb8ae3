import Foundation

/// Turns a fetch request into SQL: resolves key paths to columns (joining to-one
/// relationships as needed), compiles the predicate with bound arguments, and orders the
/// rows. The primary key ends every ORDER BY, so equal sort keys still give one order.
///
/// On PostgreSQL (`SQLDialect`) the same request gives the same rows in the same order as
/// on SQLite: text compares and orders by bytes (`COLLATE "C"`), `localizedStandard` by the
/// stored sort key, NULLs first as SQLite puts them, and NULL is never equal to a value.
struct QueryBuilder {
    let schema: Schema
    let root: Entity
    let dialect: SQLDialect
    private(set) var arguments: [SQLValue] = []
    private var joins: [(path: String, alias: String, clause: String, entity: Entity)] = []

    static let rootAlias = "t0"

    init(schema: Schema, entityName: String, dialect: SQLDialect = .sqlite) throws {
        self.schema = schema
        self.root = try schema.entity(named: entityName)
        self.dialect = dialect
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
    static func compile(_ request: FetchRequest, schema: Schema, dialect: SQLDialect = .sqlite, selecting selection: Selection,
                        extraCondition: FetchPredicate? = nil) throws -> (sql: String, arguments: [SQLValue]) {
        var builder = try QueryBuilder(schema: schema, entityName: request.entityName, dialect: dialect)
        return try builder.build(request, selecting: selection, extraCondition: extraCondition)
    }

    private mutating func build(_ request: FetchRequest, selecting selection: Selection,
                                extraCondition: FetchPredicate?) throws -> (sql: String, arguments: [SQLValue]) {
        let root = Self.rootAlias
        let primaryKey = "\(root).\(name(self.root.primaryKey))"
        var columns: [String]
        switch selection {
        case .records:
            columns = [primaryKey] + self.root.storedColumns.map { "\(root).\(name($0))" }
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
        if let after = request.startingAfter { conditions.append(try keysetCondition(request.sortDescriptors, after: after)) }
        var orderings: [String] = []
        for descriptor in request.sortDescriptors {
            orderings += try ordering(descriptor)
        }
        if request.sortDescriptors.last?.keyPath != self.root.primaryKey {
            orderings.append("\(primaryKey) ASC")
        }
        var sql = "SELECT \(columns.joined(separator: ", ")) FROM \(name(self.root.name)) AS \(root)"
        for join in joins { sql += " " + join.clause }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if case .count = selection, request.fetchLimit == nil, request.fetchOffset == 0 {
            return ("SELECT count(*) FROM (\(sql)) AS counted", arguments)
        }
        sql += " ORDER BY " + orderings.joined(separator: ", ")
        if request.fetchLimit != nil || request.fetchOffset > 0 {
            // No limit is -1 to SQLite, NULL (LIMIT ALL) to PostgreSQL.
            let noLimit: SQLValue = dialect.isPostgreSQL ? .null : .integer(-1)
            sql += " LIMIT \(bind(request.fetchLimit.map { .integer(Int64($0)) } ?? noLimit))"
            sql += " OFFSET \(bind(.integer(Int64(request.fetchOffset))))"
        }
        if case .count = selection { sql = "SELECT count(*) FROM (\(sql)) AS counted" }
        return (sql, arguments)
    }

    /// A name as the dialect writes it.
    private func name(_ identifier: String) -> String { dialect.identifier(identifier) }

    /// Appends `value` to the arguments and returns its parameter's text.
    private mutating func bind(_ value: SQLValue) -> String {
        arguments.append(value)
        let parameter = dialect.parameter(arguments.count)
        // PostgreSQL gives a parameter the type of what it is compared with: a fraction
        // compared with an integer column would be refused, where SQLite compares numbers.
        if dialect.isPostgreSQL, case .real = value { return parameter + "::double precision" }
        return parameter
    }

    // MARK: Ordering

    /// The ORDER BY terms of one sort descriptor.
    private mutating func ordering(_ descriptor: SortKey) throws -> [String] {
        let column = try resolve(descriptor.keyPath)
        let direction = descriptor.ascending ? "ASC" : "DESC"
        guard case .postgresql(let sortKeyColumns, let indexedKeyBytes) = dialect else {
            let collation = descriptor.collation == .binary ? "" : " COLLATE \(descriptor.collation.rawValue)"
            return ["\(column.expression)\(collation) \(direction)"]
        }
        // SQLite puts NULL before every value; PostgreSQL after, unless told.
        let nulls = column.mayBeNull ? (descriptor.ascending ? " NULLS FIRST" : " NULLS LAST") : ""
        switch descriptor.collation {
        case .binary:
            let collation = column.isText ? " COLLATE \"C\"" : ""
            return ["\(column.expression)\(collation) \(direction)\(nulls)"]
        case .localizedStandard:
            guard column.isText, let keyColumn = sortKeyColumns[column.entity.name]?[column.attribute] else {
                throw StoreError(.invalidRequest, "\(column.entity.name).\(column.attribute) has no localizedStandard sort key in this PostgreSQL store")
            }
            // The prefix an index holds, then the whole key: the key's order, read from the index.
            let key = "\(column.alias).\(name(keyColumn))"
            return ["substring(\(key) FROM 1 FOR \(indexedKeyBytes)) \(direction)\(nulls)", "\(key) \(direction)\(nulls)"]
        case .caseInsensitive:
            throw StoreError(.invalidRequest, "ordering by the caseInsensitive collation is not available on PostgreSQL")
        }
    }

    // MARK: Keyset paging

    /// Rows after the one whose ordering values are `values`: for terms t1…tn (the sort
    /// descriptors, then the primary key), `t1 ≥ v1 AND (t1 > v1 OR (t1 = v1 AND (t2 > v2 OR …)))`
    /// with each term compared as it is ordered (its direction and collation; on PostgreSQL a
    /// `localizedStandard` text by its sort key). The leading `≥` lets an index on t1 start there.
    private mutating func keysetCondition(_ descriptors: [SortKey], after values: [SQLValue]) throws -> String {
        var terms = descriptors
        if terms.last?.keyPath != root.primaryKey { terms.append(SortKey(root.primaryKey)) }
        guard values.count == terms.count else {
            throw StoreError(.invalidRequest, "startingAfter has \(values.count) values for \(terms.count) ordering terms (the sort descriptors, then the primary key)")
        }
        guard !values.contains(where: \.isNull) else {
            throw StoreError(.invalidRequest, "startingAfter cannot hold NULL: keyset paging needs a value for every ordering term")
        }
        let compared = try zip(terms, values).map { try comparable($0, $1) }
        // Built in text order: SQLite's `?` parameters are bound in the order they appear.
        guard let first = compared.first else { return dialect.condition(true) }
        return "(\(first.expression) \(first.ascending ? ">=" : "<=") \(bind(first.value)) AND \(after(compared[...])))"
    }

    /// `t1 > v1 OR (t1 = v1 AND (…the rest…))`, for the terms left.
    private mutating func after(_ terms: ArraySlice<(expression: String, value: SQLValue, ascending: Bool)>) -> String {
        guard let term = terms.first else { return dialect.condition(false) }
        let beyond = "\(term.expression) \(term.ascending ? ">" : "<") \(bind(term.value))"
        guard terms.count > 1 else { return beyond }
        return "(\(beyond) OR (\(term.expression) = \(bind(term.value)) AND \(after(terms.dropFirst()))))"
    }

    /// A term as keyset paging compares it: the expression with its collation, and the value
    /// in the form the expression holds.
    private mutating func comparable(_ descriptor: SortKey, _ value: SQLValue) throws -> (expression: String, value: SQLValue, ascending: Bool) {
        let column = try resolve(descriptor.keyPath)
        guard column.isText, descriptor.collation != .binary || dialect.isPostgreSQL else {
            return (column.expression, value, descriptor.ascending)
        }
        guard case .postgresql(let sortKeyColumns, _) = dialect else {
            return ("\(column.expression) COLLATE \(descriptor.collation.rawValue)", value, descriptor.ascending)
        }
        switch descriptor.collation {
        case .binary:
            return ("\(column.expression) COLLATE \"C\"", value, descriptor.ascending)
        case .localizedStandard:
            guard let keyColumn = sortKeyColumns[column.entity.name]?[column.attribute], case .text(let text) = value else {
                throw StoreError(.invalidRequest, "\(column.entity.name).\(column.attribute) cannot be paged by localizedStandard in this PostgreSQL store")
            }
            return ("\(column.alias).\(name(keyColumn))", .blob(Collation.localizedStandardSortKey(text)), descriptor.ascending)
        case .caseInsensitive:
            throw StoreError(.invalidRequest, "paging by the caseInsensitive collation is not available on PostgreSQL")
        }
    }

    // MARK: Key paths

    /// The column a key path ends at, with what ordering and comparing it needs to know.
    struct ResolvedColumn {
        /// `alias.column`.
        var expression: String
        /// The alias of the table holding the column.
        var alias: String
        /// The entity holding it, and its name there.
        var entity: Entity
        var attribute: String
        /// The column holds text (a text attribute).
        var isText: Bool
        /// The column may be NULL: an optional attribute, a foreign key, or any column
        /// across a (left) join.
        var mayBeNull: Bool
    }

    /// The SQL expression for a key path, adding the joins it crosses.
    mutating func expression(for keyPath: String) throws -> String {
        try resolve(keyPath).expression
    }

    /// The column a key path ends at, adding the joins it crosses.
    mutating func resolve(_ keyPath: String) throws -> ResolvedColumn {
        let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !components.contains(where: \.isEmpty) else {
            throw StoreError(.invalidRequest, "Key path \"\(keyPath)\" has an empty component")
        }
        var entity = root
        var alias = Self.rootAlias
        for (position, component) in components.enumerated() {
            let isLast = position == components.count - 1
            let joined = alias != Self.rootAlias
            if isLast, component == entity.primaryKey {
                return column(component, of: entity, alias: alias, isText: false, mayBeNull: joined)
            }
            if isLast, let attribute = entity.attribute(named: component) {
                return column(component, of: entity, alias: alias, isText: attribute.type == .text, mayBeNull: joined || attribute.isOptional)
            }
            guard let relationship = entity.relationship(named: component) else {
                throw StoreError(.invalidRequest, "Key path \"\(keyPath)\": \(entity.name) has no attribute or relationship \(component)")
            }
            if isLast, let foreignKey = relationship.foreignKeyColumn {
                return column(foreignKey, of: entity, alias: alias, isText: false, mayBeNull: true)
            }
            guard relationship.isToOne else {
                throw StoreError(.invalidRequest, "Key path \"\(keyPath)\" crosses the to-many relationship \(entity.name).\(component); only to-one relationships can be crossed")
            }
            let path = components[0...position].joined(separator: ".")
            (entity, alias) = try join(relationship, from: entity, alias: alias, path: path)
            if isLast { return column(entity.primaryKey, of: entity, alias: alias, isText: false, mayBeNull: true) }
        }
        throw StoreError(.invalidRequest, "Key path \"\(keyPath)\" is empty")
    }

    private func column(_ column: String, of entity: Entity, alias: String, isText: Bool, mayBeNull: Bool) -> ResolvedColumn {
        ResolvedColumn(expression: "\(alias).\(name(column))", alias: alias, entity: entity, attribute: column,
                       isText: isText, mayBeNull: mayBeNull)
    }

    private mutating func join(_ relationship: Relationship, from entity: Entity, alias: String,
                               path: String) throws -> (Entity, String) {
        if let existing = joins.first(where: { $0.path == path }) { return (existing.entity, existing.alias) }
        let destination = try schema.entity(named: relationship.destination)
        let joinAlias = "j\(joins.count + 1)"
        let condition: String
        if let column = relationship.foreignKeyColumn {
            condition = "\(joinAlias).\(name(destination.primaryKey)) = \(alias).\(name(column))"
        } else {
            let (_, column) = try schema.foreignKeySide(of: relationship)
            condition = "\(joinAlias).\(name(column)) = \(alias).\(name(entity.primaryKey))"
        }
        let clause = "LEFT JOIN \(name(destination.name)) AS \(joinAlias) ON \(condition)"
        joins.append((path, joinAlias, clause, destination))
        return (destination, joinAlias)
    }

    // MARK: Predicates

    mutating func compile(_ predicate: FetchPredicate) throws -> String {
        switch predicate {
        case .constant(let value):
            return dialect.condition(value)
        case .compare(let keyPath, let comparison, let value):
            let column = try resolve(keyPath)
            if value.isNull {
                switch comparison {
                case .equal: return "\(column.expression) IS NULL"
                case .notEqual: return "\(column.expression) IS NOT NULL"
                default: return dialect.condition(false)
                }
            }
            // As Core Data does, "not equal" also matches NULL.
            if comparison == .notEqual { return distinct(column.expression, bind(value)) }
            return "\(column.expression)\(textCollation(column, comparison)) \(comparison.rawValue) \(bind(value))"
        case .compareKeys(let left, let comparison, let right):
            let leftColumn = try resolve(left)
            let rightColumn = try resolve(right)
            switch comparison {
            case .equal: return notDistinct(leftColumn.expression, rightColumn.expression)
            case .notEqual: return distinct(leftColumn.expression, rightColumn.expression)
            default:
                let collation = textCollation(leftColumn.isText ? leftColumn : rightColumn, comparison)
                return "\(leftColumn.expression)\(collation) \(comparison.rawValue) \(rightColumn.expression)"
            }
        case .isIn(let keyPath, let values):
            let column = try expression(for: keyPath)
            let present = values.filter { !$0.isNull }
            var clauses: [String] = []
            if !present.isEmpty {
                clauses.append(try membership(column, present))
            }
            if present.count < values.count { clauses.append("\(column) IS NULL") }
            return clauses.isEmpty ? dialect.condition(false) : "(" + clauses.joined(separator: " OR ") + ")"
        case .isNull(let keyPath):
            return "\(try expression(for: keyPath)) IS NULL"
        case .text(let keyPath, let match, let pattern, let caseInsensitive):
            var column = try expression(for: keyPath)
            var pattern = pattern
            if caseInsensitive {
                guard !dialect.isPostgreSQL else {
                    throw StoreError(.invalidRequest, "case-insensitive text matching is not available on PostgreSQL")
                }
                column = "\(SQLFunctions.foldFunction)(\(column))"
                pattern = SQLFunctions.fold(pattern)
            }
            return textMatch(column, match, pattern)
        case .not(let inner):
            // Two-valued logic: a comparison with NULL is false, so its negation is true.
            return "NOT coalesce((\(try compile(inner))), \(dialect.condition(false)))"
        case .and(let parts):
            guard !parts.isEmpty else { return dialect.condition(true) }
            return "(" + (try parts.map { try compile($0) }).joined(separator: " AND ") + ")"
        case .or(let parts):
            guard !parts.isEmpty else { return dialect.condition(false) }
            return "(" + (try parts.map { try compile($0) }).joined(separator: " OR ") + ")"
        }
    }

    /// SQLite compares text by its bytes; PostgreSQL by the database's collation unless
    /// told otherwise. Equality is bytes on both (deterministic collations).
    private func textCollation(_ column: ResolvedColumn, _ comparison: FetchPredicate.Comparison) -> String {
        guard dialect.isPostgreSQL, column.isText, comparison != .equal, comparison != .notEqual else { return "" }
        return " COLLATE \"C\""
    }

    /// `left` differs from `right`, NULL being a value of its own.
    private func distinct(_ left: String, _ right: String) -> String {
        dialect.isPostgreSQL ? "\(left) IS DISTINCT FROM \(right)" : "\(left) IS NOT \(right)"
    }

    /// `left` equals `right`, NULL equal to NULL.
    private func notDistinct(_ left: String, _ right: String) -> String {
        dialect.isPostgreSQL ? "\(left) IS NOT DISTINCT FROM \(right)" : "\(left) IS \(right)"
    }

    private mutating func membership(_ column: String, _ values: [SQLValue]) throws -> String {
        if values.count <= SQL.maximumParametersPerStatement {
            return "\(column) IN (\(values.map { bind($0) }.joined(separator: ", ")))"
        }
        // Past the parameter budget, the list travels as one JSON array argument.
        let list = bind(.text(try Self.jsonArray(values)))
        guard dialect.isPostgreSQL else { return "\(column) IN (SELECT value FROM json_each(\(list)))" }
        return "\(column) IN (SELECT value::\(try Self.postgresType(of: values)) FROM json_array_elements_text(\(list)::json) AS value)"
    }

    /// The one PostgreSQL type of a long IN list's values.
    private static func postgresType(of values: [SQLValue]) throws -> String {
        if values.allSatisfy({ if case .integer = $0 { return true } else { return false } }) { return "bigint" }
        if values.allSatisfy({ $0.double != nil }) { return "double precision" }
        if values.allSatisfy({ $0.string != nil }) { return "text" }
        throw StoreError(.invalidRequest, "A long IN list on PostgreSQL holds values of one type, numbers or text")
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
        let postgres = dialect.isPostgreSQL
        switch match {
        case .contains:
            return "\(postgres ? "strpos" : "instr")(\(column), \(bind(.text(pattern)))) > 0"
        case .beginsWith:
            return "\(postgres ? "strpos" : "instr")(\(column), \(bind(.text(pattern)))) = 1"
        case .endsWith:
            // Both count characters as Unicode scalars.
            let length = Int64(pattern.unicodeScalars.count)
            if postgres { return "right(\(column), \(bind(.integer(length)))) = \(bind(.text(pattern)))" }
            return "substr(\(column), \(bind(.integer(-length)))) = \(bind(.text(pattern)))"
        }
    }
}
