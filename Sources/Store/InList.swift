/// Lengths for `IN (…)` lists, so that a statement with one is prepared once and reused.
///
/// A list of exactly as many parameters as values makes a new statement for nearly every
/// batch (a page of photos has 187 distinct owners, the next 203, …), and preparing one
/// with hundreds of parameters costs more than running it. Padded to the next power of
/// two, at most `limit`, by repeating the last value (a value listed twice matches the same
/// rows), a list comes in a handful of lengths.
public enum InList {
    /// `count` rounded up to a power of two, at most `limit` (and never below `count`).
    public static func paddedCount(_ count: Int, limit: Int) -> Int {
        guard count > 1 else { return count }
        var length = 1
        while length < count { length *= 2 }
        return max(count, min(length, limit))
    }

    /// `values` in lists of at most `size`, each padded to `paddedCount`: what a batch of
    /// `IN (…)` queries binds, one list per query.
    public static func paddedChunks<Element>(_ values: some Collection<Element>, size: Int) -> [[Element]] {
        values.chunked(size).map { padded($0, limit: size) }
    }

    /// `values` padded to `paddedCount` by repeating the last one.
    public static func padded<Element>(_ values: some Collection<Element>, limit: Int) -> [Element] {
        var padded = Array(values)
        guard let last = padded.last else { return padded }
        let count = paddedCount(padded.count, limit: limit)
        padded.append(contentsOf: repeatElement(last, count: count - padded.count))
        return padded
    }
}
