import Foundation
import Testing
@testable import TopRegionsKit

@Suite("Suggestions for a region name that matches none")
struct RegionSuggestionTests {
    @Test("A typo in a long name is suggested; a name of one or two letters is not answered with any other short name")
    func suggestionsStayClose() {
        let names = ["Yucatán", "서울", "Rea", "Capital Region"]
        #expect(Gallery.closest(to: Gallery.fold("yucatn"), among: names, count: 3) == ["Yucatán"])
        #expect(Gallery.closest(to: Gallery.fold("Re\u{301}"), among: names, count: 3) == ["Rea"], "one edit for two letters; 서울 is two")
        #expect(Gallery.closest(to: Gallery.fold("xy"), among: names, count: 3).isEmpty)
    }
}
