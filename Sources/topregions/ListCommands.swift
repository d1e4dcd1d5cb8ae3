import Foundation
import TopRegionsKit

// `view`, `recents`, `favorites`: the user's own lists.
extension Commands {
    static let view = Command(name: "view", abstract: "Record a view of a photo in Recents.", usage: "view ID",
                              example: "topregions view 53300015612") { context in
        let base = try imageBase(&context)
        let id = try context.arguments.positionals(1...1, "the photo id")[0]
        let gallery = try context.openGallery(.write)
        defer { gallery.close() }
        guard let photo = try gallery.photo(flickrID: id, imageBase: base) else { throw RuntimeError("no photo has id \(id)") }
        let viewed = try gallery.recordView(photoID: photo.id)
        var object = photoJSON(photo, detail: true)
        object["lastViewed"] = viewed.iso8601
        if context.output.json { context.output.emit(object) } else { context.output.line("viewed \(photo.title) at \(viewed.iso8601)") }
        return 0
    }

    static let recents = Command(name: "recents", abstract: "List the photos viewed most recently (at most 20).", usage: "recents",
                                 example: "topregions recents --json") { context in
        let gallery = try context.openGalleryForCommandWithoutArguments(.read)
        defer { gallery.close() }
        let recents = try gallery.recents()
        if context.output.json {
            context.output.emit(recents.map { ["id": $0.photo.flickrID, "title": $0.photo.title, "subtitle": $0.photo.subtitle,
                                               "lastViewed": $0.lastViewed.iso8601] })
        } else {
            context.output.table(["ID", "TITLE", "VIEWED"], recents.map { [$0.photo.flickrID, $0.photo.title, $0.lastViewed.iso8601] })
        }
        return 0
    }

    static let favorites = Command(name: "favorites", abstract: "List, add, remove or reorder favorites.",
                                   usage: "favorites [add ID | remove ID | move FROM TO]",
                                   example: "topregions favorites move 3 1") { context in
        let words = try context.arguments.positionals(0...3, "")
        let gallery = try context.openGallery(words.isEmpty ? .read : .write)
        defer { gallery.close() }
        func photoID(_ flickrID: String) throws -> Int64 {
            guard let photo = try gallery.photo(flickrID: flickrID) else { throw RuntimeError("no photo has id \(flickrID)") }
            return photo.id
        }
        switch (words.first, words.count) {
        case (nil, _): break
        case ("add", 2): try gallery.addFavorite(photoID: try photoID(words[1]))
        case ("remove", 2): try gallery.removeFavorite(photoID: try photoID(words[1]))
        case ("move", 3):
            guard let from = Int(words[1]), let to = Int(words[2]), from >= 1, to >= 1 else {
                throw UsageError("favorites move takes two positions from 1, not \(words[1]) and \(words[2])")
            }
            try gallery.moveFavorite(from: from - 1, to: to - 1)
        default:
            throw UsageError("favorites takes add ID, remove ID or move FROM TO")
        }
        let list = try gallery.favorites()
        if context.output.json {
            context.output.emit(list.enumerated().map { ["position": $0.offset + 1, "id": $0.element.flickrID, "title": $0.element.title] as [String: Any] })
        } else {
            context.output.table(["#", "ID", "TITLE"], list.enumerated().map { ["\($0.offset + 1)", $0.element.flickrID, $0.element.title] })
        }
        return 0
    }
}
