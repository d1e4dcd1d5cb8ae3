import Foundation
import PostgreSQL
import TestSupport
import Testing

@Suite("Rows read in place through a cursor", postgresAvailable)
struct PostgresCursorTests {
    @Test("Integers at their limits, reals of every kind, NULLs, bytes and text read as the text result reads them")
    func valuesAsTheTextResultReadsThem() throws {
        let (_, connection) = try freshDatabase()
        let sql = """
            SELECT * FROM (VALUES
              (bigint '-9223372036854775808', double precision '0.1', bytea '\\x00ff10', text 'Zürich 東京', numeric '12'),
              (bigint '9223372036854775807', double precision 'NaN', bytea '\\x', text '', numeric '1.5'),
              (bigint '0', double precision '-Infinity', NULL, NULL, NULL),
              (bigint '-1', double precision '1e-300', bytea '\\x41', text 'a\tb', numeric '-99999999999999999999'),
              (NULL, double precision '-0', bytea '\\x00', text '"quoted"', numeric '0')
            ) AS v(i, r, b, t, n)
            """
        let whole = try connection.query(sql)
        var rows = 0
        try connection.query(sql) { cursor in
            let row = Int(cursor.row)
            rows += 1
            #expect(cursor.columns == whole.columns && cursor.columnTypes == whole.columnTypes)
            #expect(cursor.integer(0) == (try whole.integer(row, "i")), "row \(row)")
            let real = try whole.text(row, "r").flatMap(Double.init)
            #expect(cursor.real(1).map { $0.bitPattern } == real.map { $0.bitPattern } || (cursor.real(1)?.isNaN == true && real?.isNaN == true), "row \(row)")
            #expect(cursor.bytes(2) == (try whole.bytes(row, "b")), "row \(row)")
            #expect(cursor.text(3) == (try whole.text(row, "t")), "row \(row)")
            #expect(cursor.isNull(4) == ((try whole.text(row, "n")) == nil), "row \(row)")
        }
        #expect(rows == 5)
    }

    @Test("Text that is no number reads as none, never as a wrong number")
    func notNumbers() throws {
        let (_, connection) = try freshDatabase()
        let sql = "SELECT * FROM (VALUES ('12a'), (''), ('-'), ('9223372036854775808'), ('-9223372036854775809'), ('1.5'), (' 7')) AS v(x)"
        var integers: [Int64?] = [], reals: [Double?] = []
        try connection.query(sql) { cursor in
            integers.append(cursor.integer(0))
            reals.append(cursor.real(0))
        }
        #expect(integers == [nil, nil, nil, nil, nil, nil, nil])
        #expect(reals.map { $0 == nil } == [true, true, true, false, false, false, true])
        #expect(reals[5] == 1.5)
    }

    @Test("A failed statement throws PostgreSQL's error and hands over no row")
    func failure() throws {
        let (_, connection) = try freshDatabase()
        var rows = 0
        #expect(throws: PostgresError.self) { try connection.query("SELECT 1/0") { _ in rows += 1 } }
        #expect(rows == 0)
        #expect(try connection.query("SELECT 1 AS one").integer(0, "one") == 1, "the connection is still usable")
    }
}
