import Foundation
import Store

/// The photos' search columns and the full-text indexes over them. Each photo keeps its
/// title's terms (`searchTitle`) and the terms of its description, photographer, region and
/// country (`searchText`), computed in Swift (`SearchTerms`) wherever those change: a photo
/// stored, its region learned, its photographer or region renamed. SQLite indexes the two
/// columns with FTS5 (`PhotoSearch`, kept in step with `Photo` by triggers); PostgreSQL with
/// GIN indexes over the same terms as `tsvector`s (`array_to_tsvector`: no parser between).
enum SearchIndex {
    /// The migration that adds the columns and the indexes, and fills them for the photos
    /// already stored.
    static let migration = "topregions.v6.search"
    /// The FTS5 table over `Photo`'s search columns (SQLite).
    static let ftsTable = "PhotoSearch"
    /// The FTS5 table over `Region`'s (SQLite).
    static let regionFTSTable = "RegionSearch"

    /// The title's terms.
    static func titleColumn(_ title: String) -> String { SearchTerms.column(title) }

    /// A region's terms: its name's and its country's.
    static func regionColumn(name: String, country: String?) -> String { SearchTerms.column(name, country) }

    /// The other searchable text's terms.
    static func textColumn(description: String, photographer: String?, region: String?, country: String?) -> String {
        SearchTerms.column(description, photographer, region, country)
    }

    // MARK: Keeping the columns in step

    /// Computes again the search columns of these photos (one query a few hundred photos to
    /// read what they show, then an update for each whose terms changed).
    static func refresh(photoIDs: some Collection<Int64>, in transaction: Transaction) throws {
        guard !photoIDs.isEmpty else { return }
        for chunk in InList.paddedChunks(photoIDs, size: 400) {
            let p = transaction.dialect.parameter
            let sql = """
                SELECT p.id, p.title, p.photoDescription, p.searchTitle, p.searchText, g.name, r.name, r.country
                FROM Photo p LEFT JOIN Photographer g ON g.id = p.photographer_id LEFT JOIN Region r ON r.id = p.region_id
                WHERE p.id IN (\((1...chunk.count).map(p).joined(separator: ", ")))
                """
            for row in try transaction.rows(sql, chunk.map { .integer($0) }) {
                guard let id = row[0].int64 else { continue }
                let title = titleColumn(row[1].string ?? "")
                let text = textColumn(description: row[2].string ?? "", photographer: row[5].string, region: row[6].string, country: row[7].string)
                guard title != row[3].string || text != row[4].string else { continue }
                try transaction.execute("UPDATE Photo SET searchTitle = \(p(1)), searchText = \(p(2)) WHERE id = \(p(3))",
                                        [.text(title), .text(text), .integer(id)])
            }
        }
    }

    /// Computes again the search columns of every photo of these photographers (renamed).
    static func refresh(photographerIDs: [Int64], in transaction: Transaction) throws {
        try refresh(photosWhere: "photographer_id", in: photographerIDs, transaction)
    }

    /// Computes again the search columns of every photo of these regions (renamed).
    static func refresh(regionIDs: [Int64], in transaction: Transaction) throws {
        try refresh(photosWhere: "region_id", in: regionIDs, transaction)
    }

    private static func refresh(photosWhere column: String, in owners: [Int64], _ transaction: Transaction) throws {
        guard !owners.isEmpty else { return }
        var photos: [Int64] = []
        for chunk in InList.paddedChunks(owners, size: 400) {
            let p = transaction.dialect.parameter
            let sql = "SELECT id FROM Photo WHERE \(column) IN (\((1...chunk.count).map(p).joined(separator: ", ")))"
            photos += try transaction.rows(sql, chunk.map { .integer($0) }).compactMap { $0[0].int64 }
        }
        try refresh(photoIDs: photos, in: transaction)
    }

    /// Fills the search columns of every photo whose columns are empty though it has text
    /// to find: photos stored before search existed.
    static func backfill(in transaction: Transaction) throws {
        let ids = try transaction.rows("SELECT id FROM Photo WHERE searchTitle = '' AND searchText = ''").compactMap { $0[0].int64 }
        try refresh(photoIDs: ids, in: transaction)
        let p = transaction.dialect.parameter
        for row in try transaction.rows("SELECT id, name, country FROM Region WHERE searchName = ''") {
            guard let id = row[0].int64 else { continue }
            try transaction.execute("UPDATE Region SET searchName = \(p(1)) WHERE id = \(p(2))",
                                    [.text(regionColumn(name: row[1].string ?? "", country: row[2].string)), .integer(id)])
        }
    }

    // MARK: Schema

