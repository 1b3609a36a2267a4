import FlintModel

/// The order in which the reference lists an update mask's paths in `request.writeFields`,
/// measured on it. It keeps a mask as a tree of field names, each level a Java `HashMap`: a
/// level's names that end a path are put in first, in the mask's order, then those that lead
/// further; a name that ends a path takes in every longer path through it (a mask of `m` and
/// `m.y` is `m`). Folded writes put their masks into one tree from the last write back to the
/// first. Listing walks the tree depth first, each level in its map's order.
enum ReferenceMaskOrder {
    /// `masks`, one per write in the order written.
    static func listed(_ masks: [[FieldPath]]) -> [FieldPath] {
        var tree = Level()
        for mask in masks.reversed() { tree.put(mask.map { ArraySlice($0.segments) }) }
        var out: [FieldPath] = []
        tree.list(prefix: [], into: &out)
        return out
    }

    /// One level of the tree: its names in the order put, which end a path, and what lies
    /// below the others. Names are told apart by their bytes, as the mask's paths are.
    struct Level {
        var names: [UTF8Key] = []
        var named: Set<UTF8Key> = []
        var ends: Set<UTF8Key> = []
        var below: [UTF8Key: Level] = [:]

        mutating func put(_ tails: [ArraySlice<String>]) {
            for tail in tails where tail.count == 1 {
                let name = UTF8Key(tail[tail.startIndex])
                if named.insert(name).inserted { names.append(name) }
                ends.insert(name)
                below[name] = nil
            }
            // The longer paths, by the name they lead through, in the order the names come.
            var leads: [UTF8Key] = []
            var through: [UTF8Key: [ArraySlice<String>]] = [:]
            for tail in tails where tail.count > 1 {
                let name = UTF8Key(tail[tail.startIndex])
                if ends.contains(name) { continue }
                if through[name] == nil { leads.append(name) }
                through[name, default: []].append(tail.dropFirst())
            }
            for name in leads {
                if named.insert(name).inserted { names.append(name) }
                below[name, default: Level()].put(through[name] ?? [])
            }
        }

        func list(prefix: [String], into out: inout [FieldPath]) {
            for name in ReferenceMaskOrder.javaHashMapOrder(names) {
                if ends.contains(name) {
                    out.append(FieldPath(unchecked: prefix + [name.string]))
                } else {
                    below[name]?.list(prefix: prefix + [name.string], into: &out)
                }
            }
        }
    }

    /// Distinct `keys`, put into a Java `HashMap` in this order, as it iterates them: bucket by
    /// bucket, a key's bucket being its Java hash spread (`h ^ h >>> 16`) and masked by the table
    /// size, which starts at 16 and doubles whenever the count passes three quarters of it; keys
    /// sharing a bucket in the order put. (Masks of 3 to 26 names confirm the growth: a table
    /// sized for the final count at once differs at 12 and 25.)
    static func javaHashMapOrder(_ keys: [UTF8Key]) -> [UTF8Key] {
        var buckets = 16
        while keys.count * 4 > buckets * 3 { buckets *= 2 }
        let mask = UInt32(buckets - 1)
        return keys.enumerated()
            .map { (bucket: spread(javaHash($0.element.string)) & mask, index: $0.offset, key: $0.element) }
            .sorted { ($0.bucket, $0.index) < ($1.bucket, $1.index) }
            .map(\.key)
    }

    /// Java's `String.hashCode`: 31 × h + each UTF-16 unit, wrapping.
    static func javaHash(_ s: String) -> UInt32 {
        s.utf16.reduce(UInt32(0)) { h, unit in h &* 31 &+ UInt32(unit) }
    }

    static func spread(_ h: UInt32) -> UInt32 { h ^ (h >> 16) }
}
