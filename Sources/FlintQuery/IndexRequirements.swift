import FlintModel

/// An index as `firestore.indexes.json` declares it.
public struct IndexSpec: Hashable, Sendable {
    public enum Scope: String, Sendable { case collection = "COLLECTION", collectionGroup = "COLLECTION_GROUP" }
    public enum Mode: Hashable, Sendable {
        case ascending, descending, arrayContains
        /// A vector index's field (`vectorConfig`), for nearest-neighbour searches of vectors
        /// of this many dimensions.
        case vector(dimension: Int)

        public var isVector: Bool { if case .vector = self { true } else { false } }

        /// The field's setting in `firestore.indexes.json`.
        public var json: String {
            switch self {
            case .ascending: "\"order\": \"ASCENDING\""
            case .descending: "\"order\": \"DESCENDING\""
            case .arrayContains: "\"arrayConfig\": \"CONTAINS\""
            case .vector(let dimension): "\"vectorConfig\": { \"dimension\": \(dimension), \"flat\": {} }"
            }
        }
    }

    public var collectionGroup: String
    public var scope: Scope
    public var fields: [(FieldPath, Mode)]

    public init(collectionGroup: String, scope: Scope, fields: [(FieldPath, Mode)]) {
        self.collectionGroup = collectionGroup
        self.scope = scope
        self.fields = fields
    }

    public static func == (a: IndexSpec, b: IndexSpec) -> Bool {
        equalUTF8(a.collectionGroup, b.collectionGroup) && a.scope == b.scope && a.fields.count == b.fields.count
            && zip(a.fields, b.fields).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    public func hash(into h: inout Hasher) {
        hashUTF8(collectionGroup, into: &h)
        h.combine(scope)
        for (f, m) in fields {
            h.combine(f)
            h.combine(m)
        }
    }

    /// The entry as it appears in `firestore.indexes.json`.
    public var json: String {
        let fieldText = fields.map { f, m in "{ \"fieldPath\": \"\(f.canonical)\", \(m.json) }" }.joined(separator: ", ")
        return "{ \"collectionGroup\": \"\(collectionGroup)\", \"queryScope\": \"\(scope.rawValue)\", \"fields\": [\(fieldText)] }"
    }
}

/// A single-field index setting for a collection group (production keeps none by default).
public struct FieldOverride: Hashable, Sendable {
    public var collectionGroup: String
    public var field: FieldPath
    public var mode: IndexSpec.Mode

    public init(collectionGroup: String, field: FieldPath, mode: IndexSpec.Mode) {
        self.collectionGroup = collectionGroup
        self.field = field
        self.mode = mode
    }
}

/// The collection-scope single-field indexes a `fieldOverrides` entry leaves a field: only
/// those it lists (none for an exemption, `"indexes": []`), where a field without an entry has
/// all three (ascending, descending, array-contains).
public struct SingleFieldSetting: Hashable, Sendable {
    public var collectionGroup: String
    public var field: FieldPath
    public var modes: [IndexSpec.Mode]

    public init(collectionGroup: String, field: FieldPath, modes: [IndexSpec.Mode]) {
        self.collectionGroup = collectionGroup
        self.field = field
        self.modes = modes
    }
}

/// A composite index a query needs: its equality fields in any order, then its order exactly.
public struct CompositeRequirement: Hashable, Sendable {
    public var collectionGroup: String
    public var scope: IndexSpec.Scope
    public var equalities: [(FieldPath, IndexSpec.Mode)]
    public var order: [(FieldPath, IndexSpec.Mode)]

    /// The index to declare: equalities (sorted by path), then the order.
    public var spec: IndexSpec { IndexSpec(collectionGroup: collectionGroup, scope: scope, fields: equalities + order) }

    public static func == (a: CompositeRequirement, b: CompositeRequirement) -> Bool { a.spec == b.spec }
    public func hash(into h: inout Hasher) { spec.hash(into: &h) }

