import CDigest
import Foundation
import Store

/// Someone with their own Recents and Favorites.
public struct GalleryUser: Sendable, Hashable, Codable {
    /// The user's row id in the store.
    public var id: Int64
    /// The user's name: lowercase ASCII letters, digits, `.`, `_` and `-`.
    public var name: String
    /// Whether the user has an API token (the CLI's `local` needs none).
    public var hasToken: Bool
    /// When the user was added.
    public var createdAt: Date

    /// The user the CLI acts for unless told otherwise, created on first use.
    public static let localName = "local"
}

// Users and their API tokens. A token is shown once, when made; the store keeps only its
// SHA-256, so a copy of the store gives no one a way in.
extension GalleryWriting {
    /// Adds a user and makes their API token, returned here and never again.
    ///
    /// `handOver` is given the token before the user is committed: when it throws (the
    /// token could not be shown), no user is left behind with a token nobody saw. It is
    /// called once, even when the store runs a conflicting transaction again (PostgreSQL).
    public func addUser(named name: String, at date: Date = Date(),
                        handOver: (String) throws -> Void = { _ in }) throws -> (user: GalleryUser, token: String) {
        try Gallery.checkUserName(name)
        let token = try APIToken.make()
        var handedOver = false  // a store that runs a conflicting transaction again shows the token once
        let user = try writableStore.write { transaction -> GalleryUser in
            guard try Gallery.userRecord(named: name, in: transaction) == nil else {
                throw GalleryError(.alreadyExists, "a user is already called \(name)", hint: "a new token: topregions users token \(name) --rotate")
            }
            var record = UserRecord(id: try Gallery.newUserID(in: transaction), name: name, tokenHash: token.hash, createdAt: date)
            try transaction.insert(&record)
            guard let user = GalleryUser(record) else { throw GalleryError(.invalidArgument, "user \(name) was not stored") }
            if !handedOver { try handOver(token.text) }
            handedOver = true
            return user
        }
        return (user, token.text)
    }

    /// Removes the user with their Recents and Favorites.
    public func removeUser(named name: String) throws {
        try writableStore.write { transaction in
            guard let record = try Gallery.userRecord(named: name, in: transaction) else {
                throw GalleryError(.notFound, "no user is called \(name)")
            }
            try transaction.delete(record)
        }
    }

    /// Makes the user a new API token (the old one stops working) and returns it.
    ///
    /// `handOver` is given the new token before it replaces the old: when it throws, the
    /// old token keeps working.
    public func rotateToken(forUserNamed name: String, handOver: (String) throws -> Void = { _ in }) throws -> String {
        let token = try APIToken.make()
        var handedOver = false
        try writableStore.write { transaction in
            guard var record = try Gallery.userRecord(named: name, in: transaction) else {
                throw GalleryError(.notFound, "no user is called \(name)", hint: "add one: topregions users add \(name)")
            }
            record.tokenHash = token.hash
            try transaction.update(record)
            if !handedOver { try handOver(token.text) }
            handedOver = true
        }
        return token.text
    }
}

extension Gallery {
    // MARK: Within transactions

    static func userRecord(named name: String, in context: ReadContext) throws -> UserRecord? {
        try context.fetch(UserRecord.self, where: Key("name") == name).first
    }

    /// The local user, created when missing.
    static func localUser(in transaction: Transaction) throws -> GalleryUser {
        if let user = try userRecord(named: GalleryUser.localName, in: transaction).flatMap(GalleryUser.init) { return user }
        var record = UserRecord(id: try newUserID(in: transaction), name: GalleryUser.localName, tokenHash: nil, createdAt: Date())
        try transaction.insert(&record)
        guard let user = GalleryUser(record) else { throw GalleryError(.invalidArgument, "the local user was not stored") }
        return user
    }

    /// An id no user has ever had. A user's id names their lists' change streams and
    /// history, so a removed user's id given to a new user would hand the new user's Recents
    /// to whoever still follows (or resumes) the old user's streams. The highest id given is
    /// kept as a setting, since SQLite gives a deleted highest rowid again.
    static func newUserID(in transaction: Transaction) throws -> Int64 {
        let sql = transaction.dialect
        let stored = try transaction.scalar("SELECT max(id) FROM \(sql.identifier("User"))")?.int64 ?? 0
        let given = try transaction.scalar("SELECT value FROM Setting WHERE key = \(sql.parameter(1))", [.text(lastUserIDKey)])?
            .string.flatMap { Int64($0) } ?? 0
        let id = max(stored, given) + 1
        try transaction.execute("INSERT INTO Setting (key, value) VALUES (\(sql.parameter(1)), \(sql.parameter(2))) "
                                + "ON CONFLICT (key) DO UPDATE SET value = excluded.value", [.text(lastUserIDKey), .text(String(id))])
        return id
    }

    static let lastUserIDKey = "users.lastID"

    /// Lowercase ASCII letters, digits, `.`, `_`, `-`, starting with a letter or digit, 1 to 64.
    public static func checkUserName(_ name: String) throws {
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard (1...64).contains(name.utf8.count), allowed, let first = name.utf8.first,
              first != UInt8(ascii: "."), first != UInt8(ascii: "_"), first != UInt8(ascii: "-") else {
            throw GalleryError(.invalidArgument, "a user name is 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit",
                               hint: "for example: alice, bob-2")
        }
    }
}

extension GalleryUser {
    init?(_ record: UserRecord) {
        guard let id = record.id else { return nil }
        self.init(id: id, name: record.name, hasToken: record.tokenHash != nil, createdAt: record.createdAt)
    }
}

