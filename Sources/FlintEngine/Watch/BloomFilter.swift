import FlintRules

/// The bloom filter Firestore attaches to an existence filter: the names of every document
/// that matches a target, so a client whose count disagrees can find which of its documents
/// are gone instead of re-listening from scratch. Layout and hashing are what the SDKs test:
/// MD5 of the name, split into two little-endian 64-bit halves h1 and h2; bit i of the k
/// hashes is (h1 + i·h2) mod size, stored least significant bit first.
public struct BloomFilter: Sendable, Equatable {
    public private(set) var bitmap: [UInt8]
    /// Unused bits at the end of the last byte.
    public let padding: Int
    public let hashCount: Int

    private var size: UInt64 { UInt64(bitmap.count * 8 - padding) }

    /// A filter sized for `names` at about a 1% false-positive rate.
    public init(names: [String]) {
        guard !names.isEmpty else {
            bitmap = []
            padding = 0
            hashCount = 0
            return
        }
        // Optimal bits per element for 1% is about 9.6, with 7 hashes.
        let bits = max(8, (names.count * 96 + 9) / 10)
        bitmap = [UInt8](repeating: 0, count: (bits + 7) / 8)
        padding = bitmap.count * 8 - bits
        hashCount = 7
        for name in names { insert(name) }
    }

    public init(bitmap: [UInt8], padding: Int, hashCount: Int) {
        self.bitmap = bitmap
        self.padding = padding
        self.hashCount = hashCount
    }

    public func mightContain(_ name: String) -> Bool {
        guard size > 0, !name.isEmpty else { return false }
        return Self.bitIndexes(name, hashCount, size).allSatisfy { bitmap[Int($0 / 8)] & (1 << ($0 % 8)) != 0 }
    }

    private mutating func insert(_ name: String) {
        for bit in Self.bitIndexes(name, hashCount, size) { bitmap[Int(bit / 8)] |= 1 << (bit % 8) }
    }

    private static func bitIndexes(_ name: String, _ count: Int, _ size: UInt64) -> [UInt64] {
        let hash = MD5.digest(Array(name.utf8))
        var h1: UInt64 = 0
        var h2: UInt64 = 0
        for i in 0..<8 {
            h1 |= UInt64(hash[i]) << (8 * UInt64(i))
            h2 |= UInt64(hash[8 + i]) << (8 * UInt64(i))
        }
        return (0..<count).map { i in (h1 &+ UInt64(i) &* h2) % size }
    }
}
