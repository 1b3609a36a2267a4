/// A string that orders and compares by its UTF-8 bytes, for use as a sorted key. Unlike
/// `String`, it tells canonically equivalent spellings apart (`é` as one scalar, or as `e` and a
/// combining accent), as Firestore's names do.
public struct UTF8Key: Comparable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let string: String

    public init(_ string: String) { self.string = string }
    public init(stringLiteral string: String) { self.string = string }

    /// The first eight UTF-8 bytes, big-endian, zero-padded: byte order as integer order.
    public var prefix: UInt64 {
        var p: UInt64 = 0
        var n: UInt64 = 0
        for b in string.utf8 {
            p = p << 8 | UInt64(b)
            n += 1
            if n == 8 { return p }
        }
        return n == 0 ? 0 : p << (8 * (8 - n))
    }

    // Inlinable: rules maps and the wire's maps of values look keys up on every request.
    @inlinable public static func < (a: UTF8Key, b: UTF8Key) -> Bool { compareUTF8(a.string, b.string) < 0 }
    @inlinable public static func == (a: UTF8Key, b: UTF8Key) -> Bool { equalUTF8(a.string, b.string) }
    @inlinable public func hash(into h: inout Hasher) { hashUTF8(string, into: &h) }
    public var description: String { string }
}

/// A document id as a sorted key, in Firestore's order of ids (`compareSegments`): numeric ids
/// first, by value, then every other id by its UTF-8 bytes.
public struct DocumentIDKey: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let string: String

    public init(_ string: String) { self.string = string }

    /// An other id's first eight bytes, as for `UTF8Key`; numeric ids all take 0, the lowest,
    /// which keeps the prefix order-preserving (an equal prefix decides nothing).
    public var prefix: UInt64 { NumericID.value(string) == nil ? UTF8Key(string).prefix : 0 }

    public static func < (a: DocumentIDKey, b: DocumentIDKey) -> Bool { compareSegments(a.string, b.string) < 0 }
    public static func == (a: DocumentIDKey, b: DocumentIDKey) -> Bool { equalUTF8(a.string, b.string) }
    public func hash(into h: inout Hasher) { hashUTF8(string, into: &h) }
    public var description: String { string }
}
