import FlintModel

/// Validation and evaluation of filters, with the reference emulator's rules:
/// `==`, ranges, `in` and array-contains never match null or NaN operands; ranges match only
/// values of the operand's type; `!=` and not-in never match null or missing fields.
enum FilterRules {
    // MARK: - Evaluation

    static func matches(_ filter: Filter, _ q: NormalizedQuery, _ key: DocumentKey, _ fields: MapValue) -> Bool {
        switch filter {
        case .composite(let c):
            switch c.op {
            case .and: return c.filters.allSatisfy { matches($0, q, key, fields) }
            case .or: return c.filters.isEmpty || c.filters.contains { matches($0, q, key, fields) }
            }
        case .unary(let u):
            guard let v = q.value(u.field, key, fields) else { return false }
            switch u.op {
            case .isNull: if case .null = v { return true } else { return false }
            case .isNaN: return v.isNaN
            case .isNotNull: if case .null = v { return false } else { return true }
            case .isNotNaN:
                if case .null = v { return false }
                return !v.isNaN
            }
        case .field(let f):
            guard let v = q.value(f.field, key, fields) else { return false }
            return matchesField(f.op, v, f.value)
        }
    }

    /// Null and NaN operands never select anything through `==`, ranges or array-contains.
    static func isComparable(_ operand: Value) -> Bool {
        if case .null = operand { return false }
        return !operand.isNaN
    }

    static func matchesField(_ op: FieldFilter.Operator, _ v: Value, _ operand: Value) -> Bool {
        switch op {
        case .equal:
            return isComparable(operand) && v == operand
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard isComparable(operand), v.typeOrder == operand.typeOrder, !v.isNaN else { return false }
            let c = Value.compare(v, operand)
            switch op {
            case .lessThan: return c < 0
            case .lessThanOrEqual: return c <= 0
            case .greaterThan: return c > 0
            default: return c >= 0
            }
        case .notEqual:
            if case .null = operand { return false }
            if case .null = v { return false }
            return operand.isNaN || v != operand
        case .arrayContains:
            guard isComparable(operand), case .array(let items) = v else { return false }
            return items.contains(operand)
        case .in:
            guard case .array(let options) = operand else { return false }
            return options.contains { isComparable($0) && v == $0 }
        case .arrayContainsAny:
            guard case .array(let options) = operand, case .array(let items) = v else { return false }
            return options.contains { isComparable($0) && items.contains($0) }
        case .notIn:
            guard case .array(let options) = operand else { return false }
            if case .null = v { return false }
            if options.contains(where: { if case .null = $0 { true } else { false } }) { return false }
            return !options.contains { !$0.isNaN && v == $0 }
        }
    }

    // MARK: - Shape

    static func isInequality(_ op: FieldFilter.Operator) -> Bool {
        switch op {
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notEqual, .notIn: true
        case .equal, .arrayContains, .in, .arrayContainsAny: false
        }
    }

    /// Whether an inequality can select anything. One that compares with null (or, a range,
    /// with NaN) cannot, and the reference does not order by its field.
    static func canSelect(_ f: FieldFilter) -> Bool {
        switch f.op {
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual: return isComparable(f.value)
        case .notEqual: if case .null = f.value { return false } else { return true }
        case .notIn:
            guard case .array(let items) = f.value else { return true }
            return items.contains { if case .null = $0 { false } else { true } }
        case .equal, .arrayContains, .in, .arrayContainsAny: return true
        }
    }

    /// Fields under inequality filters anywhere in the tree; they join the implicit order.
    static func inequalityFields(_ filter: Filter) -> [FieldPath] {
        var out: [FieldPath] = []
        var seen = Set<FieldPath>()
        func walk(_ f: Filter) {
            switch f {
            case .field(let ff): if isInequality(ff.op), canSelect(ff), seen.insert(ff.field).inserted { out.append(ff.field) }
            case .unary(let u):
                if u.op == .isNotNull || u.op == .isNotNaN, seen.insert(u.field).inserted { out.append(u.field) }
            case .composite(let c): c.filters.forEach(walk)
            }
        }
        walk(filter)
        return out
    }

    // MARK: - Validation

    /// Every field the filter tests, in order, with repeats.
    static func fields(_ filter: Filter) -> [FieldPath] {
        switch filter {
        case .field(let f): [f.field]
        case .unary(let u): [u.field]
        case .composite(let c): c.filters.flatMap(fields)
        }
    }

    /// One filter's own checks, as the reference reads it after the rules across filters: an
    /// `or` needs a part (an empty `and` selects everything), a field no reserved name, a list
    /// operand its size.
    static func checkEach(_ filter: Filter) throws(FlintError) {
        switch filter {
        case .composite(let c):
            if c.op == .or && c.filters.isEmpty { throw FilterOperators.emptyDisjunction }
            for child in c.filters { try checkEach(child) }
        case .unary(let u): try Validation.checkNamedPath(u.field)
        case .field(let ff):
            try Validation.checkNamedPath(ff.field)
            try Validation.checkReadable(ff.value)
            try checkListOperand(ff)
        }
    }

    /// After the query's cursors and its count of filters and orders: one array-contains per
    /// disjunction. Called with the `deduplicated` filter.
    static func validateArrays(_ filter: Filter) throws(FlintError) {
        if arrayFilterCount(filter) > 1 {
            throw .invalidArgument("A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction.")
        }
    }

