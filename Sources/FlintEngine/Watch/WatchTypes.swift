import FlintModel
import FlintQuery

/// What a listen target follows.
public enum WatchScope: Sendable {
    case documents([DocumentKey])
    case query(Query)
}

/// One target a listen stream adds.
public struct WatchTarget: Sendable {
    /// The client's id for the target; 0 lets the engine choose one.
    public var id: Int32
    public var scope: WatchScope
    /// Where the client's view stands, from a resume token it was given or a read time; the
    /// engine then sends only what changed since.
    public var resumeToken: [UInt8]?
    public var readTime: Timestamp?
    /// Remove the target once it is current.
    public var once: Bool

    public init(id: Int32, scope: WatchScope, resumeToken: [UInt8]? = nil, readTime: Timestamp? = nil, once: Bool = false) {
        self.id = id
        self.scope = scope
        self.resumeToken = resumeToken
        self.readTime = readTime
        self.once = once
    }
}

public enum TargetChangeKind: Sendable, Equatable {
    case noChange, add, remove, current, reset
}

/// What a listen stream tells its client, in Firestore's terms.
public enum WatchEvent: Sendable, Equatable {
    /// A target's state; with no ids it concerns every target (a consistent point at `readTime`).
    case target(TargetChangeKind, ids: [Int32], resumeToken: [UInt8]?, readTime: Timestamp?, cause: FlintError?)
    /// The document entered or changed in `targetIDs`, and left `removedTargetIDs`.
    case changed(Document, targetIDs: [Int32], removedTargetIDs: [Int32])
    /// The document was deleted; it matched `removedTargetIDs`.
    case deleted(DocumentKey, removedTargetIDs: [Int32], readTime: Timestamp)
    /// How many documents match the target, and which (as a bloom filter of their names).
    case existenceFilter(targetID: Int32, count: Int, unchangedNames: BloomFilter?)

    static func target(_ kind: TargetChangeKind, _ ids: [Int32], token: [UInt8]? = nil, at readTime: Timestamp? = nil)
        -> WatchEvent
    {
        .target(kind, ids: ids, resumeToken: token, readTime: readTime, cause: nil)
    }
}

/// Flint's resume tokens: the read time of a consistent point, tagged so a token from another
/// server is recognised as foreign (the target is then reset rather than misread).
public enum ResumeToken {
    private static let tag: [UInt8] = [0x46, 0x4c, 0x01]  // "FL", version 1

    public static func encode(_ t: Timestamp) -> [UInt8] {
        let m = UInt64(bitPattern: t.microseconds)
        return tag + (0..<8).map { UInt8(truncatingIfNeeded: m >> (8 * (7 - UInt64($0)))) }
    }

    public static func decode(_ bytes: [UInt8]) -> Timestamp? {
        guard bytes.count == tag.count + 8, Array(bytes.prefix(tag.count)) == tag else { return nil }
        let m = bytes.dropFirst(tag.count).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Timestamp(microseconds: Int64(bitPattern: m))
    }
}

/// One listen stream of one database.
public struct WatchStreamID: Hashable, Sendable {
    let raw: UInt64
}
