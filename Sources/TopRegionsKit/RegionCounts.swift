import Store

/// Keeps `Region.photoCount`, `Region.photographerCount` and the per-region photographer
/// links exact as photos gain or lose their region, in the caller's transaction, with a
/// constant number of queries per batch.
enum RegionCounts {
    /// A photo's region and photographer, the two things the counts depend on.
    struct Membership: Hashable {
        var region: Int64
        var photographer: Int64?
    }

    /// Photos joined their regions.
    static func attach(_ memberships: [Membership], in transaction: Transaction) throws {
        try adjust(memberships, by: 1, in: transaction)
    }

    /// Photos left their regions (pruned, or moved).
    static func detach(_ memberships: [Membership], in transaction: Transaction) throws {
        try adjust(memberships, by: -1, in: transaction)
    }

    private static func adjust(_ memberships: [Membership], by sign: Int64, in transaction: Transaction) throws {
        guard !memberships.isEmpty else { return }
        var photosPerRegion: [Int64: Int64] = [:]
        var photosPerLink: [Membership: Int64] = [:]
        for membership in memberships {
            photosPerRegion[membership.region, default: 0] += sign
            if membership.photographer != nil { photosPerLink[membership, default: 0] += sign }
        }
        // The links of exactly the (region, photographer) pairs involved: one query per 500
        // pairs, so a page of up to 500 photos costs one, however large the store has grown.
        var links: [Membership: (id: Int64, count: Int64)] = [:]
        for list in InList.paddedChunks(photosPerLink.keys, size: 500) {
            let arguments: [SQLValue] = list.flatMap { [.integer($0.region), $0.photographer.map { .integer($0) } ?? .null] }
            for row in try transaction.rows(linksQuery(pairs: list.count, dialect: transaction.dialect), arguments) {
                guard let id = row[0].int64, let region = row[1].int64 else { continue }
                links[Membership(region: region, photographer: row[2].int64)] = (id, row[3].int64 ?? 0)
            }
        }
        let p = transaction.dialect.parameter
        var photographersPerRegion: [Int64: Int64] = [:]
        for (link, delta) in photosPerLink {
            let before = links[link]?.count ?? 0
            let after = before + delta
            if let existing = links[link] {
                if after <= 0 {
                    try transaction.execute("DELETE FROM RegionPhotographer WHERE id = \(p(1))", [.integer(existing.id)])
                } else {
                    try transaction.execute("UPDATE RegionPhotographer SET photoCount = \(p(1)) WHERE id = \(p(2))", [.integer(after), .integer(existing.id)])
                }
            } else if after > 0 {
                try transaction.execute("INSERT INTO RegionPhotographer (region_id, photographer_id, photoCount) VALUES (\(p(1)), \(p(2)), \(p(3)))",
                                        [.integer(link.region), link.photographer.map { .integer($0) } ?? .null, .integer(after)])
            }
            if before <= 0 && after > 0 { photographersPerRegion[link.region, default: 0] += 1 }
            if before > 0 && after <= 0 { photographersPerRegion[link.region, default: 0] -= 1 }
        }
        for (region, photoDelta) in photosPerRegion {
            let photographerDelta = photographersPerRegion[region] ?? 0
            if photographerDelta == 0 {
                // Setting photographerCount at all, even to itself, would rewrite the region's
                // entry in the top-regions index (and compare its name on the way).
                try transaction.execute("UPDATE Region SET photoCount = photoCount + \(p(1)) WHERE id = \(p(2))", [.integer(photoDelta), .integer(region)])
            } else {
                try transaction.execute("UPDATE Region SET photoCount = photoCount + \(p(1)), photographerCount = photographerCount + \(p(2)) WHERE id = \(p(3))",
                                        [.integer(photoDelta), .integer(photographerDelta), .integer(region)])
            }
        }
    }

    /// The links of `pairs` (region, photographer) pairs, bound in that order. A join from
    /// the pairs, each looked up in the pair index: SQLite runs `(region_id, photographer_id)
    /// IN (VALUES …)` as a scan of the whole table, a cost that grew with the store (about
    /// 5 s of an 80 s sync of 1,000,000 photos). CROSS JOIN keeps the pairs outside. A pair
    /// repeated to pad the list comes back twice, with the same values. PostgreSQL is told
    /// the pairs' type (a NULL photographer alone would leave it unknown), and joins them
    /// with an inner join (its CROSS JOIN takes no condition; its planner needs no hint).
    static func linksQuery(pairs: Int, dialect: SQLDialect = .sqlite) -> String {
        let cast = dialect.isPostgreSQL ? "::bigint" : ""
        let values = (0..<pairs).map { "(\(dialect.parameter(2 * $0 + 1))\(cast), \(dialect.parameter(2 * $0 + 2))\(cast))" }.joined(separator: ", ")
        return """
            SELECT l.id, l.region_id, l.photographer_id, l.photoCount
            FROM (VALUES \(values)) AS wanted \(dialect.isPostgreSQL ? "JOIN" : "CROSS JOIN") RegionPhotographer l
            ON l.region_id = wanted.column1 AND l.photographer_id = wanted.column2
            """
    }

    /// Counts recomputed from the photos, compared with the stored ones: the mismatches, as
    /// sentences (empty when all agree).
    static func check(in context: ReadContext) throws -> [String] {
        try check(rows: { try context.rows($0).map(\.values) })
    }

    /// `check` through `rows`, which runs a query without parameters on either kind of store
    /// (names unquoted: PostgreSQL's are the SQLite store's in lower case).
    static func check(rows: (String) throws -> [[SQLValue]]) throws -> [String] {
        var problems: [String] = []
        let actual = try rows("""
            SELECT r.id, r.placeID, r.photoCount, r.photographerCount,
                   (SELECT count(*) FROM Photo p WHERE p.region_id = r.id),
                   (SELECT count(DISTINCT p.photographer_id) FROM Photo p WHERE p.region_id = r.id AND p.photographer_id IS NOT NULL)
            FROM Region r ORDER BY r.id
            """)
        for row in actual {
            let place = row[1].string ?? "?"
            if row[2].int64 != row[4].int64 {
                problems.append("region \(place): photoCount is \(row[2].int64 ?? -1), but it has \(row[4].int64 ?? -1) photos")
            }
            if row[3].int64 != row[5].int64 {
                problems.append("region \(place): photographerCount is \(row[3].int64 ?? -1), but \(row[5].int64 ?? -1) photographers took its photos")
            }
        }
        let links = try rows("""
            SELECT l.region_id, l.photographer_id, l.photoCount,
                   (SELECT count(*) FROM Photo p WHERE p.region_id = l.region_id AND p.photographer_id = l.photographer_id)
            FROM RegionPhotographer l ORDER BY l.id
            """)
        for row in links where row[2].int64 != row[3].int64 {
            problems.append("region \(row[0].int64 ?? -1), photographer \(row[1].int64 ?? -1): link says \(row[2].int64 ?? -1) photos, there are \(row[3].int64 ?? -1)")
        }
        let missing = try rows("""
            SELECT count(*) FROM (SELECT DISTINCT region_id, photographer_id FROM Photo WHERE region_id IS NOT NULL AND photographer_id IS NOT NULL) pairs
            WHERE NOT EXISTS (SELECT 1 FROM RegionPhotographer l WHERE l.region_id = pairs.region_id AND l.photographer_id = pairs.photographer_id)
            """).first?.first?.int64 ?? 0
        if missing > 0 { problems.append("\(missing) region/photographer pairs have photos but no link") }
        return problems
    }
}

