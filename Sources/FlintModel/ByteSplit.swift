extension Substring {
    /// The parts between each `separator`, an ASCII character, found by its byte. Splitting by
    /// `Character` misses a separator that a combining mark follows (`/` then U+0301 is one
    /// grapheme), so `documents/\u{301}c` would stay one part; names are bytes to Firestore.
    public func split(onASCII separator: Unicode.Scalar, maxSplits: Int = .max, omittingEmptySubsequences: Bool = false) -> [Substring] {
        precondition(separator.isASCII)
        return utf8.split(separator: UInt8(separator.value), maxSplits: maxSplits, omittingEmptySubsequences: omittingEmptySubsequences)
            .map { Substring($0) }
    }

    /// The text before and after the last `separator`, an ASCII character, found by its byte
    /// (see `split(onASCII:maxSplits:omittingEmptySubsequences:)`); nil when there is none. Both share this text's indices.
    public func splitAtLast(ofASCII separator: Unicode.Scalar) -> (before: Substring, after: Substring)? {
        precondition(separator.isASCII)
        guard let at = utf8.lastIndex(of: UInt8(separator.value)) else { return nil }
        return (Substring(utf8[..<at]), Substring(utf8[utf8.index(after: at)...]))
    }
}

extension String {
    /// See `Substring.split(onASCII:maxSplits:omittingEmptySubsequences:)`.
    public func split(onASCII separator: Unicode.Scalar, maxSplits: Int = .max, omittingEmptySubsequences: Bool = false) -> [Substring] {
        self[...].split(onASCII: separator, maxSplits: maxSplits, omittingEmptySubsequences: omittingEmptySubsequences)
    }

    /// See `Substring.splitAtLast(ofASCII:)`.
    public func splitAtLast(ofASCII separator: Unicode.Scalar) -> (before: Substring, after: Substring)? {
        self[...].splitAtLast(ofASCII: separator)
    }
}
