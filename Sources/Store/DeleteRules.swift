/// Deletes objects with Core Data's delete rules, set by set: each relationship costs one
/// query per few hundred deleted objects, not one per object. The change set hears of every
/// row deleted or nullified from SQLite (`ChangeRecorder`).
struct DeleteRules {
    let transaction: Transaction

    private var schema: Schema { transaction.schema }
    private var dialect: SQLDialect { transaction.dialect }

    private func name(_ identifier: String) -> String { dialect.identifier(identifier) }

    /// `(?, ?, …)` or `($1, $2, …)` for `count` parameters.
    private func list(_ count: Int) -> String {
        "(" + (1...count).map(dialect.parameter).joined(separator: ", ") + ")"
    }

    func delete(_ entity: Entity, ids: [Int64]) throws -> Int {
        let existing = try selectIDs("SELECT \(name(entity.primaryKey)) FROM \(name(entity.name)) WHERE \(name(entity.primaryKey)) IN", ids)
        guard !existing.isEmpty else { return 0 }
        var cascadeAfter: [(Entity, [Int64])] = []
        for relationship in entity.relationships {
            let destination = try schema.entity(named: relationship.destination)
            if let column = relationship.foreignKeyColumn {
                let targets = try selectIDs("SELECT DISTINCT \(name(column)) FROM \(name(entity.name)) WHERE \(name(column)) IS NOT NULL AND \(name(entity.primaryKey)) IN", existing)
                guard !targets.isEmpty else { continue }
                switch relationship.deleteRule {
                case .cascade: cascadeAfter.append((destination, targets))
                case .nullify: break  // the reference goes with the row
                case .deny: throw denied(entity, relationship)
                }
            } else {
                let (_, column) = try schema.foreignKeySide(of: relationship)
                let related = try selectIDs("SELECT \(name(destination.primaryKey)) FROM \(name(destination.name)) WHERE \(name(column)) IN", existing)
                guard !related.isEmpty else { continue }
                switch relationship.deleteRule {
                case .cascade:
                    _ = try delete(destination, ids: related)
                case .nullify:
                    for chunk in existing.chunked(SQL.maximumParametersPerStatement) {
                        try transaction.execute("UPDATE \(name(destination.name)) SET \(name(column)) = NULL WHERE \(name(column)) IN \(list(chunk.count))",
                                                chunk.map { .integer($0) })
                    }
                case .deny:
                    throw denied(entity, relationship)
                }
            }
        }
        for chunk in existing.chunked(SQL.maximumParametersPerStatement) {
            try transaction.execute("DELETE FROM \(name(entity.name)) WHERE \(name(entity.primaryKey)) IN \(list(chunk.count))",
                                    chunk.map { .integer($0) })
        }
        for (destination, targets) in cascadeAfter {
            _ = try delete(destination, ids: targets)
        }
        return existing.count
    }

    /// Runs `prefix (?, ?, …)` over `ids` in chunks and collects the first column.
    private func selectIDs(_ prefix: String, _ ids: [Int64]) throws -> [Int64] {
        var result: [Int64] = []
        for chunk in ids.chunked(SQL.maximumParametersPerStatement) {
            try transaction.runner.forEachRow("\(prefix) \(list(chunk.count))", chunk.map { .integer($0) }) { result.append($0.int64(0)) }
        }
        return result
    }

    private func denied(_ entity: Entity, _ relationship: Relationship) -> StoreError {
        StoreError(.deleteDenied, "Cannot delete \(entity.name): its relationship \(relationship.name) has delete rule deny and is not empty")
    }
}
