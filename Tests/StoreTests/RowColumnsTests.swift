@testable import Store
import Testing

@Suite("Row column lookup by name")
struct RowColumnsTests {
    @Test("Every name finds its first column, among many with the same length and ends; absent names find none")
    func lookup() {
        // Names that share length, first, middle and last bytes collide in the hash.
        var names = (0..<300).map { "c\(String($0, radix: 7))x" } + ["id", "title", "photoDescription", "", "é東京", "id"]
        names += names.prefix(10)
        let columns = RowColumns(names: names)
        for (index, name) in names.enumerated() where names.firstIndex(of: name) == index {
            #expect(columns.index(of: name) == index, "\(name)")
        }
        for absent in ["c0y", "ID", "titl", "photoDescriptio", "x", "東京"] {
            #expect(columns.index(of: absent) == nil, "\(absent)")
        }
        let row = Row(columns: columns, values: names.indices.map { .integer(Int64($0)) })
        #expect(row["id"] == .integer(Int64(300)), "a repeated name reads its first column")
        #expect(row["nope"] == .null)
        #expect(!row.hasColumn("nope") && row.hasColumn("é東京"))
    }

    @Test("Looked up in column order (the position hint), a repeated name still finds its first column")
    func hintAndRepeatedNames() {
        let columns = RowColumns(names: ["a", "b", "a", "c"])
        for _ in 0..<3 {
            #expect(columns.index(of: "a") == 0)
            #expect(columns.index(of: "b") == 1)
            #expect(columns.index(of: "a") == 0, "the next position holds a repeated a")
            #expect(columns.index(of: "c") == 3)
            #expect(columns.index(of: "d") == nil)
        }
    }
}