    /// SQLite: the columns (for a store made before them) filled, then the FTS5 table and
    /// its triggers, and the index built from the columns. (Filled first: a trigger would
    /// tell the index to forget terms it never held, which FTS5 takes for corruption.)
    @Sendable static func applySQLite(_ transaction: Transaction) throws {
        for (table, column) in [("Photo", "searchTitle"), ("Photo", "searchText"), ("Region", "searchName")]
        where try !UserMigration.columnExists(column, in: table, transaction) {
            try transaction.execute("ALTER TABLE \"\(table)\" ADD COLUMN \"\(column)\" TEXT NOT NULL DEFAULT ''")
        }
        try backfill(in: transaction)
        for statement in sqliteStatements { try transaction.execute(statement) }
        try transaction.execute("INSERT INTO \(ftsTable)(\(ftsTable)) VALUES ('rebuild')")
        try transaction.execute("INSERT INTO \(regionFTSTable)(\(regionFTSTable)) VALUES ('rebuild')")
    }

    /// The FTS5 table reads its text from `Photo` (external content) and holds only the
    /// index; the triggers tell it each change, as SQLite's documentation prescribes.
    static let sqliteStatements = [
        """
        CREATE VIRTUAL TABLE IF NOT EXISTS \(ftsTable) USING fts5(searchTitle, searchText, content='Photo', content_rowid='id',
            tokenize = "unicode61 remove_diacritics 0 categories 'L* N* M* Co'", prefix = '2 3')
        """,
        """
        CREATE TRIGGER IF NOT EXISTS photo_search_insert AFTER INSERT ON Photo BEGIN
            INSERT INTO \(ftsTable)(rowid, searchTitle, searchText) VALUES (new.id, new.searchTitle, new.searchText);
        END
        """,
        """
        CREATE TRIGGER IF NOT EXISTS photo_search_delete AFTER DELETE ON Photo BEGIN
            INSERT INTO \(ftsTable)(\(ftsTable), rowid, searchTitle, searchText) VALUES ('delete', old.id, old.searchTitle, old.searchText);
        END
        """,
        """
        CREATE TRIGGER IF NOT EXISTS photo_search_update AFTER UPDATE OF searchTitle, searchText ON Photo BEGIN
            INSERT INTO \(ftsTable)(\(ftsTable), rowid, searchTitle, searchText) VALUES ('delete', old.id, old.searchTitle, old.searchText);
            INSERT INTO \(ftsTable)(rowid, searchTitle, searchText) VALUES (new.id, new.searchTitle, new.searchText);
        END
        """,
        """
        CREATE VIRTUAL TABLE IF NOT EXISTS \(regionFTSTable) USING fts5(searchName, content='Region', content_rowid='id',
            tokenize = "unicode61 remove_diacritics 0 categories 'L* N* M* Co'", prefix = '2 3')
        """,
        """
        CREATE TRIGGER IF NOT EXISTS region_search_insert AFTER INSERT ON Region BEGIN
            INSERT INTO \(regionFTSTable)(rowid, searchName) VALUES (new.id, new.searchName);
        END
        """,
        """
        CREATE TRIGGER IF NOT EXISTS region_search_delete AFTER DELETE ON Region BEGIN
            INSERT INTO \(regionFTSTable)(\(regionFTSTable), rowid, searchName) VALUES ('delete', old.id, old.searchName);
        END
        """,
        """
        CREATE TRIGGER IF NOT EXISTS region_search_update AFTER UPDATE OF searchName ON Region BEGIN
            INSERT INTO \(regionFTSTable)(\(regionFTSTable), rowid, searchName) VALUES ('delete', old.id, old.searchName);
            INSERT INTO \(regionFTSTable)(rowid, searchName) VALUES (new.id, new.searchName);
        END
        """,
    ]

    /// PostgreSQL: the columns (for a store made before them) and two GIN indexes, over
    /// all terms and over the title's; `migratePostgres` then fills the columns.
    static let postgresStatements = [
        "ALTER TABLE photo ADD COLUMN IF NOT EXISTS searchtitle text NOT NULL DEFAULT ''",
        "ALTER TABLE photo ADD COLUMN IF NOT EXISTS searchtext text NOT NULL DEFAULT ''",
        "CREATE INDEX IF NOT EXISTS photo_search_all ON photo USING gin (\(postgresAllTerms))",
        "CREATE INDEX IF NOT EXISTS photo_search_title ON photo USING gin (\(postgresTitleTerms))",
        "ALTER TABLE region ADD COLUMN IF NOT EXISTS searchname text NOT NULL DEFAULT ''",
        "CREATE INDEX IF NOT EXISTS region_search ON region USING gin (\(postgresRegionTerms))",
    ]

    /// A photo's terms as a `tsvector`, exactly the words stored (no parser, no stemming).
    /// (Immutable functions only, as an index expression must be; an empty column gives an
    /// empty word, which `array_remove` drops.)
    static let postgresAllTerms = "array_to_tsvector(array_remove(string_to_array(searchtitle || ' ' || searchtext, ' '), ''))"
    /// A region's terms.
    static let postgresRegionTerms = "array_to_tsvector(array_remove(string_to_array(searchname, ' '), ''))"
    /// Its title's terms.
    static let postgresTitleTerms = "array_to_tsvector(array_remove(string_to_array(searchtitle, ' '), ''))"
}
