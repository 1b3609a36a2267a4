import FlintModel
import FlintQuery

/// What an index orders by: equality fields first (any order among themselves, ascending),
/// then the query's full order with its directions; `__name__` closes every index.
public struct IndexDefinition: Hashable, Sendable, CustomStringConvertible {
    public struct Component: Hashable, Sendable {
        public var field: FieldPath
        public var descending: Bool
        /// Indexes each distinct array element instead of the array (array-contains).
        public var arrayContains: Bool

        public init(_ field: FieldPath, descending: Bool = false, arrayContains: Bool = false) {
            self.field = field
            self.descending = descending
            self.arrayContains = arrayContains
        }
    }

    public var components: [Component]
    public var nameDescending: Bool

    public init(components: [Component], nameDescending: Bool) {
        self.components = components
        self.nameDescending = nameDescending
    }

    public var description: String {
        (components.map { "\($0.field.canonical) \($0.arrayContains ? "CONTAINS" : $0.descending ? "DESC" : "ASC")" }
            + ["__name__ \(nameDescending ? "DESC" : "ASC")"]).joined(separator: ", ")
    }
}

/// How index entries name their documents: by id within one collection, or by full path
/// within a collection group (where `__name__` order compares path segments).
protocol IndexName: Sendable {
    static func order(_ a: Self, _ b: Self) -> Int
}

extension DocumentIDKey: IndexName {}

extension DocumentKey: IndexName {
    static func order(_ a: DocumentKey, _ b: DocumentKey) -> Int { a.path.compare(b.path) }
}

/// One index entry's key: the document's values for the components, then its name.
/// A key with fewer values (no name) is a probe that sorts before every key it prefixes.
struct IndexKey<Name: IndexName>: SortKey {
    var values: [Value]
    var descending: [Bool]
    var id: Name?
    var nameDescending: Bool

    static func order(_ a: IndexKey, _ b: IndexKey) -> Int {
        let n = min(a.values.count, b.values.count)
        for i in 0..<n {
            let c = Value.compare(a.values[i], b.values[i])
            if c != 0 { return a.descending[i] ? -c : c }
        }
        if a.values.count != b.values.count { return a.values.count < b.values.count ? -1 : 1 }
        switch (a.id, b.id) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (let x?, let y?):
            let c = Name.order(x, y)
            return a.nameDescending ? -c : c
        }
    }

    static func < (a: IndexKey, b: IndexKey) -> Bool { order(a, b) < 0 }
    static func == (a: IndexKey, b: IndexKey) -> Bool { order(a, b) == 0 }

    var prefix: UInt64 {
        guard let first = values.first else { return 0 }
        let p = first.orderPrefix
        return descending[0] ? ~p : p
    }
}

extension Value {
    /// A 64-bit summary that never contradicts `Value.compare`: a < b implies prefix(a) <= prefix(b).
    var orderPrefix: UInt64 {
        let type = UInt64(typeOrder.rawValue) << 60
        switch self {
        case .integer(let i): return type | Self.numberBits(Double(i))
        case .double(let d): return type | Self.numberBits(d)
        case .timestamp(let t): return type | (UInt64(bitPattern: t.microseconds) ^ (1 << 63)) >> 4
        case .boolean(let b): return type | (b ? 1 : 0)
        case .string(let s):
            var p: UInt64 = 0
            var n: UInt64 = 0
            for byte in s.utf8.prefix(7) {
                p = p << 8 | UInt64(byte)
                n += 1
            }
            return type | (p << (8 * (7 - n))) >> 4
        case .null, .bytes, .reference, .geoPoint, .array, .vector, .map: return type
        }
    }

    /// Order-preserving bits of a double in the low 60 bits; NaN lowest, -0.0 as 0.0.
    private static func numberBits(_ d: Double) -> UInt64 {
        if d.isNaN { return 0 }
        let bits = (d == 0 ? 0.0 : d).bitPattern
        let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        return max(ordered >> 4, 1)
    }
}

/// A sorted index over one collection (named by id) or one collection group (named by path),
/// kept current by the store on every write.
final class CompositeIndex<Name: IndexName> {
    let definition: IndexDefinition
    private(set) var entries = SortedMap<IndexKey<Name>, DocumentState>()
    private let descending: [Bool]

    init(_ definition: IndexDefinition) {
        self.definition = definition
        descending = definition.components.map(\.descending)
    }

    /// The keys a document has in this index: none when a component field is missing, one per
    /// distinct element for an array-contains component.
    func keys(id: Name, fields: MapValue) -> [IndexKey<Name>] {
        var tuples: [[Value]] = [[]]
        for c in definition.components {
            guard let v = fields.value(at: c.field) else { return [] }
            if c.arrayContains {
                guard case .array(let items) = v else { return [] }
                var distinct: [Value] = []
                for item in items where !distinct.contains(item) { distinct.append(item) }
                tuples = tuples.flatMap { t in distinct.map { t + [$0] } }
            } else {
                tuples = tuples.map { $0 + [v] }
            }
        }
        return tuples.map { IndexKey(values: $0, descending: descending, id: id, nameDescending: definition.nameDescending) }
    }

    func remove(id: Name, fields: MapValue) {
        for k in keys(id: id, fields: fields) { entries.set(k, nil) }
    }

    func add(id: Name, state: DocumentState) {
        for k in keys(id: id, fields: state.fields) { entries.set(k, state) }
    }

    /// Visits entries whose leading values equal `prefix`, in index order, until `body` says stop.
    func scan(prefix: [Value], _ body: (Name, DocumentState) -> Bool) {
        let probe = IndexKey<Name>(values: prefix, descending: descending, id: nil, nameDescending: definition.nameDescending)
        entries.forEach(from: entries.index(from: probe)) { key, state in
            for (i, v) in prefix.enumerated() where Value.compare(key.values[i], v) != 0 { return false }
            guard let id = key.id else { return true }
            return body(id, state)
        }
    }
}
