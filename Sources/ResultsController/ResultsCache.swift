import Foundation
import Store

/// The controller's computed index (ids and sort keys, in order), kept in the store under
/// a cache name so that a later `performFetch` of the same request, in this process or
/// another, skips the query and the sort while the history shows no relevant change.
enum ResultsCache {
    static let version: UInt8 = 1

    /// What the cached index was computed from.
    static func fingerprint(_ request: FetchRequest, sortKeys: [SortKey], sectionKeyPath: String?) -> String {
        "v\(version)|\(request.entityName)|\(String(describing: request.predicate))|\(sortKeys.map { "\($0.keyPath):\($0.ascending):\($0.collation.rawValue)" })|\(String(describing: request.fetchLimit))|\(request.fetchOffset)|\(sectionKeyPath ?? "-")"
    }

    static func encode(ids: [Int64], keys: [SQLValue]) -> [UInt8] {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(ids.count * 20)
        append(UInt64(ids.count), to: &bytes)
        for id in ids { append(UInt64(bitPattern: id), to: &bytes) }
        for key in keys {
            switch key {
            case .null:
                bytes.append(0)
            case .integer(let value):
                bytes.append(1)
                append(UInt64(bitPattern: value), to: &bytes)
            case .real(let value):
                bytes.append(2)
                append(value.bitPattern, to: &bytes)
            case .text(let value):
                bytes.append(3)
                let utf8 = Array(value.utf8)
                append(UInt64(utf8.count), to: &bytes)
                bytes += utf8
            case .blob(let value):
                bytes.append(4)
                append(UInt64(value.count), to: &bytes)
                bytes += value
            }
        }
        return bytes
    }

    /// The ids and keys, or nil when the bytes are not a cache this version wrote.
    static func decode(_ bytes: [UInt8], keyCount: Int) -> (ids: [Int64], keys: [SQLValue])? {
        var position = 0
        func word() -> UInt64? {
            guard position + 8 <= bytes.count else { return nil }
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(bytes[position + index]) << (8 * UInt64(index)) }
            position += 8
            return value
        }
        guard bytes.first == version else { return nil }
        position = 1
        guard let count = word(), count <= UInt64(bytes.count) else { return nil }
        var ids: [Int64] = []
        ids.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let id = word() else { return nil }
            ids.append(Int64(bitPattern: id))
        }
        var keys: [SQLValue] = []
        keys.reserveCapacity(Int(count) * keyCount)
        for _ in 0..<(Int(count) * keyCount) {
            guard position < bytes.count else { return nil }
            let tag = bytes[position]
            position += 1
            switch tag {
            case 0: keys.append(.null)
            case 1: guard let value = word() else { return nil }; keys.append(.integer(Int64(bitPattern: value)))
            case 2: guard let value = word() else { return nil }; keys.append(.real(Double(bitPattern: value)))
            case 3, 4:
                guard let length = word(), position + Int(length) <= bytes.count else { return nil }
                let slice = Array(bytes[position..<position + Int(length)])
                position += Int(length)
                keys.append(tag == 3 ? .text(String(decoding: slice, as: UTF8.self)) : .blob(slice))
            default: return nil
            }
        }
        return position == bytes.count ? (ids, keys) : nil
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for index in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}
