import FlintModel

/// How the reference sizes a filter. Identical filters side by side in one AND or OR are one
/// (in any order), and so are identical values in one list operand; identical means the same
/// value of the same type, so `1` and `1.0` stay two (but `-0.0` is `0.0`, as the reference
/// reads it). Counts are reckoned on the filter with those repeats removed, which selects the
/// same documents; an OR of array-contains filters on one field is then the same as the
/// array-contains-any of their values.
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
                return (filter, .single(f.field, f.op, Identical(f.value, arrayContains: f.op == .arrayContains)))
            }
            var seen = Set<Identical>()
            f.value = .array(items.filter { seen.insert(Identical($0, arrayContains: f.op == .arrayContainsAny)).inserted })
            return (.field(f), .list(f.field, f.op, seen))
        case .composite(let c):
            var seen = Set<FilterShape>()
            var children: [Filter] = []
            for child in c.filters.map(withoutRepeats) where seen.insert(child.shape).inserted {
                children.append(child.filter)
            }
            return (.composite(CompositeFilter(c.op, children)), shape(c.op, seen))
        }
    }

    /// A composite's shape; an OR of nothing but array-contains filters on one field is shaped
    /// as the array-contains-any of their values, which the reference makes of it.
    private static func shape(_ op: CompositeFilter.Operator, _ parts: Set<FilterShape>) -> FilterShape {
        guard op == .or, case .single(let field, .arrayContains, _)? = parts.first else { return .composite(op, parts) }
        var values = Set<Identical>()
        for part in parts {
            guard case .single(field, .arrayContains, let value) = part else { return .composite(op, parts) }
            values.insert(value)
        }
        return .list(field, .arrayContainsAny, values)
    }

    /// How many disjunctions the reference makes of a filter: the filter in disjunctive normal
    /// form, each `in` value an equality and each array-contains-any value an array-contains,
    /// with repeated terms and repeated conjunctions (as sets) counted once. Parts of an AND
    /// (ANDs within it opened up) that come out the same are one part, and an AND whose parts
    /// would multiply out to more than twice the limit is refused before it is expanded, in the
    /// reference's shorter words.
    static func disjunctionCount(_ filter: Filter) throws(FlintError) -> Int {
        try disjunctions(filter).count
    }

    /// The conjunctions, each once, in order. A single condition an AND wraps alone stays
    /// apart from the same condition standing in an OR (`a == 1 OR (a == 1 AND a == 1)` is 2),
    /// until an AND around them multiplies them out.
    private static func disjunctions(_ filter: Filter) throws(FlintError) -> [Conjunction] {
        switch filter {
        case .unary(let u):
            return [Conjunction([.unary(u.field, u.op)])]
        case .field(let f):
            switch (f.op, f.value) {
            case (.in, .array(let items)): return distinct(items.map { Conjunction([Term(f.field, .equal, $0)]) })
            case (.arrayContainsAny, .array(let items)): return distinct(items.map { Conjunction([Term(f.field, .arrayContains, $0)]) })
            default: return [Conjunction([Term(f.field, f.op, f.value)])]
            }
        case .composite(let c) where c.op == .or:
            var conjunctions: [Conjunction] = []
            for child in c.filters { conjunctions += try disjunctions(child) }
            return distinct(conjunctions)
        case .composite(let c):
            let children = conjoined(c.filters)
            if children.count == 1, !Self.isComposite(children[0]) {
                // Only a single condition that can be met stays wrapped; a list of values is an
                // OR already, and conditions no value meets are one however they are written.
                let alone = try disjunctions(children[0])
                guard alone.count == 1, !alone[0].terms.contains(where: \.isUnmatched) else { return alone }
                return [Conjunction(alone[0].terms, wrapped: true)]
            }
            var parts: [[Set<Term>]] = []
            for child in children {
                let part = try disjunctions(child).map(\.terms)
                if !parts.contains(where: { Set($0) == Set(part) }) { parts.append(part) }
            }
            var product = 1
            for part in parts {
                product *= part.count
                if product > 2 * NormalizedQuery.maxDisjunctions {
                    throw .invalidArgument("Too many disjunctions after normalization, the maximum is \(NormalizedQuery.maxDisjunctions)")
                }
            }
            let expanded = parts.reduce([Set<Term>()]) { expanded, part in
                expanded.flatMap { conjunction in part.map { withoutBooleansBesideUnmatched(conjunction.union($0)) } }
            }
            return distinct(expanded.map { Conjunction($0) })
        }
    }

    private static func isComposite(_ filter: Filter) -> Bool {
        if case .composite = filter { true } else { false }
    }

    /// The conjunctions without repeats, in order.
    private static func distinct(_ conjunctions: [Conjunction]) -> [Conjunction] {
        var seen = Set<Conjunction>()
        return conjunctions.filter { seen.insert($0).inserted }
    }

    /// The parts of an AND with the ANDs among them opened up, as the reference multiplies them.
    private static func conjoined(_ filters: [Filter]) -> [Filter] {
        filters.flatMap { filter -> [Filter] in
            if case .composite(let c) = filter, c.op == .and { conjoined(c.filters) } else { [filter] }
        }
    }

    /// A conjunction holding a comparison no value meets on a field holds no equality with a
    /// boolean on that field besides: the reference counts `b == null AND b == true` as
    /// `b == null` alone (but keeps `b == 1` beside it).
    private static func withoutBooleansBesideUnmatched(_ conjunction: Set<Term>) -> Set<Term> {
        let unmatched = Set(conjunction.compactMap { term -> FieldPath? in
            if case .unmatched(let field, arrayContains: false) = term { field } else { nil }
        })
        if unmatched.isEmpty { return conjunction }
        return conjunction.filter { term in
            guard case .field(let field, .equal, let operand) = term, case .boolean = operand.value else { return true }
            return !unmatched.contains(field)
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

/// A value equal only to an identical one, `-0.0` being `0.0`; its hash is the value's, which
/// identical values share. What an array-contains looks for is one value whenever no array can
/// hold it (null, NaN, an empty array), as the reference reads it.
private struct Identical: Hashable {
    let value: Value
    init(_ value: Value, arrayContains: Bool = false) {
        self.value = arrayContains && Term.unmatchable(value, arrayContains: true) ? .null : value
    }
    static func == (a: Identical, b: Identical) -> Bool { a.value.isIdentical(to: b.value, signedZeros: false) }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

/// One disjunction in normal form: its conditions, and whether an AND wrapped them alone.
private struct Conjunction: Hashable {
    let terms: Set<Term>
    let wrapped: Bool
    init(_ terms: Set<Term>, wrapped: Bool = false) {
        self.terms = terms
        self.wrapped = wrapped
    }
}

/// One condition of a disjunction in normal form. A comparison with null or NaN, whatever its
/// operator, is one condition on its field, as is an array-contains of null, NaN or an empty
/// array: none selects anything, and the reference counts each kind once.
private enum Term: Hashable {
    case field(FieldPath, FieldFilter.Operator, Identical)
    case unary(FieldPath, UnaryFilter.Operator)
    case unmatched(FieldPath, arrayContains: Bool)

    var isUnmatched: Bool {
        if case .unmatched = self { true } else { false }
    }

    init(_ field: FieldPath, _ op: FieldFilter.Operator, _ value: Value) {
        switch op {
        case .equal, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .arrayContains:
            let arrayContains = op == .arrayContains
            self = Self.unmatchable(value, arrayContains: arrayContains) ? .unmatched(field, arrayContains: arrayContains) : .field(field, op, Identical(value))
        case .notEqual, .in, .notIn, .arrayContainsAny:
            self = .field(field, op, Identical(value))
        }
    }

    /// Null and NaN meet no comparison; an array-contains cannot meet an empty array either.
    static func unmatchable(_ value: Value, arrayContains: Bool) -> Bool {
        switch value {
        case .null: true
        case .double(let d): d.isNaN
        case .array(let items): arrayContains && items.isEmpty
        default: false
        }
    }
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
