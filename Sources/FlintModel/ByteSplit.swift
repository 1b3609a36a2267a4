extension Substring {
    /// The parts between each `separator`, an ASCII character, found by its byte. Splitting by
    /// `Character` misses a separator that a combining mark follows (`/` then U+0301 is one
    /// grapheme), so `documents/\u{301}c` would stay one part; names are bytes to Firestore.
    public func split(onASCII separator: Unicode.Scalar, maxSplits: Int = .max, omittingEmptySubsequences: Bool = false) -> [Substring] {
        precondition(separator.isASCII)
        return utf8.split(separator: UInt8(separator.value), maxSplits: maxSplits, omittingEmptySubsequences: omittingEmptySubsequences)
            .map { Substring($0) }
    }

    /// The text before and after the first `separator`, an ASCII character, found by its byte
    /// (see `split(onASCII:)`); nil when there is none. Both share this text's indices.
    public func splitAtFirst(ofASCII separator: Unicode.Scalar) -> (before: Substring, after: Substring)? {
        precondition(separator.isASCII)
        return utf8.firstIndex(of: UInt8(separator.value)).map(around)
    }

    /// The same around the last `separator`.
    public func splitAtLast(ofASCII separator: Unicode.Scalar) -> (before: Substring, after: Substring)? {
        precondition(separator.isASCII)
        return utf8.lastIndex(of: UInt8(separator.value)).map(around)
    }

    private func around(_ at: Index) -> (before: Substring, after: Substring) {
        (Substring(utf8[..<at]), Substring(utf8[utf8.index(after: at)...]))
    }
}

extension String {
    /// See `Substring.split(onASCII:maxSplits:omittingEmptySubsequences:)`.
    public func split(onASCII separator: Unicode.Scalar, maxSplits: Int = .max, omittingEmptySubsequences: Bool = false) -> [Substring] {
        self[...].split(onASCII: separator, maxSplits: maxSplits, omittingEmptySubsequences: omittingEmptySubsequences)
    }

    /// See `Substring.splitAtFirst(ofASCII:)`.
    public func splitAtFirst(ofASCII separator: Unicode.Scalar) -> (before: Substring, after: Substring)? {
        self[...].splitAtFirst(ofASCII: separator)
    }

    /// See `Substring.splitAtLast(ofASCII:)`.
    public func splitAtLast(ofASCII separator: Unicode.Scalar) -> (before: Substring, after: Substring)? {
        self[...].splitAtLast(ofASCII: separator)
    }
}
