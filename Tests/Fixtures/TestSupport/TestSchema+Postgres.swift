import PostgresStore
import Store

extension TestSchema {
    /// The test schema as a PostgreSQL store holds it, with a sort key for every text the
    /// tests order by `localizedStandard` (a store refuses that order without one).
    public static let postgres = PostgresSchema(schema, migrator: migrator,
                                                sortKeyAttributes: ["Photo": ["title"], "Region": ["name"], "Photographer": ["name"]])
}
