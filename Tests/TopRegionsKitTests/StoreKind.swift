import Foundation
import Store
import TestSupport
@testable import TopRegionsKit

/// A test gallery moved to a store of some kind. A PostgreSQL gallery is closed when this
/// goes: keep it while using `gallery`.
final class GalleryOnStore {
    let gallery: any GalleryServing
    private let opened: PostgresGallery?
    /// The SQLite gallery copied, or nil when `gallery` is it.
    private let original: Gallery
    /// The PostgreSQL database's URL; nil for SQLite.
    private let database: String?

    /// `test`'s gallery as it stands: itself for SQLite, or copied whole into a fresh
    /// PostgreSQL database.
    init(_ test: TestGallery, on kind: StoreKind) throws {
        original = test.gallery
        switch kind {
        case .sqlite:
            gallery = test.gallery
            opened = nil
            database = nil
        case .postgresql:
            let database = try PostgresTestServer.shared().makeDatabase("domain")
            try Gallery.copyStore(from: test.gallery.path ?? "", to: database)
            let postgres = try PostgresGallery(location: database)
            gallery = postgres
            opened = postgres
            self.database = database
        }
    }

    /// The PostgreSQL database's URL; nil for SQLite.
    var location: String? { database }

    /// What `check` finds in the store.
    func check() throws -> [String] {
        guard let database else { return try original.check() }
        return try Gallery.checkPostgres(database)
    }

    deinit { opened?.close() }

    /// Runs raw SQL written with `?` parameters in the store's own dialect: `?` becomes
    /// `$1`, `$2` … on PostgreSQL (the SQL here holds no `?` but parameters).
    func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        try gallery.writableStore.write { transaction in
            try transaction.execute(Self.numbered(sql, transaction.dialect), arguments)
        }
    }

    /// The rows of raw SQL written as for `execute`.
    func rows(_ sql: String, _ arguments: [SQLValue] = []) throws -> [Row] {
        try gallery.readableStore.read { try $0.rows(Self.numbered(sql, $0.dialect), arguments) }
    }

    private static func numbered(_ sql: String, _ dialect: SQLDialect) -> String {
        var number = 0
        return sql.split(separator: "?", omittingEmptySubsequences: false).enumerated().map { index, part in
            guard index > 0 else { return String(part) }
            number += 1
            return dialect.parameter(number) + part
        }.joined()
    }
}
