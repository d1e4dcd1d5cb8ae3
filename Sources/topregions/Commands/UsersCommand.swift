import Foundation
import TopRegionsKit

/// A user as `users list` shows it.
struct UserRow: Encodable, TableRow {
    var name: String
    var hasToken: Bool
    var createdAt: Date

    static let columns: [(String, Table.Kind)] = [("USER", .key), ("TOKEN", .text), ("ADDED", .text)]
    var cells: [String] { [name, hasToken ? "yes" : "no", createdAt.iso8601] }
}

// `users`: who has Recents and Favorites, and the API tokens of `serve`.
extension Commands {
    static let users = Command(
        name: "users", abstract: "List, add or remove users, or make a user a new API token.",
        arguments: [Argument(name: "ACTION", help: "list (default), add, remove or token", optional: true),
                    Argument(name: "NAME", help: "the user (add, remove, token)", optional: true)],
        options: [.flag("rotate", "with token: make a new token (the old one stops working)")],
        examples: [Example(arguments: ["users", "add", "alice"], explanation: "add alice; her API token is printed once, and only its hash is kept"),
                   Example(arguments: ["users", "token", "alice", "--rotate"], explanation: "a new token for alice; the old one no longer works"),
                   Example(arguments: ["users", "list"], explanation: "every user, and whether each has a token"),
                   Example(arguments: ["users", "remove", "alice"], explanation: "remove alice with her Recents and Favorites")],
        discussion: "The CLI acts for the user `local` unless --user says otherwise; `local` is created on first use. HTTP clients of `topregions serve` send a user's token as `Authorization: Bearer TOKEN`."
    ) { invocation in
        let words = invocation.positionals
        let action = words.first ?? "list"
        if invocation.flag("rotate") && action != "token" {
            throw UsageError("--rotate goes with users token NAME, not with users \(action)", command: invocation.command)
        }
        if words.count == 2 { try Suggestions.checkUserName(words[1], command: invocation.command) }
        if action == "list", words.count <= 1 {
            let gallery = try invocation.openReader()
            defer { gallery.close() }
            let rows = try gallery.users().map { UserRow(name: $0.name, hasToken: $0.hasToken, createdAt: $0.createdAt) }
            try show(rows, invocation.output, empty: "No users yet: topregions users add NAME")
            return 0
        }
        let gallery = try Gallery.isPostgres(invocation.storePath) ? invocation.openWriter() : invocation.openGallery(.create)
        defer { gallery.close() }
        switch (action, words.count) {
        case ("add", 2):
            // Shown before the user is committed: output that cannot be written ends the
            // command (status 1) with no user added.
            _ = try gallery.addUser(named: words[1]) { printToken($0, for: words[1], invocation.output, verb: "added") }
        case ("remove", 2):
            try gallery.removeUser(named: words[1])
            if invocation.output.json { try invocation.output.emit(["removed": words[1]]) } else {
                invocation.output.line("removed \(words[1]) with their Recents and Favorites")
            }
        case ("token", 2):
            guard invocation.flag("rotate") else {
                throw UsageError("a token is shown only when made: users token \(words[1]) --rotate makes a new one", command: invocation.command)
            }
            _ = try gallery.rotateToken(forUserNamed: words[1]) { printToken($0, for: words[1], invocation.output, verb: "new token for") }
        default:
            throw UsageError("users takes list, add NAME, remove NAME or token NAME --rotate, not \"\(words.joined(separator: " "))\"",
                             command: invocation.command)
        }
        return 0
    }

    private static func printToken(_ token: String, for name: String, _ output: Output, verb: String) {
        if output.json {
            try? output.emit(["user": name, "token": token])
        } else {
            output.line("\(verb) \(name); API token (shown only now, keep it safe):")
            output.line(token)
        }
    }
}
