import Foundation
import TopRegionsKit

// `view`, `recents`, `favorites`: a user's own lists (`--user`, default `local`).
extension Commands {
    static let userOption = Option.value("user", "NAME", "whose lists: a user of `topregions users` (default: local, created on first use)")

    static let view = Command(
        name: "view", abstract: "Record a view of a photo in Recents, and show it.",
        arguments: [Argument(name: "ID", help: "the photo's Flickr id")],
        options: [userOption],
        examples: [Example(arguments: ["view", "53300015459"], explanation: "view a photo: it goes to the top of Recents")]
    ) { invocation in
        let id = try invocation.photoID(at: 0)
        let gallery = try invocation.openWriter()
        defer { gallery.close() }
        let photo = try gallery.view(flickrID: id, for: try invocation.user(of: gallery))
        if invocation.output.json { try invocation.output.emit(photo) } else {
            invocation.output.line("viewed \(photo.photo.title) (\(photo.photo.id)) at \(photo.lastViewed?.iso8601 ?? "")")
        }
        return 0
    }

    static let recents = Command(
        name: "recents", abstract: "List the photos viewed most recently (at most 20), newest first.",
        options: [userOption],
        examples: [Example(arguments: ["recents", "--json"], explanation: "Recents as JSON")]
    ) { invocation in
        let gallery = try invocation.openReader()
        defer { gallery.close() }
        let rows = try invocation.existingUser(of: gallery).map { try gallery.recentRows(for: $0) } ?? []
        try show(rows, invocation.output, empty: "No recents yet: view a photo with `topregions view ID\(try invocation.userSuffix())`.")
        return 0
    }

    static let favorites = Command(
        name: "favorites", abstract: "List Favorites, or add, remove or move one.",
        arguments: [Argument(name: "ACTION", help: "add, remove or move (none: list)", optional: true),
                    Argument(name: "ID|FROM", help: "the photo's Flickr id (add, remove), or the position to move from", optional: true),
                    Argument(name: "TO", help: "the position to move to (move)", optional: true)],
        options: [userOption],
        examples: [Example(arguments: ["favorites", "add", "53300015459"], explanation: "add a photo at the end"),
                   Example(arguments: ["favorites", "move", "1", "1"], explanation: "move the first favorite to the top (positions from 1)"),
                   Example(arguments: ["favorites", "--json"], explanation: "the list, as JSON")]
    ) { invocation in
        let words = invocation.positionals
        if ["add", "remove"].contains(words.first), words.count == 2 { _ = try invocation.photoID(at: 1) }
        if words.isEmpty {
            let gallery = try invocation.openReader()
            defer { gallery.close() }
            try showFavorites(of: gallery, invocation)
            return 0
        }
        let gallery = try invocation.openWriter()
        defer { gallery.close() }
        switch (words.first, words.count) {
        case ("add", 2): try gallery.addFavorite(flickrID: words[1], for: try invocation.user(of: gallery))
        case ("remove", 2): try gallery.removeFavorite(flickrID: words[1], for: try invocation.user(of: gallery))
        case ("move", 3):
            guard let from = Int(words[1]), let to = Int(words[2]), from >= 1, to >= 1 else {
                throw UsageError("favorites move takes two positions from 1, not \(words[1]) and \(words[2])", command: invocation.command)
            }
            try gallery.moveFavorite(fromPosition: from, toPosition: to, for: try invocation.user(of: gallery))
        default:
            throw UsageError("favorites takes add ID, remove ID or move FROM TO, not \"\(words.joined(separator: " "))\"", command: invocation.command)
        }
        try showFavorites(of: gallery, invocation)
        return 0
    }

    private static func showFavorites(of gallery: any GalleryReading, _ invocation: Invocation) throws {
        let rows = try invocation.existingUser(of: gallery).map { try gallery.favoriteRows(for: $0) } ?? []
        try show(rows, invocation.output, empty: "No favorites yet: `topregions favorites add ID\(try invocation.userSuffix())`.")
    }
}

extension Invocation {
    /// The user `--user` names (default `local`, created when the store can be written).
    func user(of gallery: any GalleryWriting) throws -> GalleryUser {
        try gallery.user(named: userName())
    }

    /// `--user`'s name, or `local`; a name no user can have is a usage error.
    func userName() throws -> String {
        guard let name = value("user") else { return GalleryUser.localName }
        try Suggestions.checkUserName(name, command: command, prefix: "--user: ")
        return name
    }

    /// ` --user NAME` when the command acts for a user other than `local`: a hint's command
    /// then acts on the same list.
    func userSuffix() throws -> String {
        let name = try userName()
        return name == GalleryUser.localName ? "" : " --user \(name)"
    }

    /// For reading a user's lists: the user, or nil for a local user not created yet (whose
    /// lists are empty). Another name that is no user is an error.
    func existingUser(of gallery: any GalleryReading) throws -> GalleryUser? {
        let name = try userName()
        if let user = try gallery.existingUser(named: name) { return user }
        if name == GalleryUser.localName { return nil }
        return try gallery.requireUser(named: name)
    }
}
