import FlintModel

/// A validated query with its full order: the explicit orderings, then every inequality field
/// not already ordered (by field path), then `__name__` in the direction of the last ordering.
///
/// The executor and listeners both use `matches` and `compare`, so results cannot drift apart.
public struct NormalizedQuery: Sendable {
    public let query: Query
    public let database: DatabaseID
    public let orderBy: [Ordering]
    /// The collection a query of one collection reads; nil for group and kindless queries.
    public let collection: ResourcePath?

    public static let maxDisjunctions = 30
    public static let maxInValues = 30
    public static let maxNotInValues = 10
    /// Filters (each value of a list operand counting), explicit orders and a parent document
    /// together.
    public static let maxFiltersOrdersAndAncestor = 100

    /// The fields of inequalities, which join the order after the explicit orderings.
    let inequalities: [FieldPath]
    /// Summed or averaged fields that neither the explicit order nor an inequality names.
    let aggregated: [FieldPath]
    /// Whether the disjunctions were counted as the query was read (see `read`).
    let heldToRules: Bool

    /// Checks the query in the reference's order, so that a query with several faults is told
    /// the same one: first the checks `read` makes, then those of `checkPlan`.
    ///
    /// `aggregating` are the fields a sum or average reads. Production reads them from their
    /// index, so they join the order as inequality fields do: a document without one is not
    /// aggregated (nor counted beside it), and a limit takes the first documents in that order.
    public init(_ query: Query, database: DatabaseID, aggregating: [FieldPath] = [], heldToRules: Bool = false) throws(FlintError) {
        self = try Self.read(query, database: database, aggregating: aggregating, heldToRules: heldToRules)
        try checkPlan()
    }

    /// The checks the reference makes as it reads a query, before the read time and the rules
    /// are looked at: those of `checkShape`, then that a group below a document filters and
    /// orders on names alone, offset and limit, the count of filters and orders,
    /// array-contains, the order of a query without a collection, each filter in turn (what
    /// `__name__` is compared with; another field's operand size, and that a query without a
    /// collection has no such filter), and the database a cursor names. A query `heldToRules`
    /// (any caller but the owner) also has its disjunctions counted here, as the reference
    /// counts them when it readies a query for the rules. The query that comes back still
    /// needs `checkPlan`.
    /// `checkingBounds: false` leaves a negative offset or limit to `checkBounds`, for a listen
    /// target, which the reference plans before it looks at them.
    public static func read(
        _ query: Query, database: DatabaseID, aggregating: [FieldPath] = [], heldToRules: Bool = false,
        checkingBounds: Bool = true
    ) throws(FlintError) -> NormalizedQuery {
        try checkShape(query, database: database)
        if query.isGroupBelowDocument { try checkScopedGroupFields(query) }
        if checkingBounds { try checkBounds(query) }

        // Repeats are counted once, and left out of what runs (they select nothing more).
        var deduplicated = query
        deduplicated.filter = query.filter.map(FilterRules.deduplicated)
        try checkSize(deduplicated)
        if let filter = deduplicated.filter { try FilterRules.validateArrays(filter) }
        // The collection id's length once the whole query is read, as the reference tells it.
        if let id = query.collectionID { try Validation.checkQueriedCollectionIDLength(id) }
        if query.collectionID == nil { try checkKindlessOrder(query.orderBy) }
        if let filter = deduplicated.filter {
            try FilterRules.validateEach(filter, database: database, kindless: query.collectionID == nil)
        }
        try checkCursorDatabases(query, database: database)
        if heldToRules, let filter = deduplicated.filter { try FilterRules.validateDisjunctions(filter) }
        return NormalizedQuery(reading: deduplicated, database: database, aggregating: aggregating, heldToRules: heldToRules)
    }

    /// An offset or limit below zero.
    public static func checkBounds(_ query: Query) throws(FlintError) {
        if query.offset < 0 { throw .invalidArgument("offset is negative") }
        if let limit = query.limit, limit < 0 { throw .invalidArgument("limit is negative") }
    }

    /// The full order: the explicit one, then the inequality fields, then the summed fields
    /// neither names, each group sorted, then `__name__`. `checkPlan` tells whether it is one
    /// the reference serves.
    private init(reading query: Query, database: DatabaseID, aggregating: [FieldPath], heldToRules: Bool) {
        self.query = query
        self.database = database
        self.heldToRules = heldToRules
        self.collection = query.allDescendants ? nil : query.collectionID.map { query.parent.appending($0) }
        self.inequalities = query.filter.map(FilterRules.inequalityFields) ?? []
        let seen = Set(query.orderBy.map(\.field))
        self.aggregated = Array(Set(aggregating).subtracting(seen).subtracting(inequalities)).sorted()
        let implicit = Array(Set(inequalities).subtracting(seen))
            .sorted { a, b in a.isDocumentID != b.isDocumentID ? b.isDocumentID : a < b }
        let direction = query.orderBy.last?.descending ?? false
        var full = query.orderBy + (implicit + aggregated).map { Ordering($0, descending: direction) }
        if full.last?.field.isDocumentID != true {
            full.append(Ordering(.documentID, descending: full.last?.descending ?? false))
        }
        self.orderBy = full
    }