    /// A declared index serves this when it has the equality fields first, in any order, then
    /// the order field by field; a trailing `__name__` entry is allowed (in a vector index, one
    /// before the vector field too).
    public func isServed(by index: IndexSpec) -> Bool {
        guard equalUTF8(index.collectionGroup, collectionGroup), index.scope == scope else { return false }
        var fields = index.fields
        if let last = fields.last, last.0.isDocumentID { fields.removeLast() }
        if let vector = fields.last, vector.1.isVector, fields.count > 1, fields[fields.count - 2].0.isDocumentID {
            fields.remove(at: fields.count - 2)
        }
        guard fields.count == equalities.count + order.count else { return false }
        let head = fields.prefix(equalities.count)
        let sameHead = equalities.allSatisfy { e in head.contains { $0.0 == e.0 && $0.1 == e.1 } }
        return sameHead && zip(fields.dropFirst(equalities.count), order).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }
}

/// What production Firestore needs to serve a query: composite indexes, and for collection
/// groups single-field overrides. Single-field indexes of collection scope exist by default.
public struct IndexRequirements: Sendable {
    public var composites: [CompositeRequirement] = []
    public var fieldOverrides: [FieldOverride] = []
    /// The automatic collection-scope single-field indexes the query reads, which exist unless
    /// a field override takes them away.
    public var singleFields: [FieldOverride] = []

    public init() {}

    public var isEmpty: Bool { composites.isEmpty && fieldOverrides.isEmpty && singleFields.isEmpty }

    /// Per conjunction of the filter's normal form: equality-like fields pin the index prefix,
    /// the order (without `__name__`) follows. Equalities alone merge single-field indexes; one
    /// ordered field alone uses its single-field index; anything else needs a composite index.
    public static func of(_ q: NormalizedQuery) -> IndexRequirements {
        var out = IndexRequirements()
        // A kindless query only filters and orders by name, which needs no index.
        guard let collectionGroup = q.query.collectionID else { return out }
        let order = q.orderBy.filter { !$0.field.isDocumentID }
            .map { ($0.field, $0.descending ? IndexSpec.Mode.descending : .ascending) }
        let scope: IndexSpec.Scope = q.query.allDescendants ? .collectionGroup : .collection
        if let nearest = q.query.findNearest {
            // A nearest-neighbour search always needs a vector index: its equality filters'
            // fields, then the vector field for vectors of the query's size.
            for conjunction in conjunctions(q.query.filter) {
                let need = CompositeRequirement(
                    collectionGroup: collectionGroup, scope: scope, equalities: equalities(conjunction, besides: []),
                    order: [(nearest.field, .vector(dimension: nearest.queryVector.count))])
                if !out.composites.contains(need) { out.composites.append(need) }
            }
            return out
        }
        for conjunction in conjunctions(q.query.filter) {
            let equalities = equalities(conjunction, besides: order)
            if order.isEmpty || (equalities.isEmpty && order.count == 1) {
                for (field, mode) in equalities + order {
                    let o = FieldOverride(collectionGroup: collectionGroup, field: field, mode: mode)
                    if scope == .collectionGroup {
                        if !out.fieldOverrides.contains(o) { out.fieldOverrides.append(o) }
                    } else if !out.singleFields.contains(o) {
                        out.singleFields.append(o)
                    }
                }
                continue
            }
            let need = CompositeRequirement(collectionGroup: collectionGroup, scope: scope, equalities: equalities, order: order)
            if !out.composites.contains(need) { out.composites.append(need) }
        }
        return out
    }

