import FlintModel
import FlintTesting
import Testing

@testable import FlintStore

/// The chunked map must behave exactly like a sorted dictionary, across many chunk splits.
struct SortedMapTests {
    @Test(arguments: [1, 2, 3])
    func matchesAReferenceDictionary(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        var map = SortedMap<Int, Int>()
        var reference: [Int: Int] = [:]
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<3_000, using: &rng)
            if Int.random(in: 0..<4, using: &rng) == 0 {
                map.set(key, nil)
                reference[key] = nil
            } else {
                map.set(key, step)
                reference[key] = step
            }
        }
        #expect(map.count == reference.count)
        var visited: [(Int, Int)] = []
        map.forEach { k, v in visited.append((k, v)); return true }
        let expected = reference.sorted { $0.key < $1.key }
        #expect(visited.map(\.0) == expected.map(\.key))
        #expect(visited.map(\.1) == expected.map(\.value))
        for probe in stride(from: -1, to: 3_001, by: 7) {
            #expect(map[probe] == reference[probe])
            let start = map.index(from: probe, inclusive: false)
            let firstAfter = expected.first { $0.key > probe }?.key
            #expect(start == map.endIndex ? firstAfter == nil : map.key(at: start) == firstAfter)
            var reversed: [Int] = []
            map.forEachReversed(through: probe) { k, _ in reversed.append(k); return reversed.count < 3 }
            #expect(reversed == Array(expected.map(\.key).filter { $0 <= probe }.reversed().prefix(3)))
        }
    }

    @Test func compactMapInPlaceKeepsOrderAndCount() {
        var map = SortedMap<Int, Int>()
        for i in (0..<5_000).reversed() { map.set(i, i) }
        map.compactMapInPlace { k, v in k % 3 == 0 ? v * 2 : nil }
        #expect(map.count == 1_667)
        var keys: [Int] = []
        map.forEach { k, v in
            #expect(v == k * 2)
            keys.append(k)
            return true
        }
        #expect(keys == Array(stride(from: 0, to: 5_000, by: 3)))
    }

    @Test func utf8KeysOrderByBytes() {
        var map = SortedMap<UTF8Key, Int>()
        for (i, s) in ["\u{e9}", "e\u{301}", "Z", "a", "\u{1F600}", "\u{fffd}"].enumerated() { map.set(UTF8Key(s), i) }
        var order: [String] = []
        map.forEach { k, _ in order.append(k.string); return true }
        #expect(order == ["Z", "a", "e\u{301}", "\u{e9}", "\u{fffd}", "\u{1F600}"])
        #expect(map.count == 6)
    }

    /// Keys written in ascending order (sequential ids) split the last chunk over and over; the
    /// halves left behind must not keep the capacity of the full chunk they came from.
    @Test func chunksLeftBehindBySplitsHoldNoSlack() {
        var map = SortedMap<Int, Int>()
        for key in 0..<10_000 { map.set(key, key) }
        #expect(map.chunks.count == 10_000 / (SortedMap<Int, Int>.maxChunk / 2))
        let reserved = map.chunks.map { $0.keys.capacity + $0.elements.capacity + $0.prefixes.capacity }.reduce(0, +)
        // Every chunk but the last holds maxChunk / 2 keys in arrays of about that size (malloc may
        // round up a little); the last one grows by doubling. Trimmed in place, each lower half
        // would have kept twice that.
        #expect(reserved <= 3 * (10_000 + SortedMap<Int, Int>.maxChunk))
        for chunk in map.chunks.dropLast() { #expect(chunk.keys.capacity < chunk.keys.count + 8) }
    }
}
