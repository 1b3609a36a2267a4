/// A path to a field inside a document, such as `address.city` or `` `a.b`.c ``.
///
/// Parse strings once with `FieldPath(parsing:)`; engines pass `FieldPath` values around.
public struct FieldPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let segments: [String]

    /// Builds a path from raw segments, as the SDKs' `FieldPath(["a", "b"])` does.
    public init(_ segments: [String]) throws(FlintError) {
        guard !segments.isEmpty else { throw .invalidArgument("A field path must not be empty.") }
        for s in segments where s.isEmpty {
            throw .invalidArgument("A field path must not have an empty segment.")
        }
        self.segments = segments
    }

    package init(unchecked segments: [String]) { self.segments = segments }

    /// `__name__`, the document's name in queries and orderings.
    public static let documentID = FieldPath(unchecked: ["__name__"])

    public var isDocumentID: Bool { segments.count == 1 && segments[0] == "__name__" }

    /// Parses Firestore's server format: dot-separated segments, each either a plain
    /// identifier `[a-zA-Z_][a-zA-Z_0-9]*` or backquoted with `\` escapes (`QuotedSegment`).
    /// The segments joined by dots must stay under `maxBytes` bytes (production's 1,500-byte
    /// field path limit, which the reference applies to every path a request names).
    public init(parsing text: String, maxBytes: Int = Limits.maxFieldPathBytes - 1) throws(FlintError) {
        if text.isEmpty { throw .invalidArgument("Invalid empty property path string.") }
        var segments: [String] = []
        var bytes = Array(text.utf8)[...]
        func fail() -> FlintError {
            .invalidArgument(
                "Invalid property path \"\(text)\". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)"
            )
        }
        while true {
            guard let first = bytes.first else { throw fail() }
            if first == UInt8(ascii: "`") {
                bytes = bytes.dropFirst()
                var segment = QuotedSegment()
                var closed = false
                while let c = bytes.first {
                    bytes = bytes.dropFirst()
                    if c == UInt8(ascii: "\\") {
                        guard segment.readEscape(&bytes) else { throw fail() }
                    } else if c == UInt8(ascii: "`") {
                        closed = true
                        break
                    } else {
                        segment.raw.append(c)
                    }
                }
                let text = segment.text
                guard closed, !text.isEmpty else { throw fail() }
                segments.append(text)
            } else {
                // The identifier is read as far as it goes; what follows must be a dot or the end.
                var segment: [UInt8] = []
                while let c = bytes.first, FieldPath.isIdentifierByte(c, first: segment.isEmpty) {
                    segment.append(c)
                    bytes = bytes.dropFirst()
                }
                guard !segment.isEmpty else { throw fail() }
                segments.append(String(decoding: segment, as: UTF8.self))
            }
            // The reference's own word for a document's name is refused as soon as it is read,
            // before any later segment is parsed.
            if segments.last == "__key__" { throw FieldPath.keyName }
            guard let next = bytes.first else { break }
            guard next == UInt8(ascii: ".") else { throw fail() }
            bytes = bytes.dropFirst()
        }
        if segments.reduce(segments.count - 1, { $0 + $1.utf8.count }) > maxBytes {
            throw .invalidArgument("property path is longer than \(Limits.maxFieldPathBytes) bytes.")
        }
        self.segments = segments
    }

    /// The refusal of a segment `__key__`, the reference's word for a document's name.
    public static let keyName = FlintError.invalidArgument("Invalid property path member name \"__key__\".")

    static func isIdentifierByte(_ c: UInt8, first: Bool) -> Bool {
        (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c == 95 || (!first && c >= 48 && c <= 57)
    }

    static func isPlainIdentifier(_ s: String) -> Bool {
        var first = true
        for c in s.utf8 {
            guard isIdentifierByte(c, first: first) else { return false }
            first = false
        }
        return !first
    }

    /// The server format: plain segments as they are, others backquoted with escapes.
    public var canonical: String {
        segments.map { s in
            if FieldPath.isPlainIdentifier(s) { return s }
            var out = "`"
            for ch in s {
                if ch == "`" || ch == "\\" { out.append("\\") }
                out.append(ch)
            }
            return out + "`"
        }.joined(separator: ".")
    }

    /// The segments joined by dots, none quoted: how the reference's storage layer names a
    /// property in some of its messages.
    public var dotted: String { segments.joined(separator: ".") }

    public var description: String { canonical }

    public func isPrefix(of other: FieldPath) -> Bool {
        guard segments.count <= other.segments.count else { return false }
        for (a, b) in zip(segments, other.segments) where !equalUTF8(a, b) { return false }
        return true
    }

    public func appending(_ segment: String) -> FieldPath { FieldPath(unchecked: segments + [segment]) }

    /// The paths this one lies inside: its first segment, its first two, and so on, not itself.
    /// Looking these up in a set finds a path's enclosing paths among many without comparing
    /// every pair.
    public var enclosingPaths: [FieldPath] {
        (1..<max(segments.count, 1)).map { FieldPath(unchecked: Array(segments.prefix($0))) }
    }

    public static func == (a: FieldPath, b: FieldPath) -> Bool {
        a.segments.count == b.segments.count && a.isPrefix(of: b)
    }

    public static func < (a: FieldPath, b: FieldPath) -> Bool {
        for (x, y) in zip(a.segments, b.segments) {
            let c = compareUTF8(x, y)
            if c != 0 { return c < 0 }
        }
        return a.segments.count < b.segments.count
    }

    public func hash(into h: inout Hasher) {
        for s in segments { hashUTF8(s, into: &h) }
    }
}