    /// A conjunction's equality fields that lead an index: once each, by path, without
    /// `__name__` and the fields the order already names.
    static func equalities(
        _ conjunction: [(FieldPath, IndexSpec.Mode)], besides order: [(FieldPath, IndexSpec.Mode)]
    ) -> [(FieldPath, IndexSpec.Mode)] {
        var out: [(FieldPath, IndexSpec.Mode)] = []
        for (field, mode) in conjunction where !field.isDocumentID && !order.contains(where: { $0.0 == field }) {
            if !out.contains(where: { $0.0 == field && $0.1 == mode }) { out.append((field, mode)) }
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// The fields each conjunction constrains by equality (or array membership).
    static func conjunctions(_ filter: Filter?) -> [[(FieldPath, IndexSpec.Mode)]] {
        guard let filter else { return [[]] }
        switch filter {
        case .field(let f):
            switch f.op {
            case .equal, .in: return [[(f.field, .ascending)]]
            case .arrayContains, .arrayContainsAny: return [[(f.field, .arrayContains)]]
            case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notEqual, .notIn: return [[]]
            }
        case .unary(let u):
            switch u.op {
            case .isNull, .isNaN: return [[(u.field, .ascending)]]
            case .isNotNull, .isNotNaN: return [[]]
            }
        case .composite(let c):
            if c.filters.isEmpty { return [[]] }
            switch c.op {
            case .or: return c.filters.flatMap { conjunctions($0) }
            case .and:
                return c.filters.reduce([[]]) { acc, child in
                    let terms = conjunctions(child)
                    return acc.flatMap { left in terms.map { left + $0 } }
                }
            }
        }
    }

    /// The requirements the declared indexes and overrides leave unmet.
    public func unmet(declared: [IndexSpec], overrides: [FieldOverride], settings: [SingleFieldSetting] = []) -> IndexRequirements {
        var missing = IndexRequirements()
        // A declared composite index holding the field stands in for its single-field index
        // (leniently: production may want that index to cover the query's other fields too).
        missing.singleFields = singleFields.filter { need in
            let taken = settings.first { equalUTF8($0.collectionGroup, need.collectionGroup) && $0.field == need.field }
                .map { !$0.modes.contains(need.mode) } ?? false
            return taken && !declared.contains { index in
                index.scope == .collection && equalUTF8(index.collectionGroup, need.collectionGroup)
                    && index.fields.contains { $0.0 == need.field && $0.1 == need.mode }
            }
        }
        missing.composites = composites.filter { need in !declared.contains { need.isServed(by: $0) } }
        missing.fieldOverrides = fieldOverrides.filter { need in
            !overrides.contains(need)
                && !declared.contains { $0.scope == .collectionGroup && equalUTF8($0.collectionGroup, need.collectionGroup)
                    && $0.fields.first.map { f in f.0 == need.field && f.1 == need.mode } == true }
        }
        return missing
    }

    /// Production's refusal, naming what to declare.
    public var errorMessage: String {
        var lines = ["The query requires an index. Add it to firestore.indexes.json:"]
        lines += composites.map { "  \($0.spec.json)" }
        func line(_ o: FieldOverride, _ scope: IndexSpec.Scope) -> String {
            "  field override: { \"collectionGroup\": \"\(o.collectionGroup)\", \"fieldPath\": \"\(o.field.canonical)\", \"indexes\": [{ \"queryScope\": \"\(scope.rawValue)\", \(o.mode.json) }] }"
        }
        lines += fieldOverrides.map { line($0, .collectionGroup) }
        lines += singleFields.map { line($0, .collection) + " (its override leaves it without this single-field index)" }
        return lines.joined(separator: "\n")
    }
}

extension IndexRequirements {
    /// The requirements in `firestore.indexes.json` format, ready to deploy.
    public var firestoreIndexesJSON: String {
        var overridesByField: [String: [FieldOverride]] = [:]
        var fieldOrder: [String] = []
        for o in fieldOverrides {
            let k = o.collectionGroup + "\u{0}" + o.field.canonical
            if overridesByField[k] == nil { fieldOrder.append(k) }
            overridesByField[k, default: []].append(o)
        }
        let overrides = fieldOrder.map { k -> String in
            let list = overridesByField[k] ?? []
            let first = list[0]
            let entries = list.map { o in "{ \(o.mode.json), \"queryScope\": \"COLLECTION_GROUP\" }" }.joined(separator: ", ")
            return "    { \"collectionGroup\": \"\(first.collectionGroup)\", \"fieldPath\": \"\(first.field.canonical)\", \"indexes\": [\(entries)] }"
        }
        let indexes = composites.map { "    " + $0.spec.json }
        return "{\n  \"indexes\": [\n" + indexes.joined(separator: ",\n") + (indexes.isEmpty ? "" : "\n") + "  ],\n"
            + "  \"fieldOverrides\": [\n" + overrides.joined(separator: ",\n") + (overrides.isEmpty ? "" : "\n") + "  ]\n}\n"
    }
}
