import Flickr
import Foundation

/// One command of the tool: a one-line abstract, its usage and options, an example, and
/// what it does.
struct Command: Sendable {
    var name: String
    var abstract: String
    var usage: String
    var options: [String] = []
    var example: String
    var run: @Sendable (inout Context) async throws -> Int32

    var help: String {
        var text = "\(abstract)\n\nUsage: topregions \(usage)\n"
        let global = ["--store PATH       the store (default: $TOPREGIONS_STORE, else $XDG_DATA_HOME/topregions/store.sqlite)",
                      "--json             print JSON on stdout and nothing else"]
        text += "\nOptions:\n" + (options + global).map { "  " + $0 }.joined(separator: "\n") + "\n"
        text += "\nExample:\n  \(example)\n"
        return text
    }
}

let sourceOptions = [
    "--endpoint URL     Flickr REST endpoint (default: $FLICKR_ENDPOINT; none and no key: the bundled SampleData)",
    "--api-key-file F   a file whose first line is the Flickr API key (default: $FLICKR_API_KEY_FILE)",
    "--api-key KEY      the key itself (default: $FLICKR_API_KEY); visible to every user in ps: prefer the file",
    "--format json|xml  response format (default: json)",
    "--image-base URL   base of photo URLs (default: $FLICKR_IMAGE_BASE, else https://live.staticflickr.com)",
    "--pages N          pages of recent photos to read at most (default: 8)",
    "--per-page N       photos per page, at most 500 (default: 500)",
    "--rate-limit N|none  API calls per hour (default: 3600)",
]

enum Commands {
    static let all: [Command] = [sync, daemon, regions, photos, photo, view, recents, favorites, thumbnail, image, watch, prune, status, check]

    static func named(_ name: String) -> Command? { all.first { $0.name == name } }
}
