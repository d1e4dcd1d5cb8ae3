import Foundation
import TopRegionsKit

// `search TEXT`: the regions and photos whose text holds every word.
extension Commands {
    static let search = Command(
        name: "search", abstract: "Find photos and regions by words of their title, description, photographer, region or country.",
        arguments: [Argument(name: "TEXT", help: "the words to find, in any order (case and accents need not match; \"que\" finds Quebec)",
                             variadic: true)],
        options: [.value("region", "NAME|ID", "only photos of this region"),
                  .value("limit", "N", "how many photos a page shows", default: "20"),
                  .value("after", "CURSOR", "the page after the one that printed this cursor")],
        examples: [Example(arguments: ["search", "sunset", "quebec"], explanation: "photos with both words, title matches first"),
                   Example(arguments: ["search", "eclair", "--json"], explanation: "the same as JSON, with the next page's cursor")]
    ) { invocation in
        let text = invocation.positionals.joined(separator: " ")
        if let problem = Gallery.searchQueryProblem(text) { throw UsageError(problem, command: invocation.command) }
        guard !SearchTerms.query(text).isEmpty else {
            throw UsageError("search needs words to find (letters or digits)", command: invocation.command)
        }
        let limit = try invocation.integer("limit", default: 20, range: 1...1_000)
        let gallery = try invocation.openReader()
        defer { gallery.close() }
        let region = try invocation.value("region").map { try gallery.region(named: $0) }
        let results: SearchResults
        do {
            results = try gallery.search(text, region: region, limit: limit, after: invocation.value("after"))
        } catch let error as GalleryError where error.kind == .invalidArgument {
            throw UsageError("--after: \(error.message)", command: invocation.command)  // a cursor the user passed
        }
        try showSearch(results, invocation)
        return 0
    }

    /// The regions found, then the photos, as tables or one JSON object; the next page's
    /// command on stderr (stdout stays the results).
    private static func showSearch(_ results: SearchResults, _ invocation: Invocation) throws {
        let output = invocation.output
        if output.json {
            try output.emit(SearchAnswer(results: results, next: results.next?.text))
        } else if results.regions.isEmpty && results.photos.isEmpty {
            output.line("Nothing matches \"\(results.query)\".")
        } else {
            if !results.regions.isEmpty { output.table(table([("Regions", results.regions)])) }
            if !results.photos.isEmpty { output.table(table([(results.regions.isEmpty ? nil : "Photos", results.photos.map(SearchHitRow.init))])) }
        }
        if let next = results.next, !output.quiet {
            var words = ["topregions", "search"] + invocation.positionals.map(shellQuoted)
            if let region = invocation.value("region") { words += ["--region", shellQuoted(region)] }
            words += ["--limit", "\(try invocation.integer("limit", default: 20, range: 1...1_000))", "--after", next.text]
            output.diagnostic("next page: " + words.joined(separator: " "))
        }
    }

    /// A word as a shell reads it back: bare when it is plain, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_./:@".unicodeScalars.contains($0)) }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// A photo found, as the search's table shows it: with its region.
private struct SearchHitRow: TableRow {
    static let columns: [(String, Table.Kind)] = [("ID", .key), ("TITLE", .text), ("PHOTOGRAPHER", .text), ("REGION", .text)]
    let detail: PhotoDetail
    init(_ detail: PhotoDetail) { self.detail = detail }
    var cells: [String] { [detail.photo.id, detail.photo.title, detail.photo.photographer ?? "", detail.region ?? ""] }
}