    /// The checks the reference makes as it plans a query, once the read time and the rules
    /// have passed it: the ascending scan a group below a document is held to, a descending
    /// scan of names, an equality on `__name__` beside inequalities, a summed field after
    /// `__name__`, disjunctions (unless `read` counted them), then the order: each field once,
    /// `__name__` last.
    public func checkPlan() throws(FlintError) {
        if query.isGroupBelowDocument { try Self.checkScopedGroupOrder(query.orderBy) }
        try Self.checkKeyScan(query.orderBy, filter: query.filter)
        if let filter = query.filter { try FilterRules.validateKeyEquality(filter, inequalities: inequalities) }
        // An ordering on `__name__`, any filter on it, or a group below a document (a range of
        // names) puts it in the order first, so a summed field would follow it.
        if !aggregated.isEmpty,
            query.orderBy.contains(where: \.field.isDocumentID) || query.isGroupBelowDocument
                || (query.filter.map { FilterRules.fields($0).contains(where: \.isDocumentID) } ?? false)
        {
            // The reference names the fields by their segments, unquoted (`a-b.c`, not `` `a-b`.c ``).
            let names = aggregated.map(\.dotted)
            throw .invalidArgument(
                "This query requires an index that has fields [\(names.joined(separator: ", "))] after __name__ and Firestore does not currently support such an index. Please try the query again with additional ordering on those fields."
            )
        }
        if !heldToRules, let filter = query.filter { try FilterRules.validateDisjunctions(filter) }
        try Self.checkOrderTerms(query.orderBy)
        // An inequality field not ordered explicitly would join the order after the key.
        if query.orderBy.last?.field.isDocumentID == true, !Set(inequalities).isSubset(of: query.orderBy.map(\.field)) {
            throw .invalidArgument("order by clause cannot contain more fields after the key")
        }
    }

    /// The checks the reference makes first: the rules across filters (`checkOperators`), then,
    /// as it reads the query part by part, the collection, the filters, the projection, the
    /// order, each cursor and the nearest-neighbour search, each part's names and rules before
    /// the next part is read. (An aggregation's own fields are read after the rules across
    /// filters and before the rest.) `Wire.query` makes the same checks as it converts each
    /// part, so a part that cannot be read is told in the same turn.
    public static func checkShape(_ query: Query, database: DatabaseID) throws(FlintError) {
        try checkOperators(query)
        // The collection id's form; its length is told later (`read`).
        if let id = query.collectionID { try Validation.validateCollectionID(id, checkingLength: false) }
        if let filter = query.filter { try checkFilter(filter) }
        if let projection = query.projection { try checkProjection(projection) }
        try checkOrder(query.orderBy)
        for cursor in [query.startAt, query.endAt].compactMap({ $0 }) {
            try checkCursorLength(cursor.values.count, orderBy: query.orderBy)
            for value in cursor.values { try Validation.checkReadable(value) }
            try checkCursorKey(cursor, orderBy: query.orderBy)
        }
        if let nearest = query.findNearest { try checkNearest(nearest, in: query) }
    }

    /// The rules across filters for `!=` and not-in, which the reference checks before anything
    /// else a request holds (a transaction, an aggregation, the query's collection).
    public static func checkOperators(_ query: Query) throws(FlintError) {
        if let filter = query.filter { try FilterOperators(filter).check() }
    }

    /// Each filter in turn: an `or` with no part, then its field's reserved names and its list
    /// operand.
    public static func checkFilter(_ filter: Filter) throws(FlintError) {
        try FilterRules.checkEach(filter)
    }

    /// What `in`, not-in and array-contains-any compare with: a list, not empty nor too long.
    public static func checkListOperand(_ filter: FieldFilter) throws(FlintError) {
        try FilterRules.checkListOperand(filter)
    }

    /// Each projected field: no reserved segment, and `__name__` only whole.
    public static func checkProjection(_ fields: [FieldPath]) throws(FlintError) {
        for path in fields { try Validation.checkNamedPath(path) }
        for path in fields { try Validation.checkNameAlone(path) }
    }

