import FlintModel
import FlintQuery

/// Chooses the index that serves a query in its own order: the query's top-level equalities
/// and array-contains pin the index prefix, its full order follows.
public struct IndexPlan: Sendable {
    public var definition: IndexDefinition
    /// Values of the leading components every result shares.
    public var prefix: [Value]
    /// The prefix alone proves the whole filter, so entries need no further filter check.
    public var coversFilter: Bool

    /// The plan for `q`, or nil when an index cannot serve it (vector search).
    public static func make(_ q: NormalizedQuery) -> IndexPlan? {
        guard q.query.findNearest == nil else { return nil }
        var equalities: [(FieldPath, Value)] = []
        var contains: (FieldPath, Value)?
        var covered = true
        for conjunct in conjuncts(q.query.filter) {
            guard case .field(let f) = conjunct, !f.field.isDocumentID, comparable(f.value) else {
                covered = false
                continue
            }
            switch f.op {
            case .equal where !equalities.contains(where: { $0.0 == f.field }): equalities.append((f.field, f.value))
            case .arrayContains where contains == nil: contains = (f.field, f.value)
            default: covered = false
            }
        }
        equalities.sort { $0.0 < $1.0 }
        var components = equalities.map { IndexDefinition.Component($0.0) }
        var prefix = equalities.map(\.1)
        if let (field, value) = contains {
            components.append(IndexDefinition.Component(field, arrayContains: true))
            prefix.append(value)
        }
        for o in q.orderBy where !o.field.isDocumentID && !equalities.contains(where: { $0.0 == o.field }) {
            components.append(IndexDefinition.Component(o.field, descending: o.descending))
        }
        let nameDescending = q.orderBy.last?.descending ?? false
        return IndexPlan(
            definition: IndexDefinition(components: components, nameDescending: nameDescending), prefix: prefix,
            coversFilter: covered)
    }

    /// The index production reads for `q`, as its explain output names it. It can differ from
    /// Flint's own plan, which serves some filters by reading in order and checking each
    /// document: production reads an `in` filter's field index as it reads an equality's, and a
    /// vector search reads a vector index after the equality fields.
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
        var parts = equalities.map { "\($0.canonical) ASC" }
        if let nearest = q.query.findNearest {
            parts += ["__name__ ASC", "\(nearest.field.canonical) VECTOR<\(nearest.queryVector.count)>"]
            return "(" + parts.joined(separator: ", ") + ")"
        }
        if let contains { parts.append("\(contains.canonical) CONTAINS") }
        for o in q.orderBy where !o.field.isDocumentID && !equalities.contains(o.field) {
            parts.append("\(o.field.canonical) \(o.descending ? "DESC" : "ASC")")
        }
        parts.append("__name__ \(q.orderBy.last?.descending ?? false ? "DESC" : "ASC")")
        return "(" + parts.joined(separator: ", ") + ")"
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
