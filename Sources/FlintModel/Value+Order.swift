// The one place that decides how Values are ordered and when they are equal.
// Indexes, queries, cursors, transforms and rules all call `Value.compare`.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Firestore's cross-type order, lowest first.
public enum TypeOrder: Int, Sendable, Comparable {
    case null, boolean, number, timestamp, string, bytes, reference, geoPoint, array, vector, map

    public static func < (a: TypeOrder, b: TypeOrder) -> Bool { a.rawValue < b.rawValue }
}

extension Value {
    public var typeOrder: TypeOrder {
        switch self {
        case .null: .null
        case .boolean: .boolean
        case .integer, .double: .number
        case .timestamp: .timestamp
        case .string: .string
        case .bytes: .bytes
        case .reference: .reference
        case .geoPoint: .geoPoint
        case .array: .array
        case .vector: .vector
        case .map: .map
        }
    }

    /// Firestore's total order: -1, 0 or 1.
    ///
    /// Numbers compare by value across integer and double without casting one to the other;
    /// NaN sorts below every other number and equals itself; -0.0 equals 0.0.
    public static func compare(_ a: Value, _ b: Value) -> Int {
        let ta = a.typeOrder
        let tb = b.typeOrder
        if ta != tb { return ta < tb ? -1 : 1 }
        switch (a, b) {
        case (.null, .null): return 0
        case (.boolean(let x), .boolean(let y)): return x == y ? 0 : (x ? 1 : -1)
        case (.integer(let x), .integer(let y)): return sign(x, y)
        case (.double(let x), .double(let y)): return compareDoubles(x, y)
        case (.integer(let x), .double(let y)): return compareMixed(x, y)
        case (.double(let x), .integer(let y)): return -compareMixed(y, x)
        case (.timestamp(let x), .timestamp(let y)): return sign(x.microseconds, y.microseconds)
        case (.string(let x), .string(let y)): return compareUTF8(x, y)
        case (.bytes(let x), .bytes(let y)): return compareBytes(x, y)
        case (.reference(let x), .reference(let y)): return compareReferences(x, y)
        case (.geoPoint(let x), .geoPoint(let y)):
            let c = compareDoubles(x.latitude, y.latitude)
            return c != 0 ? c : compareDoubles(x.longitude, y.longitude)
        case (.array(let x), .array(let y)): return compareArrays(x, y)
        case (.vector(let x), .vector(let y)):
            // Vectors order by dimension first, then component by component.
            if x.count != y.count { return x.count < y.count ? -1 : 1 }
            for (p, q) in zip(x, y) {
                let c = compareDoubles(p, q)
                if c != 0 { return c }
            }
            return 0
        case (.map(let x), .map(let y)): return compareMaps(x, y)
        case (.null, _), (.boolean, _), (.integer, _), (.double, _), (.timestamp, _), (.string, _),
            (.bytes, _), (.reference, _), (.geoPoint, _), (.array, _), (.vector, _), (.map, _):
            preconditionFailure("type orders matched but cases did not")
        }
    }

    private static func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x == y ? 0 : 1) }

    static func compareDoubles(_ x: Double, _ y: Double) -> Int {
        if x.isNaN { return y.isNaN ? 0 : -1 }
        if y.isNaN { return 1 }
        return x < y ? -1 : (x > y ? 1 : 0)  // -0.0 == 0.0 under IEEE comparison
    }

    /// Compares an integer with a double exactly, even beyond 2^53 and outside Int64's range.
    static func compareMixed(_ i: Int64, _ d: Double) -> Int {
        if d.isNaN { return 1 }
        if d >= 9_223_372_036_854_775_808.0 { return -1 }  // 2^63: above every Int64
        if d < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = d.rounded(.towardZero)
        let w = Int64(whole)  // exact: |whole| < 2^63 here
        if i != w { return i < w ? -1 : 1 }
        let fraction = d - whole
        return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
    }

    static func compareBytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
        return sign(x.count, y.count)
    }

    static func compareReferences(_ x: DocumentReference, _ y: DocumentReference) -> Int {
        let project = compareUTF8(x.database.project, y.database.project)
        if project != 0 { return project }
        let database = compareUTF8(x.database.database, y.database.database)
        if database != 0 { return database }
        return x.key.path.compare(y.key.path)
    }

    static func compareArrays(_ x: [Value], _ y: [Value]) -> Int {
        for (p, q) in zip(x, y) {
            let c = compare(p, q)
            if c != 0 { return c }
        }
        return sign(x.count, y.count)
    }

    static func compareMaps(_ x: MapValue, _ y: MapValue) -> Int {
        for (p, q) in zip(x.entries, y.entries) {
            let k = compareUTF8(p.key, q.key)
            if k != 0 { return k }
            let c = compare(p.value, q.value)
            if c != 0 { return c }
        }
        return sign(x.count, y.count)
    }
}