    /// The order's reserved names; its other rules come last among a query's checks.
    public static func checkOrder(_ orderBy: [Ordering]) throws(FlintError) {
        for o in orderBy { try Validation.checkNamedPath(o.field) }
    }

    /// A cursor has at most a value for each explicit ordering; told before its values are read.
    public static func checkCursorLength(_ count: Int, orderBy: [Ordering]) throws(FlintError) {
        if count > orderBy.count { throw .invalidArgument("Cursor has too many values.") }
    }

    /// A cursor's value for `__name__` is a reference to a document. Only the first ordering on
    /// `__name__` is looked at, as on the reference: any other is refused later, as an order
    /// after the key.
    public static func checkCursorKey(_ cursor: Cursor, orderBy: [Ordering]) throws(FlintError) {
        guard let key = cursorKey(cursor, orderBy: orderBy) else { return }
        guard case .reference = key else { throw .invalidArgument("Cursor __key__ value is not a document reference.") }
    }

    /// And a document of the query's database, which the reference tells after each filter's
    /// checks.
    static func checkCursorDatabases(_ query: Query, database: DatabaseID) throws(FlintError) {
        for cursor in [query.startAt, query.endAt].compactMap({ $0 }) {
            if case .reference(let r)? = cursorKey(cursor, orderBy: query.orderBy), r.database != database {
                throw .invalidArgument("The cursor key is in a different database than the query")
            }
        }
    }

    private static func cursorKey(_ cursor: Cursor, orderBy: [Ordering]) -> Value? {
        guard let index = orderBy.firstIndex(where: \.field.isDocumentID), index < cursor.values.count else { return nil }
        return cursor.values[index]
    }

    /// The nearest-neighbour search's rules, and what it is combined with.
    public static func checkNearest(_ nearest: FindNearest, in query: Query) throws(FlintError) {
        try FindNearestRules.validate(nearest, in: query)
    }

    /// The search's first checks, which `Wire` makes as it reads the search: the query vector's
    /// dimensions, then the limit, before the distance measure and the vector field are read.
    public static func checkNearestVector(dimensions: Int, limit: Int) throws(FlintError) {
        try FindNearestRules.checkVector(dimensions: dimensions)
        try FindNearestRules.checkLimit(limit)
    }

    /// An order names each field once, and `__name__` only last; returns the ordered fields.
    @discardableResult
    public static func checkOrderTerms(_ orderBy: [Ordering]) throws(FlintError) -> Set<FieldPath> {
        var seen = Set<FieldPath>()
        for (i, o) in orderBy.enumerated() {
            try Validation.checkNameAlone(o.field)
            if !seen.insert(o.field).inserted {
                throw .invalidArgument("order by clause cannot contain duplicate fields \(o.field.dotted)")
            }
            if o.field.isDocumentID && i != orderBy.count - 1 {
                throw .invalidArgument("order by clause cannot contain more fields after the key")
            }
        }
        return seen
    }

    /// A query ordered by `__name__` descending alone (once or more), with no filter but on
    /// `__name__`, would read the key index backwards; the reference refuses it as it plans it.
    /// An equality on another field reads that field's index instead, so it is served.
    public static func checkKeyScan(_ orderBy: [Ordering], filter: Filter?) throws(FlintError) {
        guard !orderBy.isEmpty, orderBy.allSatisfy({ $0.field.isDocumentID && $0.descending }) else { return }
        if let filter, FilterRules.fields(filter).contains(where: { !$0.isDocumentID }) { return }
        throw FlintError(.failedPrecondition, "Firestore does not support descending key scans")
    }

    /// At most 100 filters, explicit orders and ancestor, counted as the reference counts them:
    /// a query under a document has an ancestor, and a group query of any depth there (with a
    /// collection or without) also counts one filter more.
    static func checkSize(_ query: Query) throws(FlintError) {
        let ancestor = query.parent.isEmpty ? 0 : 1
        let filters = (query.filter.map(FilterRules.filterCount) ?? 0) + (query.allDescendants ? ancestor : 0)
        let orders = query.orderBy.count
        guard filters + orders + ancestor > maxFiltersOrdersAndAncestor else { return }
        throw .invalidArgument(
            "The query may not have more than \(maxFiltersOrdersAndAncestor) filters + sort orders + ancestor total. Currently there are \(filters) filters, \(orders) sort orders, and \(ancestor == 0 ? "no" : "one") ancestor filter."
        )
    }