/// API tokens: `trk_` and 43 characters of base64url (32 random bytes).
enum APIToken {
    static let prefix = "trk_"

    static func make() throws -> (text: String, hash: String) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let text = prefix + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return (text, try hash(text))
    }

    /// Whether the text has a token's shape (anything else is refused before hashing).
    static func looksValid(_ token: String) -> Bool {
        token.utf8.count == prefix.utf8.count + 43 && token.hasPrefix(prefix)
            && token.utf8.dropFirst(prefix.utf8.count).allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// Hex SHA-256 of the token's UTF-8.
    static func hash(_ token: String) throws -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(token.utf8)
        guard tr_sha256(bytes, bytes.count, &digest) == 0 else {
            throw GalleryError(.invalidArgument, "cannot hash a token: \(String(cString: tr_digest_load_error()))",
                               hint: "install libcrypto: apt-get install libssl3")
        }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// Equal, in a time that depends only on the lengths.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

/// `topregions.v4.users`: users, and Recents and Favorites that belong to one. The lists a
/// store had before belong to `local`, which the migration creates.
enum UserMigration {
    @Sendable static func apply(_ transaction: Transaction) throws {
        if try !tableExists("User", transaction) { try transaction.create(TopRegionsSchema.user) }
        for table in ["Recent", "Favorite"] where try !columnExists("user_id", in: table, transaction) {
            try transaction.execute("ALTER TABLE \"\(table)\" ADD COLUMN \"user_id\" INTEGER REFERENCES \"User\" DEFERRABLE INITIALLY DEFERRED")
        }
        let local = try Gallery.localUser(in: transaction)
        for table in ["Recent", "Favorite"] {
            try transaction.execute("UPDATE \"\(table)\" SET \"user_id\" = ? WHERE \"user_id\" IS NULL", [.integer(local.id)])
        }
        for old in ["recent_photo", "recent_last_viewed", "favorite_photo", "favorite_order"] {
            try transaction.execute("DROP INDEX IF EXISTS \"\(old)\"")
        }
        try transaction.execute("CREATE UNIQUE INDEX IF NOT EXISTS \"recent_user_photo\" ON \"Recent\" (\"user_id\", \"photo_id\")")
        try transaction.execute("CREATE INDEX IF NOT EXISTS \"recent_user_last_viewed\" ON \"Recent\" (\"user_id\", \"lastViewed\")")
        try transaction.execute("CREATE INDEX IF NOT EXISTS \"Recent_photo_id\" ON \"Recent\" (\"photo_id\")")
        try transaction.execute("CREATE UNIQUE INDEX IF NOT EXISTS \"favorite_user_photo\" ON \"Favorite\" (\"user_id\", \"photo_id\")")
        try transaction.execute("CREATE INDEX IF NOT EXISTS \"favorite_user_order\" ON \"Favorite\" (\"user_id\", \"displayOrder\")")
        try transaction.execute("CREATE INDEX IF NOT EXISTS \"Favorite_photo_id\" ON \"Favorite\" (\"photo_id\")")
    }

    private static func tableExists(_ name: String, _ transaction: Transaction) throws -> Bool {
        try transaction.scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", [.text(name)])?.int64 ?? 0 > 0
    }

    static func columnExists(_ column: String, in table: String, _ transaction: Transaction) throws -> Bool {
        try transaction.scalar("SELECT count(*) FROM pragma_table_info(?) WHERE name = ?", [.text(table), .text(column)])?.int64 ?? 0 > 0
    }
}

// Reading users, from any store a gallery can be read from.
extension GalleryReading {
    /// The user whose token this is, or nil. The store is searched by the token's SHA-256,
    /// which tells a timing observer nothing about the token; the stored hash is then
    /// compared in constant time.
    public func authenticate(token: String) throws -> GalleryUser? {
        guard APIToken.looksValid(token), let hash = try? APIToken.hash(token) else { return nil }
        let record = try readableStore.read { try $0.fetch(UserRecord.self, where: Key("tokenHash") == hash).first }
        guard let record, let stored = record.tokenHash, APIToken.constantTimeEqual(stored, hash) else { return nil }
        return GalleryUser(record)
    }

    /// Every user, by name.
    public func users() throws -> [GalleryUser] {
        try readableStore.read { try $0.fetch(UserRecord.self, sortedBy: [SortKey("name")]) }.compactMap(GalleryUser.init)
    }

    /// The user called `name`, or nil (never created).
    public func existingUser(named name: String) throws -> GalleryUser? {
        try readableStore.read { try Gallery.userRecord(named: name, in: $0) }.flatMap(GalleryUser.init)
    }

    /// The user called `name`; `notFound`, with the names there are, when there is none.
    public func requireUser(named name: String) throws -> GalleryUser {
        if let user = try existingUser(named: name) { return user }
        let known = try users().map(\.name)
        throw GalleryError(.notFound, "no user is called \(name)",
                           hint: known.isEmpty ? "add one: topregions users add \(name)"
                                               : "users: \(known.joined(separator: ", ")); add one: topregions users add \(name)")
    }
}

// The user the CLI acts for, on either store.
extension GalleryWriting {
    /// The user called `name`; `notFound` (with the names there are) when there is none.
    /// The local user is created when first asked for, unless the store is read-only.
    public func user(named name: String) throws -> GalleryUser {
        if let user = try existingUser(named: name) { return user }
        if name == GalleryUser.localName, !isReadOnly {
            return try writableStore.write { try Gallery.localUser(in: $0) }
        }
        return try requireUser(named: name)
    }
}
