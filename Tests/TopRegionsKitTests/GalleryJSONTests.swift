import Foundation
import TestSupport
import Testing
@testable import TopRegionsKit

@Suite("GalleryJSON's dates")
struct GalleryJSONTests {
    /// Within a millisecond of the next second the formatter's own Double rounding decides
    /// (it goes through milliseconds): the random dates keep clear of that last millisecond.
    @Test("Dates are written as ISO8601DateFormatter writes them, to the second, for any date from year 1 to 9999")
    func datesMatchTheFormatter() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var random = SeededGenerator(seed: testSeed("DATES_SEED", test: "GalleryJSON dates"))
        let fixed: [TimeInterval] = [0, -1, 1, 0.999, -0.5, 1_800_000_000.75, 951_782_400 /* 2000-02-29 */, -62_135_596_800, 253_402_300_799]
        let randomDates = (0..<2_000).map { _ in
            TimeInterval(Int64.random(in: -62_135_596_800...253_402_300_799, using: &random)) + Double.random(in: 0..<0.99, using: &random)
        }
        for seconds in fixed + randomDates {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(GalleryJSON.iso8601(date) == formatter.string(from: date), "\(seconds)")
        }
    }

    @Test("Controls, separators and bidirectional marks are written as \\u escapes and read back as the same text")
    func invisiblesAreEscaped() throws {
        let invisible: [UInt32] = [0x7F] + Array(0x80...0x9F) + Array(0x200B...0x200F) + Array(0x2028...0x202E) + Array(0x2066...0x2069)
            + Array(0x2060...0x2064) + [0xFEFF, 0xAD, 0x061C, 0x115F, 0x1160, 0x180E, 0x3164, 0xFFA0, 0xE0001, 0xE0041, 0xE007F, 0x34F, 0x17B4, 0x17B5, 0xFFF9, 0xFFFB]
        let visible = "é → 東京 🐱 ☺\u{FE0F} \u{2030}\u{FEFE}"
        for value in invisible {
            let scalar = try #require(Unicode.Scalar(value))
            let text = "a" + String(Character(scalar)) + visible
            let json = try GalleryJSON.bytes(["t": text])
            let written = String(decoding: json, as: UTF8.self)
            #expect(!written.unicodeScalars.contains(scalar), "U+\(String(value, radix: 16)) is escaped")
            #expect(written.contains(visible), "other characters stay as they are")
            #expect(try JSONDecoder().decode([String: String].self, from: Data(json))["t"] == text, "U+\(String(value, radix: 16)) reads back")
        }
    }
}
