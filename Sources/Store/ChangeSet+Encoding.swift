/// The compact binary form of a change set kept in the history table.
///
/// Layout (version 1): a version byte, then per entity: its name, the inserted ids, the
/// deleted ids, and the updates grouped by the set of keys that changed. Ids are sorted and
/// stored as zigzag varint deltas, so a large insert of consecutive ids costs a byte an id.
/// This format is part of the store file's contract: change it only with a new version byte.
/// Version 0, a single byte, marks a commit whose changes were not recorded (a PostgreSQL
/// store written from `psql`, its rows too many or truncated): reading it throws
/// `decoding`, which observers take as a gap. A first byte of `externalRowsMarker` marks an
/// entry whose rows its store keeps apart (the PostgreSQL store's writes from `psql`): that
/// store reads them; this initializer refuses it.
extension ChangeSet {
    static let encodingVersion: UInt8 = 1
    /// The entry of a commit whose changed rows are unknown.
    package static let unrecordedEncoding: [UInt8] = [0]
    /// The first byte of an entry whose changed rows are kept outside it.
    package static let externalRowsMarker: UInt8 = 0xFE

    package func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes.append(Self.encodingVersion)
        let names = entityNames
        writer.varint(UInt64(names.count))
        for name in names {
            let changes = self[name]
            writer.string(name)
            writer.ids(changes.inserted)
            writer.ids(changes.deleted)
            var groups: [[String]: [Int64]] = [:]
            for (id, keys) in changes.updated { groups[keys.sorted(), default: []].append(id) }
            writer.varint(UInt64(groups.count))
            for keys in groups.keys.sorted(by: { $0.joined(separator: ",") < $1.joined(separator: ",") }) {
                writer.varint(UInt64(keys.count))
                for key in keys { writer.string(key) }
                writer.ids(groups[keys] ?? [])
            }
        }
        return writer.bytes
    }

    package init(encoded bytes: [UInt8]) throws {
        var reader = ByteReader(bytes: bytes)
        let version = try reader.byte()
        guard bytes != Self.unrecordedEncoding else {
            throw StoreError(.decoding, "History entry of a commit made outside this program: which rows it changed was not recorded")
        }
        guard version != Self.externalRowsMarker else {
            throw StoreError(.decoding, "History entry refers to rows kept apart, which only its own store reads")
        }
        guard version == Self.encodingVersion else {
            throw StoreError(.decoding, "History entry has format version \(version); this program reads version \(Self.encodingVersion)")
        }
        var entities: [String: EntityChanges] = [:]
        for _ in 0..<(try reader.count()) {
            let name = try reader.string()
            let inserted = Set(try reader.ids())
            let deleted = Set(try reader.ids())
            var updated: [Int64: Set<String>] = [:]
            for _ in 0..<(try reader.count()) {
                var keys: Set<String> = []
                for _ in 0..<(try reader.count()) { keys.insert(try reader.string()) }
                for id in try reader.ids() { updated[id] = keys }
            }
            entities[name] = EntityChanges(inserted: inserted, updated: updated, deleted: deleted)
        }
        guard reader.isAtEnd else { throw StoreError(.decoding, "History entry has trailing bytes") }
        self.init(entities: entities)
    }
}

private struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func string(_ text: String) {
        let utf8 = Array(text.utf8)
        varint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func ids(_ ids: some Collection<Int64>) {
        varint(UInt64(ids.count))
        var previous: Int64 = 0
        for id in ids.sorted() {
            let delta = id &- previous
            varint(UInt64(bitPattern: (delta << 1) ^ (delta >> 63)))
            previous = id
        }
    }
}

private struct ByteReader {
    let bytes: [UInt8]
    var position = 0

    var isAtEnd: Bool { position == bytes.count }

    mutating func byte() throws -> UInt8 {
        guard position < bytes.count else { throw StoreError(.decoding, "History entry is truncated") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try self.byte()
            guard shift < 64 else { throw StoreError(.decoding, "History entry has an overlong number") }
            result |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// A count, checked against the bytes left so a damaged entry cannot ask for huge arrays.
    mutating func count() throws -> Int {
        let value = try varint()
        guard value <= UInt64(bytes.count - position) else { throw StoreError(.decoding, "History entry is truncated") }
        return Int(value)
    }

    mutating func string() throws -> String {
        let length = try count()
        defer { position += length }
        return String(decoding: bytes[position..<position + length], as: UTF8.self)
    }

    mutating func ids() throws -> [Int64] {
        let count = try self.count()
        var ids: [Int64] = []
        ids.reserveCapacity(count)
        var previous: Int64 = 0
        for _ in 0..<count {
            let zigzag = try varint()
            let delta = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            previous = previous &+ delta
            ids.append(previous)
        }
        return ids
    }
}
