import FlintModel

/// An ordered map kept as a sorted list of small sorted chunks (a two-level B-tree).
///
/// Lookups are two binary searches; an insert moves at most one chunk's elements, and a
/// split moves chunk headers, so writes stay cheap at millions of keys without per-node
/// allocations.
/// A key with a three-way comparison and an order-preserving 64-bit prefix.
///
/// Searches compare prefixes held in a dense array and look at the keys themselves only on
/// a tie, which keeps random lookups to a few cache lines.
public protocol SortKey: Comparable {
    /// -1, 0 or 1.
    static func order(_ a: Self, _ b: Self) -> Int
    /// If `a.prefix < b.prefix` then `a < b`; equal prefixes say nothing.
    var prefix: UInt64 { get }
}

extension Int: SortKey {
    public static func order(_ a: Int, _ b: Int) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
    public var prefix: UInt64 { UInt64(bitPattern: Int64(self)) ^ (1 << 63) }
}

public struct SortedMap<Key: SortKey, Element> {
    struct Chunk {
        var prefixes: [UInt64]
        var keys: [Key]
        var elements: [Element]

        init(keys: [Key], elements: [Element]) {
            self.prefixes = keys.map(\.prefix)
            self.keys = keys
            self.elements = elements
        }
    }

    static var maxChunk: Int { 512 }