extension Value: Equatable, Hashable, Comparable {
    /// Equality is Firestore's: `compare == 0` (so `1 == 1.0`, `NaN == NaN`, `-0.0 == 0.0`).
    public static func == (a: Value, b: Value) -> Bool { compare(a, b) == 0 }

    public static func < (a: Value, b: Value) -> Bool { compare(a, b) < 0 }

    /// Hashes agree with `==`: an integer that a double represents exactly hashes as that double.
    public func hash(into h: inout Hasher) {
        h.combine(typeOrder.rawValue)
        switch self {
        case .null: break
        case .boolean(let b): h.combine(b)
        case .integer(let i):
            let d = Double(i)
            if d < 9_223_372_036_854_775_808.0, Int64(d) == i {
                Self.hashNumber(d, into: &h)
            } else {
                h.combine(i)
            }
        case .double(let d): Self.hashNumber(d, into: &h)
        case .timestamp(let t): h.combine(t.microseconds)
        case .string(let s): hashUTF8(s, into: &h)
        case .bytes(let b): h.combine(b)
        case .reference(let r): h.combine(r)
        case .geoPoint(let g):
            Self.hashNumber(g.latitude, into: &h)
            Self.hashNumber(g.longitude, into: &h)
        case .array(let a): h.combine(a.count); for v in a { v.hash(into: &h) }
        case .vector(let v): h.combine(v.count); for d in v { Self.hashNumber(d, into: &h) }
        case .map(let m): h.combine(m)
        }
    }

    private static func hashNumber(_ d: Double, into h: inout Hasher) {
        if d.isNaN {
            h.combine(UInt64.max)
        } else if d == 0 {
            h.combine(UInt64(0))  // -0.0 and 0.0 are equal
        } else {
            h.combine(d.bitPattern)
        }
    }
}

/// Compares two strings by their UTF-8 bytes, as Firestore does (not by Unicode equivalence).
@inlinable
public func compareUTF8(_ a: String, _ b: String) -> Int {
    let fast = a.utf8.withContiguousStorageIfAvailable { pa in
        b.utf8.withContiguousStorageIfAvailable { pb in compareBytes(pa, pb) }
    }
    if let fast, let result = fast { return result }
    return slowCompareUTF8(a, b)
}

@usableFromInline
func compareBytes(_ pa: UnsafeBufferPointer<UInt8>, _ pb: UnsafeBufferPointer<UInt8>) -> Int {
    let n = min(pa.count, pb.count)
    if n > 0, let ba = pa.baseAddress, let bb = pb.baseAddress {
        let c = memcmp(ba, bb, n)
        if c != 0 { return c < 0 ? -1 : 1 }
    }
    return pa.count < pb.count ? -1 : (pa.count == pb.count ? 0 : 1)
}

@usableFromInline
func slowCompareUTF8(_ a: String, _ b: String) -> Int {
    var ia = a.utf8.makeIterator()
    var ib = b.utf8.makeIterator()
    while true {
        switch (ia.next(), ib.next()) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
        }
    }
}

/// UTF-8 byte equality for strings; Swift's `==` would treat "é" and "e\u{301}" as equal.
@inlinable
public func equalUTF8(_ a: String, _ b: String) -> Bool {
    a.utf8.count == b.utf8.count && compareUTF8(a, b) == 0
}

extension MapValue {
    /// Equality by Firestore's order: keys by UTF-8 bytes, values by `Value.==`.
    public static func == (a: MapValue, b: MapValue) -> Bool { Value.compareMaps(a, b) == 0 }

    public func hash(into h: inout Hasher) {
        h.combine(entries.count)
        for e in entries {
            hashUTF8(e.key, into: &h)
            e.value.hash(into: &h)
        }
    }
}

/// Hashes a string's UTF-8 bytes, matching `equalUTF8`.
@inlinable
public func hashUTF8(_ s: String, into h: inout Hasher) {
    let done: Void? = s.utf8.withContiguousStorageIfAvailable { h.combine(bytes: UnsafeRawBufferPointer($0)) }
    if done == nil { for b in s.utf8 { h.combine(b) } }
    h.combine(0xFF as UInt8)  // terminator, so ["ab","c"] and ["a","bc"] hash apart
}
