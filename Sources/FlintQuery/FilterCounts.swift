import FlintModel

/// How the reference sizes a filter. Identical filters side by side in one AND or OR are one
/// (in any order), and so are identical values in one list operand; identical means the same
/// value of the same type, so `1` and `1.0` stay two. Counts and disjunctions are reckoned on
/// the filter with those repeats removed, which selects the same documents.
extension FilterRules {
    /// The filter without repeated siblings or list values. Composites are kept, even of one
    /// filter: an OR of one still rules out not-in.
    static func deduplicated(_ filter: Filter) -> Filter { withoutRepeats(filter).filter }

    /// One pass: each part's shape is made once, on the way up.
    private static func withoutRepeats(_ filter: Filter) -> (filter: Filter, shape: FilterShape) {
        switch filter {
        case .unary(let u): return (filter, .unary(u.field, u.op))
        case .field(var f):
            guard f.op == .in || f.op == .notIn || f.op == .arrayContainsAny, case .array(let items) = f.value else {
                return (filter, .single(f.field, f.op, Identical(f.value)))
            }
            var seen = Set<Identical>()
            f.value = .array(items.filter { seen.insert(Identical($0)).inserted })
            return (.field(f), .list(f.field, f.op, seen))
        case .composite(let c):
            var seen = Set<FilterShape>()
            var children: [Filter] = []
            for child in c.filters.map(withoutRepeats) where seen.insert(child.shape).inserted {
                children.append(child.filter)
            }
            return (.composite(CompositeFilter(c.op, children)), .composite(c.op, seen))
        }
    }

    /// Filters as the reference counts them toward its limit of 100 filters, orders and
    /// ancestor: each value of a list operand is one.
    static func filterCount(_ filter: Filter) -> Int {
        switch filter {
        case .unary: 1
        case .field(let f):
            if case .array(let items) = f.value, f.op == .in || f.op == .notIn || f.op == .arrayContainsAny { items.count } else { 1 }
        case .composite(let c): c.filters.reduce(0) { $0 + filterCount($1) }
        }
    }
}

/// A value equal only to an identical one; its hash is the value's, which identical values share.
private struct Identical: Hashable {
    let value: Value
    init(_ value: Value) { self.value = value }
    static func == (a: Identical, b: Identical) -> Bool { a.value.isIdentical(to: b.value) }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

/// A filter's identity for spotting repeats: composites as sets of their parts, list operands
/// as sets of their values. Fields are compared by their names' bytes, so `é` and `e` with a
/// combining accent are two fields.
private indirect enum FilterShape: Hashable {
    case list(FieldPath, FieldFilter.Operator, Set<Identical>)
    case single(FieldPath, FieldFilter.Operator, Identical)
    case unary(FieldPath, UnaryFilter.Operator)
    case composite(CompositeFilter.Operator, Set<FilterShape>)
}