    /// Below the root, a collection group or subtree query may only scan names, as the
    /// reference allows: no other field filtered or ordered on. Told before offset and limit.
    static func checkScopedGroupFields(_ query: Query) throws(FlintError) {
        func scansNames(_ filter: Filter) -> Bool {
            switch filter {
            case .composite(let c): return c.filters.allSatisfy(scansNames)
            case .unary(let u): return u.field.isDocumentID
            case .field(let f): return f.field.isDocumentID && f.op != .arrayContains && f.op != .arrayContainsAny
            }
        }
        if !(query.filter.map(scansNames) ?? true) || query.orderBy.contains(where: { !$0.field.isDocumentID }) {
            throw .invalidArgument("collection group queries are only allowed at the root parent")
        }
    }

    /// And it scans them in ascending order; told as the query is planned. (Without a
    /// collection, `checkKindlessOrder` has refused a descending order already.)
    static func checkScopedGroupOrder(_ orderBy: [Ordering]) throws(FlintError) {
        guard orderBy.contains(where: \.descending) else { return }
        // FAILED_PRECONDITION, as the reference answers this one.
        throw FlintError(.failedPrecondition, "collection group queries are only allowed if they're at the root or they're an ascending primary key scan")
    }

    /// A query without a collection id reads documents of every kind, so it can only order by
    /// what every document has: its name, ascending (and filter on it alone, which
    /// `FilterRules.validateEach` checks). A nearest-neighbour search over them is served, as on
    /// the reference. Refusals are in the reference's words, whose "kind" is a collection id.
    static func checkKindlessOrder(_ orderBy: [Ordering]) throws(FlintError) {
        if orderBy.contains(where: { !$0.field.isDocumentID || $0.descending }) {
            throw .invalidArgument("kind is required for all orders except __key__ ascending")
        }
    }

    // MARK: - Matching

    /// The value a document has at `path`; `__name__` is the document's reference.
    public func value(_ path: FieldPath, _ key: DocumentKey, _ fields: MapValue) -> Value? {
        path.isDocumentID ? .reference(DocumentReference(database: database, key: key)) : fields.value(at: path)
    }

    /// Whether the document belongs to the collection, group or subtree the query reads.
    public func inScope(_ key: DocumentKey) -> Bool {
        let parent = query.parent
        guard let id = query.collectionID else {
            // Kindless: the documents of every collection directly below the parent, or at any depth.
            let depth = key.path.count - parent.count
            return (query.allDescendants ? depth >= 2 : depth == 2) && parent.isPrefix(of: key.path)
        }
        if query.allDescendants {
            return equalUTF8(key.collectionID, id) && key.path.count > parent.count + 1 && parent.isPrefix(of: key.path)
        }
        return key.path.count == parent.count + 2 && equalUTF8(key.collectionID, id) && parent.isPrefix(of: key.path)
    }

    /// Scope, filter, every ordered field present, and within the cursors.
    public func matches(_ key: DocumentKey, _ fields: MapValue) -> Bool {
        guard inScope(key) else { return false }
        for o in orderBy where !o.field.isDocumentID && fields.value(at: o.field) == nil { return false }
        if let filter = query.filter, !FilterRules.matches(filter, self, key, fields) { return false }
        return withinCursors(key, fields)
    }

    /// Whether the filter alone holds (no scope, order or cursor checks).
    public func filterMatches(_ key: DocumentKey, _ fields: MapValue) -> Bool {
        query.filter.map { FilterRules.matches($0, self, key, fields) } ?? true
    }

    public func withinCursors(_ key: DocumentKey, _ fields: MapValue) -> Bool {
        if let start = query.startAt {
            let c = compare(key, fields, to: start)
            if start.before ? c < 0 : c <= 0 { return false }
        }
        if let end = query.endAt {
            let c = compare(key, fields, to: end)
            if end.before ? c >= 0 : c > 0 { return false }
        }
        return true
    }

    /// The document's position against a cursor over the cursor's length, directions applied.
    func compare(_ key: DocumentKey, _ fields: MapValue, to cursor: Cursor) -> Int {
        for (order, bound) in zip(orderBy, cursor.values) {
            let v = value(order.field, key, fields) ?? .null
            let c = Value.compare(v, bound)
            if c != 0 { return order.descending ? -c : c }
        }
        return 0
    }

    /// The full order between two documents (never 0 for different documents).
    public func compare(_ a: (DocumentKey, MapValue), _ b: (DocumentKey, MapValue)) -> Int {
        for order in orderBy {
            let c: Int
            if order.field.isDocumentID {
                c = a.0.path.compare(b.0.path)
            } else {
                c = Value.compare(a.1.value(at: order.field) ?? .null, b.1.value(at: order.field) ?? .null)
            }
            if c != 0 { return order.descending ? -c : c }
        }
        return 0
    }
}
