/// The order in which the reference lists a set of strings it gathered one by one: its sets are
/// Java's `HashSet`, which iterate bucket by bucket. A string's bucket is its Java hash (over
/// UTF-16 units), spread (`h ^ h >>> 16`), masked by the table size; the table starts at 16
/// buckets and doubles whenever the count passes three quarters of it. Strings sharing a bucket
/// keep the order they were added in. Measured with `request.writeFields` on masks of 3 to 25
/// paths, where a table built for the final count at once would differ at 12 and 25.
enum JavaHashSetOrder {
    /// `strings`, each once, in the order the reference's set iterates them.
    static func ordered(_ strings: [String]) -> [String] {
        var unique: [String] = []
        var seen = Set<String>()
        for s in strings where seen.insert(s).inserted { unique.append(s) }
        var buckets = 16
        while unique.count * 4 > buckets * 3 { buckets *= 2 }
        let mask = UInt32(buckets - 1)
        return unique.enumerated()
            .map { (bucket: spread(hash($0.element)) & mask, index: $0.offset, string: $0.element) }
            .sorted { ($0.bucket, $0.index) < ($1.bucket, $1.index) }
            .map(\.string)
    }

    /// Java's `String.hashCode`: 31 × h + each UTF-16 unit, wrapping.
    static func hash(_ s: String) -> UInt32 {
        s.utf16.reduce(UInt32(0)) { h, unit in h &* 31 &+ UInt32(unit) }
    }

    static func spread(_ h: UInt32) -> UInt32 { h ^ (h >> 16) }
}
