import PostgresStore
import Store

extension TopRegionsSchema {
    /// The schema as PostgreSQL tables: the text the product orders by `localizedStandard`
    /// gets a sort key beside it (regions by name and country, photos by title, photos by
    /// photographer by name).
    public static var postgres: PostgresSchema {
        PostgresSchema(schema, migrator: migrator, sortKeyAttributes: [
            region.name: ["name", "country"],
            photo.name: ["title"],
            photographer.name: ["name"],
        ], programUpgrades: [
            creditMigration: creditColumns.map { table, column in
                "ALTER TABLE \(PostgresSchema.identifier(table)) ADD COLUMN IF NOT EXISTS \(PostgresSchema.identifier(column)) text"
            },
            SearchIndex.migration: SearchIndex.postgresStatements,
        ])
    }
}
