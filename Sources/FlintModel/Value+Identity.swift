/// Whether two values are the same stored value, which is stricter than Firestore's `==`.
///
/// A write that stores what a document already holds leaves its update time alone; that test
/// must see every change a reader can see. So the type counts (`1` is not `1.0`), doubles
/// compare by their bits (`0.0` is not `-0.0`; any NaN is the same as another), and strings
/// by their UTF-8 bytes. The reference emulator decides "unchanged" the same way.
///
/// With `signedZeros` false, `-0.0` is the same as `0.0` wherever it appears, as in a query
/// the reference has read (it reads every `-0.0` as `0.0`).
extension Value {
    public func isIdentical(to other: Value, signedZeros: Bool = true) -> Bool {
        switch (self, other) {
        case (.null, .null): true
        case (.boolean(let a), .boolean(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.double(let a), .double(let b)): Self.sameBits(a, b, signedZeros)
        case (.timestamp(let a), .timestamp(let b)): a == b
        case (.string(let a), .string(let b)): equalUTF8(a, b)
        case (.bytes(let a), .bytes(let b)): a == b
        case (.reference(let a), .reference(let b)): a.database == b.database && a.key.path == b.key.path
        case (.geoPoint(let a), .geoPoint(let b)):
            Self.sameBits(a.latitude, b.latitude, signedZeros) && Self.sameBits(a.longitude, b.longitude, signedZeros)
        case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1, signedZeros: signedZeros) }
        case (.map(let a), .map(let b)): a.isIdentical(to: b, signedZeros: signedZeros)
        case (.vector(let a), .vector(let b)): a.count == b.count && zip(a, b).allSatisfy { Self.sameBits($0, $1, signedZeros) }
        default: false
        }
    }

    private static func sameBits(_ a: Double, _ b: Double, _ signedZeros: Bool) -> Bool {
        a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN) || (!signedZeros && a == 0 && b == 0)
    }
}

extension MapValue {
    public func isIdentical(to other: MapValue, signedZeros: Bool = true) -> Bool {
        // Entries are sorted by key, so identical maps line up entry by entry.
        entries.count == other.entries.count
            && zip(entries, other.entries).allSatisfy {
                equalUTF8($0.key, $1.key) && $0.value.isIdentical(to: $1.value, signedZeros: signedZeros)
            }
    }
}
