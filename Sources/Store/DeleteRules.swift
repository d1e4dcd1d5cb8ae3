/// Deletes objects with Core Data's delete rules, set by set: each relationship costs one
/// query per few hundred deleted objects, not one per object. The change set hears of every
/// row deleted or nullified from SQLite (`ChangeRecorder`).
struct DeleteRules {
    let transaction: Transaction

    private var connection: Connection { transaction.connection }
    private var schema: Schema { transaction.schema }

    func delete(_ entity: Entity, ids: [Int64]) throws -> Int {
        let existing = try selectIDs("SELECT \(SQL.quote(entity.primaryKey)) FROM \(SQL.quote(entity.name)) WHERE \(SQL.quote(entity.primaryKey)) IN", ids)
        guard !existing.isEmpty else { return 0 }
        var cascadeAfter: [(Entity, [Int64])] = []
        for relationship in entity.relationships {
            let destination = try schema.entity(named: relationship.destination)
            if let column = relationship.foreignKeyColumn {
                let targets = try selectIDs("SELECT DISTINCT \(SQL.quote(column)) FROM \(SQL.quote(entity.name)) WHERE \(SQL.quote(column)) IS NOT NULL AND \(SQL.quote(entity.primaryKey)) IN", existing)
                guard !targets.isEmpty else { continue }
                switch relationship.deleteRule {
                case .cascade: cascadeAfter.append((destination, targets))
                case .nullify: break  // the reference goes with the row
                case .deny: throw denied(entity, relationship)
                }
            } else {
                let (_, column) = try schema.foreignKeySide(of: relationship)
                let related = try selectIDs("SELECT \(SQL.quote(destination.primaryKey)) FROM \(SQL.quote(destination.name)) WHERE \(SQL.quote(column)) IN", existing)
                guard !related.isEmpty else { continue }
                switch relationship.deleteRule {
                case .cascade:
                    _ = try delete(destination, ids: related)
                case .nullify:
                    for chunk in existing.chunked(SQL.maximumParametersPerStatement) {
                        try connection.run("UPDATE \(SQL.quote(destination.name)) SET \(SQL.quote(column)) = NULL WHERE \(SQL.quote(column)) IN (\(SQL.placeholders(chunk.count)))",
                                           chunk.map { .integer($0) })
                    }
                case .deny:
                    throw denied(entity, relationship)
                }
            }
        }
        for chunk in existing.chunked(SQL.maximumParametersPerStatement) {
            try connection.run("DELETE FROM \(SQL.quote(entity.name)) WHERE \(SQL.quote(entity.primaryKey)) IN (\(SQL.placeholders(chunk.count)))",
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
            let statement = try connection.statement("\(prefix) (\(SQL.placeholders(chunk.count)))")
            try statement.bind(chunk.map { .integer($0) })
            while try statement.step() { result.append(statement.int64(at: 0)) }
        }
        return result
    }

    private func denied(_ entity: Entity, _ relationship: Relationship) -> StoreError {
        StoreError(.deleteDenied, "Cannot delete \(entity.name): its relationship \(relationship.name) has delete rule deny and is not empty")
    }
}
