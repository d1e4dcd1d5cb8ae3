/// Strings of the kinds photo titles are made of: case, accents (precomposed and
/// combining), digits (with leading zeros), CJK, emoji, right-to-left scripts, empty. The
/// corpus of the collation tests, in SQLite and in PostgreSQL.
public func generatedTitles(count: Int, seed: UInt64) -> [String] {
    var random = SeededGenerator(seed: seed)
    let pieces = ["img", "IMG", "Img", "photo", "Photo", "é", "É", "e\u{301}", "eclair", "Éclair", "ß", "SS", "straße",
                  "東京", "京都", "大阪", "서울", "🐱", "👍🏽", "🇫🇷", "שלום", "مرحبا", "Ωmega", "ωmega", "a", "A", "z", "Z",
                  " ", "-", "_", ".", "(", "ø", "Ø", "å", "Ångström", "ﬁ", "fi", "Ⅻ", "½", "0", "00", "007"]
    var titles: [String] = [""]
    while titles.count < count {
        var title = ""
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            if Int.random(in: 0..<3, using: &random) == 0 {
                title += String(Int.random(in: 0...2000, using: &random))
            } else {
                title += pieces[Int.random(in: 0..<pieces.count, using: &random)]
            }
            if Bool.random(using: &random) { title += " " }
        }
        titles.append(title)
    }
    return titles
}
