/// A named value kept in the store for a consumer that can rebuild it (a results
/// controller's section index): what it was computed from (`fingerprint`) and the history
/// token it was computed at, so a reader can tell whether it still holds.
public struct CachedValue: Sendable, Equatable {
    /// What the value was computed from (a request, say); a different one means rebuild.
    public var fingerprint: String
    /// The history token the value was computed at.
    public var token: Int64
    /// The value itself, encoded as its consumer chooses.
    public var data: [UInt8]

    /// A cached value with these values.
    public init(fingerprint: String, token: Int64, data: [UInt8]) {
        self.fingerprint = fingerprint
        self.token = token
        self.data = data
    }
}

extension Store {
    /// The value cached under `name`, or nil.
    public func cachedValue(named name: String) throws -> CachedValue? {
        try read { context in
            guard let row = try context.rows("SELECT fingerprint, token, data FROM store_cache WHERE name = ?", [.text(name)]).first else {
                return nil
            }
            return CachedValue(fingerprint: try row.string("fingerprint"), token: try row.int64("token"),
                               data: row.optionalBytes("data") ?? [])
        }
    }

    /// Keeps `value` under `name`, replacing what was there. Not part of any change set.
    public func setCachedValue(_ value: CachedValue, named name: String) throws {
        try write { transaction in
            try transaction.execute("INSERT INTO store_cache (name, fingerprint, token, data) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET fingerprint = excluded.fingerprint, token = excluded.token, data = excluded.data",
                                    [.text(name), .text(value.fingerprint), .integer(value.token), .blob(value.data)])
        }
    }

    /// Forgets the value cached under `name` (nothing happens when there is none).
    public func deleteCachedValue(named name: String) throws {
        try write { try $0.execute("DELETE FROM store_cache WHERE name = ?", [.text(name)]) }
    }
}
