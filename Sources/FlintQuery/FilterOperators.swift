import FlintModel

/// A filter's operators alone. The reference checks the rules across filters (one `!=`-like
/// filter per query; not-in beside neither `in`, array-contains-any nor `or`) before it reads
/// any filter's field or value, so `Wire` checks them on the operators before converting the
/// rest. An operator that is not one of Firestore's is nil here and refused when its filter is
/// read.
public indirect enum FilterOperators: Sendable {
    case field(FieldFilter.Operator?)
    case unary(UnaryFilter.Operator?)
    case composite(CompositeFilter.Operator, [FilterOperators])

    public init(_ filter: Filter) {
        switch filter {
        case .field(let f): self = .field(f.op)
        case .unary(let u): self = .unary(u.op)
        case .composite(let c): self = .composite(c.op, c.filters.map(FilterOperators.init))
        }
    }

    /// An empty `or`, more than one `!=`, not-in or is-not filter, and not-in beside a
    /// disjunction are refused, in that order.
    public func check() throws(FlintError) {
        var notEqualCount = 0
        var hasNotIn = false
        var hasDisjunctive = false
        func walk(_ shape: FilterOperators) throws(FlintError) {
            switch shape {
            case .composite(let op, let children):
                // Any OR, even of one filter, rules out not-in; an empty one is refused (an
                // empty AND selects everything).
                if op == .or {
                    if children.isEmpty { throw .invalidArgument("Composite filter must have at least one sub-filter.") }
                    hasDisjunctive = true
                }
                for child in children { try walk(child) }
            case .unary(let op):
                if op == .isNotNull || op == .isNotNaN { notEqualCount += 1 }
            case .field(let op):
                switch op {
                case .notEqual?: notEqualCount += 1
                case .notIn?:
                    notEqualCount += 1
                    hasNotIn = true
                case .in?, .arrayContainsAny?: hasDisjunctive = true
                case .equal?, .lessThan?, .lessThanOrEqual?, .greaterThan?, .greaterThanOrEqual?, .arrayContains?, nil: break
                }
            }
        }
        try walk(self)
        if notEqualCount > 1 {
            throw .invalidArgument(
                "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.")
        }
        if hasNotIn && hasDisjunctive {
            throw .invalidArgument("'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.")
        }
    }
}
