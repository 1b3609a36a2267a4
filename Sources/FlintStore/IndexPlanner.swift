import FlintModel
import FlintQuery

/// Chooses the index that serves a query in its own order: the query's top-level equalities,
/// one `in` filter and one array-contains or array-contains-any pin the index prefix, its full
/// order follows.
public struct IndexPlan: Sendable {
    public var definition: IndexDefinition
    /// Values of the leading components every result shares: one list per value of the `in`
    /// and array-contains-any filters the index serves (read one after another, then merged in
    /// the query's order), or a single list.
    public var prefixes: [[Value]]
    /// The prefix alone proves the whole filter, so entries need no further filter check.
    public var coversFilter: Bool

    /// The plan for `q`, or nil when an index cannot serve it (vector search).
    public static func make(_ q: NormalizedQuery) -> IndexPlan? {
        guard q.query.findNearest == nil else { return nil }
        var equalities: [(field: FieldPath, values: [Value])] = []
        var contains: (field: FieldPath, values: [Value])?
        var covered = true
        var ins: [(FieldPath, [Value])] = []
        for conjunct in conjuncts(q.query.filter) {
            guard case .field(let f) = conjunct, !f.field.isDocumentID else {
                covered = false
                continue
            }
            switch f.op {
            case .equal where comparable(f.value) && !equalities.contains(where: { $0.field == f.field }):
                equalities.append((f.field, [f.value]))
            case .arrayContains where contains == nil && comparable(f.value):
                contains = (f.field, [f.value])
            case .arrayContainsAny where contains == nil:
                guard case .array(let values) = f.value, !values.isEmpty, values.allSatisfy(comparable) else {
                    covered = false
                    continue
                }
                contains = (f.field, distinct(values))
            case .in:
                guard case .array(let values) = f.value, !values.isEmpty, values.allSatisfy(comparable) else {
                    covered = false
                    continue
                }
                ins.append((f.field, distinct(values)))
            default:
                covered = false
            }
        }
        // One `in` filter becomes a component read once per value; a field also pinned by an
        // equality, or a second `in`, stays a filter checked on each entry.
        for (index, (field, values)) in ins.enumerated() {
            if index == 0, !equalities.contains(where: { $0.field == field }) {
                equalities.append((field, values))
            } else {
                covered = false
            }
        }
        equalities.sort { $0.field < $1.field }
        var components = equalities.map { IndexDefinition.Component($0.field) }
        var prefixes: [[Value]] = [[]]
        for (_, values) in equalities {
            prefixes = prefixes.flatMap { prefix in values.map { prefix + [$0] } }
        }
        if let (field, values) = contains {
            components.append(IndexDefinition.Component(field, arrayContains: true))
            prefixes = prefixes.flatMap { prefix in values.map { prefix + [$0] } }
        }
        for o in q.orderBy where !o.field.isDocumentID && !equalities.contains(where: { $0.field == o.field }) {
            components.append(IndexDefinition.Component(o.field, descending: o.descending))
        }
        let nameDescending = q.orderBy.last?.descending ?? false
        return IndexPlan(
            definition: IndexDefinition(components: components, nameDescending: nameDescending), prefixes: prefixes,
            coversFilter: covered)
    }

    /// `values` without repeats by Firestore's equality (`1` and `1.0` are one value), so that
    /// no document is read twice.
    private static func distinct(_ values: [Value]) -> [Value] {
        var out: [Value] = []
        for v in values where !out.contains(where: { Value.compare($0, v) == 0 }) { out.append(v) }
        return out
    }

    /// The index production reads for `q`, as its explain output names it. It can differ from
    /// what Flint reads: a vector search reads a vector index after the equality fields in
    /// production, where Flint scans and measures every document.
    public static func productionIndex(_ q: NormalizedQuery) -> String {
        var equalities: [FieldPath] = []
        var contains: FieldPath?
        for conjunct in conjuncts(q.query.filter) {
            guard case .field(let f) = conjunct, !f.field.isDocumentID else { continue }
            switch f.op {
            case .equal, .in: if !equalities.contains(f.field) { equalities.append(f.field) }
            case .arrayContains, .arrayContainsAny: contains = contains ?? f.field
            default: break
            }
        }
        equalities.sort { $0 < $1 }
        var components = equalities.map { IndexDefinition.Component($0) }
        if let nearest = q.query.findNearest {
            let leading = IndexDefinition(components: components, nameDescending: false).description
            return "(\(leading), \(nearest.field.canonical) VECTOR<\(nearest.queryVector.count)>)"
        }
        if let contains { components.append(IndexDefinition.Component(contains, arrayContains: true)) }
        for o in q.orderBy where !o.field.isDocumentID && !equalities.contains(o.field) {
            components.append(IndexDefinition.Component(o.field, descending: o.descending))
        }
        let nameDescending = q.orderBy.last?.descending ?? false
        return "(" + IndexDefinition(components: components, nameDescending: nameDescending).description + ")"
    }

    private static func conjuncts(_ filter: Filter?) -> [Filter] {
        guard let filter else { return [] }
        if case .composite(let c) = filter, c.op == .and { return c.filters.flatMap { conjuncts($0) } }
        return [filter]
    }

    private static func comparable(_ v: Value) -> Bool {
        if case .null = v { return false }
        return !v.isNaN
    }
}
