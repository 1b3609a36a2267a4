/// A Firestore value: every type a document field can hold.
///
/// Ordering, equality and hashing follow Firestore's total order and live in `Value+Order.swift`.
/// Integers and doubles are distinct cases but compare and hash as numbers (`1 == 1.0`).
public enum Value: Sendable {
    case null
    case boolean(Bool)
    case integer(Int64)
    case double(Double)
    case timestamp(Timestamp)
    case string(String)
    case bytes([UInt8])
    /// Boxed: references are rare and would otherwise make every value 40 bytes wide.
    indirect case reference(DocumentReference)
    case geoPoint(GeoPoint)
    case array([Value])
    case map(MapValue)
    /// A vector embedding; on the wire a map `{__type__: "__vector__", value: [doubles]}`.
    case vector([Double])
}

/// A latitude/longitude pair in degrees.
public struct GeoPoint: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) throws(FlintError) {
        // NaN fails both comparisons, so it is refused too.
        guard latitude >= -90, latitude <= 90 else { throw Self.outOfRange("latitude", latitude, 90) }
        guard longitude >= -180, longitude <= 180 else { throw Self.outOfRange("longitude", longitude, 180) }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The reference emulator's message, with the value written as it writes it.
    private static func outOfRange(_ name: String, _ value: Double, _ bound: Int) -> FlintError {
        .invalidArgument("Geo point \(name) '\(value.jvmDescription)' outside permitted range -\(bound).0 to \(bound).0.")
    }
}

/// A reference value: the full resource name of a document, possibly in another database.
public struct DocumentReference: Sendable, Hashable, CustomStringConvertible {
    public let database: DatabaseID
    public let key: DocumentKey

    public init(database: DatabaseID, key: DocumentKey) {
        self.database = database
        self.key = key
    }

    /// `projects/{p}/databases/{d}/documents/{path}`
    public var name: String { database.documentsRoot + "/" + key.path.canonical }
    public var description: String { name }
}

/// A map value with its entries kept sorted by the UTF-8 bytes of their keys.
///
/// Sorted storage makes Firestore's map ordering a linear walk and keeps small maps compact.
public struct MapValue: Sendable, Hashable {
    public struct Entry: Sendable {
        public let key: String
        public var value: Value
    }

    public private(set) var entries: [Entry]

    public init() { entries = [] }

    public init<S: Sequence>(_ pairs: S) where S.Element == (String, Value) {
        entries = []
        entries.reserveCapacity(pairs.underestimatedCount)
        for (k, v) in pairs { self[k] = v }
    }

    /// Room for `n` entries in one allocation. Stored documents live long, and an array grown
    /// by doubling would keep up to twice the space its entries need.
    public mutating func reserveCapacity(_ n: Int) { entries.reserveCapacity(n) }

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }
    public var keys: [String] { entries.map(\.key) }

    /// Index of `key`, or where it would be inserted.
    private func position(of key: String) -> (index: Int, found: Bool) {
        var lo = 0
        var hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let c = compareUTF8(entries[mid].key, key)
            if c == 0 { return (mid, true) }
            if c < 0 { lo = mid + 1 } else { hi = mid }
        }
        return (lo, false)
    }

    public subscript(key: String) -> Value? {
        get {
            let p = position(of: key)
            return p.found ? entries[p.index].value : nil
        }
        set {
            let p = position(of: key)
            switch (p.found, newValue) {
            case (true, .some(let v)): entries[p.index].value = v
            case (true, .none): entries.remove(at: p.index)
            case (false, .some(let v)): entries.insert(Entry(key: key, value: v), at: p.index)
            case (false, .none): break
            }
        }
    }

    /// The value at a field path below this map, or nil when any segment is missing.
    public func value(at path: FieldPath) -> Value? {
        var current: MapValue = self
        for (i, segment) in path.segments.enumerated() {
            guard let v = current[segment] else { return nil }
            if i == path.segments.count - 1 { return v }
            guard case .map(let inner) = v else { return nil }
            current = inner
        }
        return nil
    }

    /// Sets the value at a field path, creating or replacing intermediate maps.
    public mutating func setValue(_ value: Value, at path: FieldPath) {
        setValue(value, at: path.segments[...])
    }

    private mutating func setValue(_ value: Value, at segments: ArraySlice<String>) {
        guard let first = segments.first else { return }
        if segments.count == 1 {
            self[first] = value
            return
        }
        var inner: MapValue
        if case .map(let existing) = self[first] { inner = existing } else { inner = MapValue() }
        self[first] = nil  // drop our reference so the nested map is uniquely owned
        inner.setValue(value, at: segments.dropFirst())
        self[first] = .map(inner)
    }

    /// Removes the value at a field path; intermediate maps are kept even when left empty.
    public mutating func removeValue(at path: FieldPath) {
        removeValue(at: path.segments[...])
    }

    private mutating func removeValue(at segments: ArraySlice<String>) {
        guard let first = segments.first else { return }
        if segments.count == 1 {
            self[first] = nil
            return
        }
        guard case .map(var inner) = self[first] else { return }
        self[first] = nil
        inner.removeValue(at: segments.dropFirst())
        self[first] = .map(inner)
    }
}

extension MapValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, Value)...) {
        self.init(elements)
    }
}

// MARK: - Literals, for tests and fixtures (no nil literal: `nil` must stay Optional's)

extension Value: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(arrayLiteral elements: Value...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, Value)...) { self = .map(MapValue(elements)) }
}

extension Value {
    /// The Firestore type name used in messages (`"integer"`, `"map"`, ...).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .boolean: "boolean"
        case .integer: "integer"
        case .double: "double"
        case .timestamp: "timestamp"
        case .string: "string"
        case .bytes: "bytes"
        case .reference: "reference"
        case .geoPoint: "geo point"
        case .array: "array"
        case .map: "map"
        case .vector: "vector"
        }
    }

    public var isNumber: Bool { typeOrder == .number }

    public var isNaN: Bool {
        if case .double(let d) = self { return d.isNaN }
        return false
    }
}
