import FlintModel

/// A filter's operators alone. The reference checks the rules across filters (one `!=`-like
/// filter per query; not-in beside neither `in`, array-contains-any nor `or`) before it reads
/// anything else of the query, its collection included, so `Wire` checks them on the operators
/// before converting the rest. What cannot be read yet (a filter of no kind, an operator that is
/// not one of Firestore's, an empty `or`) is refused later, when its filter is read.
public indirect enum FilterOperators: Sendable {
    case field(FieldFilter.Operator?)
    case unary(UnaryFilter.Operator?)
    case composite(CompositeFilter.Operator, [FilterOperators])

    public static let emptyDisjunction = FlintError.invalidArgument("Composite filter must have at least one sub-filter.")

    public init(_ filter: Filter) {
        switch filter {
        case .field(let f): self = .field(f.op)
        case .unary(let u): self = .unary(u.op)
        case .composite(let c): self = .composite(c.op, c.filters.map(FilterOperators.init))
        }
    }

    /// More than one `!=`, not-in or is-not filter, then not-in beside a disjunction, are refused.
    public func check() throws(FlintError) {
        var notEqualCount = 0
        var hasNotIn = false
        var hasDisjunctive = false
        func walk(_ shape: FilterOperators) throws(FlintError) {
            switch shape {
            case .composite(let op, let children):
                // Any OR, even of one filter or none, rules out not-in.
                if op == .or { hasDisjunctive = true }
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