    /// Then each filter in turn: `__name__` inside a longer path; for a filter on `__name__`,
    /// what it compares with (references to documents of the query's `database`; a null or NaN
    /// test is no such comparison); for any other, its operand's size, and, in a query with
    /// no collection (`kindless`), that it cannot be. Called with the `deduplicated` filter.
    static func validateEach(_ filter: Filter, database: DatabaseID, kindless: Bool) throws(FlintError) {
        switch filter {
        case .composite(let c):
            for child in c.filters { try validateEach(child, database: database, kindless: kindless) }
        case .unary(let u):
            try Validation.checkNameAlone(u.field)
            if u.field.isDocumentID { throw .invalidArgument("__key__ filter value must be a Key") }
            if kindless { throw kindRequired(u.field) }
        case .field(let ff):
            try Validation.checkNameAlone(ff.field)
            if ff.field.isDocumentID { return try checkNameOperand(ff, database: database) }
            // Each value of a list is read as a filter of its own, so without a collection only
            // the first one's size is told.
            for value in operands(ff) {
                try checkOperandSize(value, of: ff)
                if kindless { throw kindRequired(ff.field, suffix: arraySuffix(ff)) }
            }
        }
    }

    /// The reference names a field as its segments joined by dots, with `[*]` for the array
    /// operators.
    private static func kindRequired(_ field: FieldPath, suffix: String = "") -> FlintError {
        .invalidArgument("kind is required for filter: \(field.dotted)\(suffix)")
    }

    private static func arraySuffix(_ f: FieldFilter) -> String {
        f.op == .arrayContains || f.op == .arrayContainsAny ? "[*]" : ""
    }

    /// An equality (or `in`) on `__name__` anywhere in the filter cannot stand beside inequalities
    /// on other fields unless `__name__` is among the inequalities too, as on the reference.
    /// Inequalities that select nothing (`!= null`) do not count, as they join no order.
    static func validateKeyEquality(_ filter: Filter, inequalities: [FieldPath]) throws(FlintError) {
        guard inequalities.contains(where: { !$0.isDocumentID }), !inequalities.contains(where: \.isDocumentID) else { return }
        func hasKeyEquality(_ f: Filter) -> Bool {
            switch f {
            case .field(let ff): ff.field.isDocumentID && (ff.op == .equal || ff.op == .in)
            case .unary: false
            case .composite(let c): c.filters.contains(where: hasKeyEquality)
            }
        }
        if hasKeyEquality(filter) {
            throw .invalidArgument(
                "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities.")
        }
    }

    /// At most 30 disjunctions, counted as `disjunctionCount` tells; the last of the filter's
    /// checks, or (for a query held to rules) the last but the equality on `__name__`.
    static func validateDisjunctions(_ filter: Filter) throws(FlintError) {
        let count = try disjunctionCount(filter)
        if count > NormalizedQuery.maxDisjunctions {
            throw .invalidArgument(
                "Too many disjunctions after normalization. Result had \(count) disjunctions which is more than the maximum of \(NormalizedQuery.maxDisjunctions)"
            )
        }
    }

    /// `in`, not-in and array-contains-any take a non-empty list of at most 30 (not-in: 10).
    static func checkListOperand(_ f: FieldFilter) throws(FlintError) {
        let name = f.op.rawValue
        switch f.op {
        case .in, .notIn, .arrayContainsAny:
            guard case .array(let items) = f.value else { throw .invalidArgument("'\(name)' requires an ArrayValue.") }
            if items.isEmpty { throw .invalidArgument("'\(name)' requires an non-empty ArrayValue.") }
            let max = f.op == .notIn ? NormalizedQuery.maxNotInValues : NormalizedQuery.maxInValues
            if items.count > max { throw .invalidArgument("'\(name)' supports up to \(max) comparison values.") }
        case .equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .arrayContains:
            break
        }
    }

    /// A filter on `__name__` compares with references to documents of the query's database.
    static func checkNameOperand(_ f: FieldFilter, database: DatabaseID) throws(FlintError) {
        switch f.op {
        case .arrayContains, .arrayContainsAny: throw .invalidArgument("the name __key__ is reserved")
        case .in, .notIn:
            if case .array(let items) = f.value {
                for item in items { try checkName(item, database) }
            }
        case .equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            try checkName(f.value, database)
        }
    }

    /// A value compared with `__name__`: a reference to a document of the query's database.
    private static func checkName(_ value: Value, _ database: DatabaseID) throws(FlintError) {
        guard case .reference(let r) = value else { throw .invalidArgument("__key__ filter value must be a Key") }
        try Validation.validateReferencedDatabase(r.database)
        guard r.database == database else {
            throw .invalidArgument(
                "The request was for database '\(database.name)' but was attempting to access database '\(r.database.name)'")
        }
    }

    /// The values a filter compares with: each of a list operator's, or its one operand.
    private static func operands(_ f: FieldFilter) -> [Value] {
        switch f.op {
        case .in, .notIn, .arrayContainsAny:
            guard case .array(let items) = f.value else { return [] }
            return items
        case .equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .arrayContains:
            return [f.value]
        }
    }

    /// An operand must fit an index entry: at most 1,500 bytes by storage size.
    private static func checkOperandSize(_ value: Value, of f: FieldFilter) throws(FlintError) {
        guard StorageSize.value(value) > Limits.maxQueryValueBytes else { return }
        throw .invalidArgument("value for \(f.field.dotted)\(arraySuffix(f)) is too large to be used in a query")
    }

    /// The most array-contains and array-contains-any filters any one disjunction holds,
    /// reckoned without expanding the filter: an AND adds its parts', an OR takes its largest.
    static func arrayFilterCount(_ filter: Filter) -> Int {
        switch filter {
        case .field(let f): f.op == .arrayContains || f.op == .arrayContainsAny ? 1 : 0
        case .unary: 0
        case .composite(let c):
            c.op == .and ? c.filters.reduce(0) { $0 + arrayFilterCount($1) } : c.filters.map(arrayFilterCount).max() ?? 0
        }
    }
}
