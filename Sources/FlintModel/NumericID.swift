/// Numeric document ids, written `__id<n>__`.
///
/// Firestore keeps the numeric ids of data that came from Datastore: `n` is a nonzero 64-bit
/// integer written without a plus sign or leading zeros (`__id7__`, `__id-3__`). Every other
/// `__…__` id is reserved. Numeric ids sort before all other ids, by value, so
/// `__id-9223372036854775808__` is the lowest id there is; the server SDKs use it as the lower
/// bound when they page through everything below a path.
public enum NumericID {
    public enum Parsed: Equatable {
        case valid(Int64)
        /// Written as a numeric id, but the number does not fit in 64 bits.
        case outOfRange
        case notNumeric
    }

    public static func parse(_ id: String) -> Parsed {
        let u = id.utf8
        guard u.count > 6, u.starts(with: "__id".utf8), u.reversed().starts(with: "__".utf8) else { return .notNumeric }
        let digits = u.dropFirst(4).dropLast(2)
        let magnitude = digits.first == UInt8(ascii: "-") ? digits.dropFirst() : digits
        guard let lead = magnitude.first, lead >= UInt8(ascii: "1"), lead <= UInt8(ascii: "9"),
            magnitude.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return .notNumeric }
        guard let value = Int64(Substring(digits)) else { return .outOfRange }
        return .valid(value)
    }

    /// The number a valid numeric id stands for; nil for every other id. Cheap for ids that do
    /// not start with `_`, which is nearly all of them.
    @inlinable
    public static func value(_ id: String) -> Int64? {
        guard id.utf8.first == UInt8(ascii: "_"), case .valid(let n) = parse(id) else { return nil }
        return n
    }
}

/// Firestore's order of path segments: numeric ids first, by value, then every other id by
/// its UTF-8 bytes.
public func compareSegments(_ a: String, _ b: String) -> Int {
    switch (NumericID.value(a), NumericID.value(b)) {
    case (nil, nil): return compareUTF8(a, b)
    case (.some, nil): return -1
    case (nil, .some): return 1
    case (let x?, let y?): return x < y ? -1 : (x == y ? 0 : 1)
    }
}