    private(set) var chunks: [Chunk] = []
    /// The first key of each chunk and its prefix, searched without touching the chunks.
    private var firstKeys: [Key] = []
    private var firstPrefixes: [UInt64] = []
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }

    /// A position: chunk and offset inside it.
    public struct Index: Comparable {
        var chunk: Int
        var offset: Int

        public static func < (a: Index, b: Index) -> Bool {
            (a.chunk, a.offset) < (b.chunk, b.offset)
        }
    }

    public var startIndex: Index { Index(chunk: 0, offset: 0) }
    public var endIndex: Index { Index(chunk: chunks.count, offset: 0) }

    /// The chunk that holds `key`, or should: the last chunk whose first key is <= key.
    private func chunkIndex(for key: Key) -> Int {
        let p = key.prefix
        return firstPrefixes.withUnsafeBufferPointer { prefixes in
            firstKeys.withUnsafeBufferPointer { firsts in
                var lo = 0
                var hi = firsts.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    let q = prefixes[mid]
                    let c = q != p ? (q < p ? -1 : 1) : Key.order(firsts[mid], key)
                    if c <= 0 { lo = mid + 1 } else { hi = mid }
                }
                return max(lo - 1, 0)
            }
        }
    }

    private static func search(_ chunk: Chunk, _ key: Key) -> (Int, Bool) {
        let p = key.prefix
        return chunk.prefixes.withUnsafeBufferPointer { prefixes in
            chunk.keys.withUnsafeBufferPointer { keys in
                var lo = 0
                var hi = keys.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    let q = prefixes[mid]
                    let c = q != p ? (q < p ? -1 : 1) : Key.order(keys[mid], key)
                    if c < 0 { lo = mid + 1 } else if c == 0 { return (mid, true) } else { hi = mid }
                }
                return (lo, false)
            }
        }
    }

    public subscript(key: Key) -> Element? {
        guard !chunks.isEmpty else { return nil }
        let c = chunkIndex(for: key)
        let (i, found) = Self.search(chunks[c], key)
        return found ? chunks[c].elements.withUnsafeBufferPointer { $0[i] } : nil
    }

    /// Reads and changes the element for `key` in place; setting nil removes it.
    @discardableResult
    public mutating func update<R>(_ key: Key, _ body: (inout Element?) -> R) -> R {
        if chunks.isEmpty {
            var value: Element? = nil
            let r = body(&value)
            if let value {
                chunks.append(Chunk(keys: [key], elements: [value]))
                firstKeys = [key]
                firstPrefixes = [key.prefix]
                count = 1
            }
            return r
        }
        let c = chunkIndex(for: key)
        let (i, found) = Self.search(chunks[c], key)
        if found {
            var value: Element? = chunks[c].elements[i]
            let r = body(&value)
            if let value {
                chunks[c].elements[i] = value
            } else {
                chunks[c].prefixes.remove(at: i)
                chunks[c].keys.remove(at: i)
                chunks[c].elements.remove(at: i)
                count -= 1
                if chunks[c].keys.isEmpty {
                    chunks.remove(at: c)
                    firstKeys.remove(at: c)
                    firstPrefixes.remove(at: c)
                } else if i == 0 {
                    firstKeys[c] = chunks[c].keys[0]
                    firstPrefixes[c] = chunks[c].prefixes[0]
                }
            }
            return r
        }
        var value: Element? = nil
        let r = body(&value)
        if let value {
            chunks[c].prefixes.insert(key.prefix, at: i)
            chunks[c].keys.insert(key, at: i)
            chunks[c].elements.insert(value, at: i)
            if i == 0 {
                firstKeys[c] = key
                firstPrefixes[c] = key.prefix
            }
            count += 1
            if chunks[c].keys.count > Self.maxChunk { split(c) }
        }
        return r
    }

    public mutating func set(_ key: Key, _ element: Element?) {
        update(key) { $0 = element }
    }

    private mutating func split(_ c: Int) {
        let half = chunks[c].keys.count / 2
        let upper = Chunk(
            keys: Array(chunks[c].keys[half...]), elements: Array(chunks[c].elements[half...]))
        // Fresh arrays for the lower half too: trimmed in place they would keep the capacity of a
        // full chunk, and ids written in ascending order never fill a lower half again.
        chunks[c] = Chunk(keys: Array(chunks[c].keys[..<half]), elements: Array(chunks[c].elements[..<half]))
        chunks.insert(upper, at: c + 1)
        firstKeys.insert(upper.keys[0], at: c + 1)
        firstPrefixes.insert(upper.prefixes[0], at: c + 1)
    }

    // MARK: - Ordered traversal

    /// The first position whose key is >= `key` (or > `key` when `inclusive` is false).
    public func index(from key: Key, inclusive: Bool = true) -> Index {
        guard !chunks.isEmpty else { return endIndex }
        let c = chunkIndex(for: key)
        var (i, found) = Self.search(chunks[c], key)
        if found && !inclusive { i += 1 }
        return normalized(Index(chunk: c, offset: i))
    }

    private func normalized(_ index: Index) -> Index {
        var index = index
        while index.chunk < chunks.count && index.offset >= chunks[index.chunk].keys.count {
            index = Index(chunk: index.chunk + 1, offset: 0)
        }
        return index
    }

    public func index(after i: Index) -> Index {
        normalized(Index(chunk: i.chunk, offset: i.offset + 1))
    }

    /// The position before `i`, or nil at the start.
    public func index(before i: Index) -> Index? {
        if i.offset > 0 { return Index(chunk: i.chunk, offset: i.offset - 1) }
        var c = i.chunk - 1
        while c >= 0 {
            if !chunks[c].keys.isEmpty { return Index(chunk: c, offset: chunks[c].keys.count - 1) }
            c -= 1
        }
        return nil
    }

    public func key(at i: Index) -> Key { chunks[i.chunk].keys[i.offset] }
    public func element(at i: Index) -> Element { chunks[i.chunk].elements[i.offset] }

    /// Visits entries in key order starting at `start`, until `body` returns false.
    public func forEach(from start: Index? = nil, _ body: (Key, Element) -> Bool) {
        var i = start ?? normalized(startIndex)
        while i.chunk < chunks.count {
            let chunk = chunks[i.chunk]
            while i.offset < chunk.keys.count {
                if !body(chunk.keys[i.offset], chunk.elements[i.offset]) { return }
                i.offset += 1
            }
            i = Index(chunk: i.chunk + 1, offset: 0)
        }
    }

    /// Visits entries in descending key order, starting at the last key <= `through` (or the end).
    public func forEachReversed(through key: Key? = nil, _ body: (Key, Element) -> Bool) {
        guard !chunks.isEmpty else { return }
        var c: Int
        var o: Int
        if let key {
            c = chunkIndex(for: key)
            let (i, found) = Self.search(chunks[c], key)
            o = found ? i : i - 1
        } else {
            c = chunks.count - 1
            o = chunks[c].keys.count - 1
        }
        while c >= 0 {
            let chunk = chunks[c]
            while o >= 0 {
                if !body(chunk.keys[o], chunk.elements[o]) { return }
                o -= 1
            }
            c -= 1
            if c >= 0 { o = chunks[c].keys.count - 1 }
        }
    }

    /// Applies `body` to every element in place; returning nil removes it.
    public mutating func compactMapInPlace(_ body: (Key, Element) -> Element?) {
        var newChunks: [Chunk] = []
        var newCount = 0
        for chunk in chunks {
            var keys: [Key] = []
            var elements: [Element] = []
            for (k, e) in zip(chunk.keys, chunk.elements) {
                if let kept = body(k, e) {
                    keys.append(k)
                    elements.append(kept)
                }
            }
            if !keys.isEmpty {
                newCount += keys.count
                newChunks.append(Chunk(keys: keys, elements: elements))
            }
        }
        chunks = newChunks
        firstKeys = newChunks.map { $0.keys[0] }
        firstPrefixes = newChunks.map { $0.prefixes[0] }
        count = newCount
    }
}

extension SortedMap: Sendable where Key: Sendable, Element: Sendable {}
extension SortedMap.Chunk: Sendable where Key: Sendable, Element: Sendable {}
extension SortedMap.Index: Sendable {}

extension UTF8Key: SortKey {
    public static func order(_ a: UTF8Key, _ b: UTF8Key) -> Int { compareUTF8(a.string, b.string) }
}

extension DocumentIDKey: SortKey {
    public static func order(_ a: DocumentIDKey, _ b: DocumentIDKey) -> Int { compareSegments(a.string, b.string) }
}
