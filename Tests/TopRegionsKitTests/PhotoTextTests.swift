import Foundation
import Testing
@testable import TopRegionsKit

@Suite("Photo title rules")
struct PhotoTextTests {
    @Test("Blank means what trimming .whitespacesAndNewlines leaves empty, for every Unicode scalar")
    func blankForEveryScalar() {
        var disagreements: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(Character(scalar))
            if PhotoText.isBlank(text) != text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { disagreements.append(value) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10).map { String($0, radix: 16) })")
        #expect(PhotoText.isBlank(""))
        #expect(PhotoText.isBlank(" \t\n\u{3000}\u{A0}"))
        #expect(!PhotoText.isBlank(" x "))
    }

    @Test("Title, else description, else Unknown; the subtitle is the description unless it became the title")
    func rules() {
        #expect(PhotoText.title("Sunset", description: "Over the bay") == "Sunset")
        #expect(PhotoText.subtitle("Sunset", description: "Over the bay") == "Over the bay")
        #expect(PhotoText.title(" \n", description: "Over the bay") == "Over the bay")
        #expect(PhotoText.subtitle(" \n", description: "Over the bay") == "")
        #expect(PhotoText.title("", description: "\u{2003}") == PhotoText.unknownTitle)
    }
}
