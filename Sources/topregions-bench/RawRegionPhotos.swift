import CSQLite
import Foundation
import Store
import TopRegionsKit

/// `query.regionPhotos`'s baseline: the same query and the same `PhotoRecord` values through
/// SQLite's C API, one prepared statement stepped by hand, columns read by position. What
/// the store adds on top of it is the query's compilation, a row of values per result, and
/// column lookups by name; SQLite's own share is what no Swift layer can remove.
final class RawRegionPhotos {
    static let sql = """
        SELECT id, flickrID, flickrNumber, title, subtitle, photoDescription, uploaded, downloaded, latitude, longitude,
               secret, server, farm, originalSecret, originalFormat, photographer_id, place_id, region_id, license, searchTitle, searchText
        FROM Photo WHERE region_id = ? ORDER BY title COLLATE localizedStandard, flickrNumber
        """

    private let db: OpaquePointer
    private let statement: OpaquePointer

    init(path: String) throws {
        let db = try RawSQLite.open(path)
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, Self.sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            let error = StoreError(.sqlite, "cannot prepare the region-photos query: \(String(cString: sqlite3_errmsg(db)))")
            sqlite3_close_v2(db)
            throw error
        }
        self.db = db
        self.statement = statement
    }

    deinit {
        sqlite3_finalize(statement)
        sqlite3_close_v2(db)
    }

    func photos(regionID: Int64) throws -> [PhotoRecord] {
        defer { sqlite3_reset(statement) }
        sqlite3_bind_int64(statement, 1, regionID)
        var records: [PhotoRecord] = []
        while true {
            let result = sqlite3_step(statement)
            guard result == SQLITE_ROW else {
                try RawSQLite.check(result, db)
                return records
            }
            records.append(record())
        }
    }

    private func record() -> PhotoRecord {
        var record = PhotoRecord(flickrID: text(1) ?? "", title: text(3) ?? "", subtitle: text(4) ?? "",
                                 photoDescription: text(5) ?? "", uploaded: real(6).map(Date.init(timeIntervalSince1970:)),
                                 downloaded: Date(timeIntervalSince1970: real(7) ?? 0), latitude: real(8), longitude: real(9),
                                 secret: text(10), server: text(11), farm: integer(12), originalSecret: text(13),
                                 originalFormat: text(14), license: text(18), photographerID: integer(15), placeID: integer(16),
                                 regionID: integer(17))
        record.id = integer(0)
        record.searchTitle = text(19) ?? ""
        record.searchText = text(20) ?? ""
        record.flickrNumber = integer(2) ?? 0
        return record
    }

    private func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    private func integer(_ column: Int32) -> Int64? { isNull(column) ? nil : sqlite3_column_int64(statement, column) }

    private func real(_ column: Int32) -> Double? { isNull(column) ? nil : sqlite3_column_double(statement, column) }

    private func text(_ column: Int32) -> String? {
        guard !isNull(column), let pointer = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }
}
