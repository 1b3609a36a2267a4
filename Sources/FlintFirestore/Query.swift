import FlintEngine
import FlintModel
import FlintQuery
import Foundation

/// A query over a collection or collection group, built step by step as in FirebaseFirestore.
/// Argument errors are kept and thrown by `getDocuments` (or given to a listener).
public class Query: @unchecked Sendable {
    public let firestore: Firestore

    struct State {
        var parent: ResourcePath
        var collectionID: String
        var allDescendants = false
        var filters: [FlintQuery.Filter] = []
        var orderBy: [Ordering] = []
        var limit: Int?
        var limitToLast = false
        var start: CursorSpec?
        var end: CursorSpec?
        var problem: FirestoreErrorCode?
    }

    enum CursorSpec {
        case values([Value], before: Bool)
        case document(DocumentSnapshot, before: Bool)
    }

    let state: State

    init(state: State, _ firestore: Firestore) {
        self.state = state
        self.firestore = firestore
    }

    init(collection path: ResourcePath, _ firestore: Firestore, problem: FirestoreErrorCode?) {
        self.firestore = firestore
        var s = State(parent: path.dropLast, collectionID: path.last ?? "")
        s.problem = problem
        state = s
    }

    init(collectionGroup id: String, _ firestore: Firestore) {
        self.firestore = firestore
        var s = State(parent: .root, collectionID: id, allDescendants: true)
        if id.isEmpty || id.contains("/") {
            s.problem = invalidArgument("Invalid collection ID '\(id)'. Collection IDs must not be empty or contain '/'.")
        }
        state = s
    }

    private func with(_ change: (inout State) throws(FirestoreErrorCode) -> Void) -> Query {
        var s = state
        if s.problem == nil {
            do { try change(&s) } catch { s.problem = error }
        }
        return Query(state: s, firestore)
    }

    // MARK: - Filters

    public func whereField(_ field: String, isEqualTo value: Any) -> Query { filter(.field(field), .equal, value) }
    public func whereField(_ field: String, isNotEqualTo value: Any) -> Query { filter(.field(field), .notEqual, value) }
    public func whereField(_ field: String, isLessThan value: Any) -> Query { filter(.field(field), .lessThan, value) }
    public func whereField(_ field: String, isLessThanOrEqualTo value: Any) -> Query { filter(.field(field), .lessThanOrEqual, value) }
    public func whereField(_ field: String, isGreaterThan value: Any) -> Query { filter(.field(field), .greaterThan, value) }
    public func whereField(_ field: String, isGreaterThanOrEqualTo value: Any) -> Query {
        filter(.field(field), .greaterThanOrEqual, value)
    }
    public func whereField(_ field: String, arrayContains value: Any) -> Query { filter(.field(field), .arrayContains, value) }
    public func whereField(_ field: String, arrayContainsAny values: [Any]) -> Query { filter(.field(field), .arrayContainsAny, values) }
    public func whereField(_ field: String, in values: [Any]) -> Query { filter(.field(field), .in, values) }
    public func whereField(_ field: String, notIn values: [Any]) -> Query { filter(.field(field), .notIn, values) }

    public func whereField(_ path: FieldPath, isEqualTo value: Any) -> Query { filter(.path(path), .equal, value) }
    public func whereField(_ path: FieldPath, isNotEqualTo value: Any) -> Query { filter(.path(path), .notEqual, value) }
    public func whereField(_ path: FieldPath, isLessThan value: Any) -> Query { filter(.path(path), .lessThan, value) }
    public func whereField(_ path: FieldPath, isLessThanOrEqualTo value: Any) -> Query { filter(.path(path), .lessThanOrEqual, value) }
    public func whereField(_ path: FieldPath, isGreaterThan value: Any) -> Query { filter(.path(path), .greaterThan, value) }
    public func whereField(_ path: FieldPath, isGreaterThanOrEqualTo value: Any) -> Query { filter(.path(path), .greaterThanOrEqual, value) }
    public func whereField(_ path: FieldPath, arrayContains value: Any) -> Query { filter(.path(path), .arrayContains, value) }
    public func whereField(_ path: FieldPath, arrayContainsAny values: [Any]) -> Query { filter(.path(path), .arrayContainsAny, values) }
    public func whereField(_ path: FieldPath, in values: [Any]) -> Query { filter(.path(path), .in, values) }
    public func whereField(_ path: FieldPath, notIn values: [Any]) -> Query { filter(.path(path), .notIn, values) }

    private func filter(_ field: Filter.Field, _ op: FieldFilter.Operator, _ value: Any) -> Query {
        whereFilter(Filter(.field(field, op, UncheckedBox(value))))
    }

    /// Adds a filter built with `Filter.whereField`, `Filter.orFilter` or `Filter.andFilter`.
    public func whereFilter(_ filter: Filter) -> Query {
        with { s throws(FirestoreErrorCode) in
            s.filters.append(try filter.model(in: s, database: firestore.databaseID))
        }
    }

    // MARK: - Order, limits, cursors

    public func order(by field: String) -> Query { order(by: field, descending: false) }

    public func order(by field: String, descending: Bool) -> Query {
        with { s throws(FirestoreErrorCode) in try Self.addOrder(&s, try FieldPath(dotted: field).model(), descending) }
    }

    public func order(by path: FieldPath) -> Query { order(by: path, descending: false) }

    public func order(by path: FieldPath, descending: Bool) -> Query {
        with { s throws(FirestoreErrorCode) in try Self.addOrder(&s, try path.model(), descending) }
    }

    private static func addOrder(_ s: inout State, _ path: FlintModel.FieldPath, _ descending: Bool) throws(FirestoreErrorCode) {
        if s.start != nil || s.end != nil {
            throw invalidArgument("Invalid query. You must not specify a starting point before specifying the order by.")
        }
        s.orderBy.append(Ordering(path, descending: descending))
    }

    public func limit(to limit: Int) -> Query {
        with { s throws(FirestoreErrorCode) in
            guard limit > 0 else { throw invalidArgument("Invalid Query. Query limit (\(limit)) is invalid. Limit must be positive.") }
            s.limit = limit
            s.limitToLast = false
        }
    }

    /// The last `limit` documents in the query's order (it needs an `order(by:)`).
    public func limit(toLast limit: Int) -> Query {
        with { s throws(FirestoreErrorCode) in
            guard limit > 0 else { throw invalidArgument("Invalid Query. Query limit (\(limit)) is invalid. Limit must be positive.") }
            s.limit = limit
            s.limitToLast = true
        }
    }

    public func start(at fieldValues: [Any]) -> Query { cursor(fieldValues, start: true, before: true) }
    public func start(after fieldValues: [Any]) -> Query { cursor(fieldValues, start: true, before: false) }
    public func end(at fieldValues: [Any]) -> Query { cursor(fieldValues, start: false, before: false) }
    public func end(before fieldValues: [Any]) -> Query { cursor(fieldValues, start: false, before: true) }
    public func start(atDocument document: DocumentSnapshot) -> Query { cursor(document, start: true, before: true) }
    public func start(afterDocument document: DocumentSnapshot) -> Query { cursor(document, start: true, before: false) }
    public func end(atDocument document: DocumentSnapshot) -> Query { cursor(document, start: false, before: false) }
    public func end(beforeDocument document: DocumentSnapshot) -> Query { cursor(document, start: false, before: true) }

    private func cursor(_ values: [Any], start: Bool, before: Bool) -> Query {
        with { s throws(FirestoreErrorCode) in
            guard values.count <= s.orderBy.count else {
                throw invalidArgument("Invalid query. You are trying to start or end a query using more values than were specified in the order by.")
            }
            var converted: [Value] = []
            for (i, v) in values.enumerated() {
                if s.orderBy[i].field.isDocumentID {
                    converted.append(try Self.documentIDValue(v, s, firestore.databaseID))
                } else {
                    converted.append(try ValueBridge.plainValue(v, database: firestore.databaseID))
                }
            }
            if start { s.start = .values(converted, before: before) } else { s.end = .values(converted, before: before) }
        }
    }

    private func cursor(_ document: DocumentSnapshot, start: Bool, before: Bool) -> Query {
        with { s throws(FirestoreErrorCode) in
            guard document.exists else {
                throw invalidArgument("Invalid query. You are trying to start or end a query using a document that doesn't exist.")
            }
            if start { s.start = .document(document, before: before) } else { s.end = .document(document, before: before) }
        }
    }

    /// A document id given as a string becomes a reference, relative to the queried collection.
    static func documentIDValue(_ v: Any, _ s: State, _ database: DatabaseID) throws(FirestoreErrorCode) -> Value {
        if let ref = v as? DocumentReference { return try ValueBridge.plainValue(ref, database: database) }
        guard let id = v as? String, !id.isEmpty else {
            throw invalidArgument(
                "Invalid query. When querying with FieldPath.documentID() you must provide a valid document ID, but it was an empty string or not a string.")
        }
        let path = s.allDescendants ? ResourcePath(id.split(onASCII: "/", omittingEmptySubsequences: true).map(String.init)) : s.parent.appending(s.collectionID).appending(id)
        guard s.allDescendants || !id.contains("/") else {
            throw invalidArgument("Invalid query. When querying a collection by FieldPath.documentID() you must provide a plain document ID, but '\(id)' contains a '/' character.")
        }
        do {
            return .reference(FlintModel.DocumentReference(database: database, key: try DocumentKey(path)))
        } catch {
            throw invalidArgument("Invalid query. When querying a collection group by FieldPath.documentID(), the value provided must result in a valid document path, but '\(id)' is not.")
        }
    }

    // MARK: - Running

    /// The query as the engine runs it, with `limit(toLast:)` turned around.
    /// `original` is the query as written, which orders a reversed query's listener views.
    func modelQuery() throws(FirestoreErrorCode) -> (query: FlintQuery.Query, reversed: Bool) {
        let (q, original) = try modelQueries()
        return (q, original != nil)
    }

    func modelQueries() throws(FirestoreErrorCode) -> (query: FlintQuery.Query, original: FlintQuery.Query?) {
        let s = state
        if let problem = s.problem { throw problem }
        var q = FlintQuery.Query(
            parent: s.parent, collectionID: s.collectionID, allDescendants: s.allDescendants,
            filter: s.filters.isEmpty ? nil : (s.filters.count == 1 ? s.filters[0] : .composite(CompositeFilter(.and, s.filters))),
            orderBy: s.orderBy, limit: s.limit)
        let normalized: NormalizedQuery
        do { normalized = try NormalizedQuery(q, database: firestore.databaseID) } catch { throw FirestoreErrorCode(flint: error) }
        // The SDKs send the full order (with the implicit fields) whenever a document gives
        // the cursor, so the cursor's values line up with it.
        var hasDocumentCursor = false
        for c in [s.start, s.end] { if case .document? = c { hasDocumentCursor = true } }
        if hasDocumentCursor { q.orderBy = normalized.orderBy }
        q.startAt = try s.start.map { c throws(FirestoreErrorCode) in try resolve(c, normalized) }
        q.endAt = try s.end.map { c throws(FirestoreErrorCode) in try resolve(c, normalized) }
        guard s.limitToLast else { return (q, nil) }
        guard !s.orderBy.isEmpty else {
            throw invalidArgument("limit(toLast:) queries require specifying at least one order(by:) clause.")
        }
        var flipped = q
        flipped.orderBy = normalized.orderBy.map { Ordering($0.field, descending: !$0.descending) }
        flipped.startAt = q.endAt.map { Cursor(values: $0.values, before: !$0.before) }
        flipped.endAt = q.startAt.map { Cursor(values: $0.values, before: !$0.before) }
        return (flipped, q)
    }

    private func resolve(_ spec: CursorSpec, _ normalized: NormalizedQuery) throws(FirestoreErrorCode) -> Cursor {
        switch spec {
        case .values(let values, let before):
            return Cursor(values: values, before: before)
        case .document(let snapshot, let before):
            var values: [Value] = []
            let key = try snapshot.reference.key
            let fields = snapshot.fields ?? MapValue()
            for o in normalized.orderBy {
                guard let v = normalized.value(o.field, key, fields) else {
                    throw invalidArgument(
                        "Invalid query. You are trying to start or end a query using a document for which the field '\(o.field.canonical)' (used as the order by) does not exist.")
                }
                values.append(v)
            }
            return Cursor(values: values, before: before)
        }
    }

    public func getDocuments(source: FirestoreSource = .default) async throws -> QuerySnapshot {
        let (query, reversed) = try modelQuery()
        let db = firestore
        var documents = try await firestoreCall { try await db.backend.runQuery(query, transaction: nil, auth: db.auth) }
        if reversed { documents.reverse() }
        let snapshots = documents.map { QueryDocumentSnapshot(DocumentReference($0.key, db), $0) }
        return QuerySnapshot(query: self, documents: snapshots, changes: snapshots.enumerated().map { i, d in
            DocumentChange(type: .added, document: d, oldIndex: UInt(NSNotFound), newIndex: UInt(i))
        })
    }

    public func getDocuments(source: FirestoreSource = .default, completion: @escaping @Sendable (QuerySnapshot?, (any Error)?) -> Void) {
        Task {
            do { completion(try await getDocuments(source: source), nil) } catch { completion(nil, error) }
        }
    }

    // MARK: - Listening

    public func addSnapshotListener(_ listener: @escaping @Sendable (QuerySnapshot?, (any Error)?) -> Void) -> any ListenerRegistration {
        addSnapshotListener(includeMetadataChanges: false, listener: listener)
    }

    public func addSnapshotListener(
        includeMetadataChanges: Bool, listener: @escaping @Sendable (QuerySnapshot?, (any Error)?) -> Void
    ) -> any ListenerRegistration {
        Listener.start(snapshots(includeMetadataChanges: includeMetadataChanges), listener)
    }

    /// The results now and after every change, with the changes, as an async sequence.
    public func snapshots(includeMetadataChanges: Bool = false) -> AsyncThrowingStream<QuerySnapshot, any Error> {
        let query: FlintQuery.Query
        let original: FlintQuery.Query?
        do { (query, original) = try modelQueries() } catch { return AsyncThrowingStream { $0.finish(throwing: error) } }
        let db = firestore
        let stream = db.backend.snapshots(.query(query), order: original, auth: db.auth)
        return Listener.map(stream) { view in QuerySnapshot(self, view) }
    }

    // MARK: - Aggregation

    /// The number of matching documents, computed by the server.
    public var count: AggregateQuery { AggregateQuery(self, [.count()]) }

    public func aggregate(_ fields: [AggregateField]) -> AggregateQuery { AggregateQuery(self, fields) }
}

/// A filter for `whereFilter`, including disjunctions.
public final class Filter: @unchecked Sendable {
    enum Field {
        case field(String)
        case path(FieldPath)
    }

    enum Kind {
        case field(Field, FieldFilter.Operator, UncheckedBox<Any>)
        case composite(CompositeFilter.Operator, [Filter])
    }

    let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    public static func whereField(_ field: String, isEqualTo value: Any) -> Filter { make(.field(field), .equal, value) }
    public static func whereField(_ field: String, isNotEqualTo value: Any) -> Filter { make(.field(field), .notEqual, value) }
    public static func whereField(_ field: String, isLessThan value: Any) -> Filter { make(.field(field), .lessThan, value) }
    public static func whereField(_ field: String, isLessThanOrEqualTo value: Any) -> Filter { make(.field(field), .lessThanOrEqual, value) }
    public static func whereField(_ field: String, isGreaterThan value: Any) -> Filter { make(.field(field), .greaterThan, value) }
    public static func whereField(_ field: String, isGreaterThanOrEqualTo value: Any) -> Filter {
        make(.field(field), .greaterThanOrEqual, value)
    }
    public static func whereField(_ field: String, arrayContains value: Any) -> Filter { make(.field(field), .arrayContains, value) }
    public static func whereField(_ field: String, arrayContainsAny values: [Any]) -> Filter { make(.field(field), .arrayContainsAny, values) }
    public static func whereField(_ field: String, in values: [Any]) -> Filter { make(.field(field), .in, values) }
    public static func whereField(_ field: String, notIn values: [Any]) -> Filter { make(.field(field), .notIn, values) }
    public static func whereField(_ path: FieldPath, isEqualTo value: Any) -> Filter { make(.path(path), .equal, value) }
    public static func whereField(_ path: FieldPath, isNotEqualTo value: Any) -> Filter { make(.path(path), .notEqual, value) }
    public static func whereField(_ path: FieldPath, in values: [Any]) -> Filter { make(.path(path), .in, values) }
    public static func whereField(_ path: FieldPath, arrayContains value: Any) -> Filter { make(.path(path), .arrayContains, value) }

    public static func orFilter(_ filters: [Filter]) -> Filter { Filter(.composite(.or, filters)) }
    public static func andFilter(_ filters: [Filter]) -> Filter { Filter(.composite(.and, filters)) }

    private static func make(_ field: Field, _ op: FieldFilter.Operator, _ value: Any) -> Filter {
        Filter(.field(field, op, UncheckedBox(value)))
    }

    func model(in s: Query.State, database: DatabaseID) throws(FirestoreErrorCode) -> FlintQuery.Filter {
        switch kind {
        case .composite(let op, let filters):
            return .composite(CompositeFilter(op, try filters.map { f throws(FirestoreErrorCode) in try f.model(in: s, database: database) }))
        case .field(let field, let op, let box):
            let path: FlintModel.FieldPath
            switch field {
            case .field(let dotted): path = try FieldPath(dotted: dotted).model()
            case .path(let p): path = try p.model()
            }
            let raw = box.value
            let isList = [.in, .notIn, .arrayContainsAny].contains(op)
            if isList {
                guard let list = raw as? [Any], !list.isEmpty else {
                    throw invalidArgument("Invalid Query. A non-empty array is required for '\(Self.name(op))' filters.")
                }
            }
            let value: Value
            if path.isDocumentID {
                if op == .arrayContains || op == .arrayContainsAny {
                    throw invalidArgument("Invalid query. You can't perform '\(Self.name(op))' queries on FieldPath.documentID().")
                }
                if isList {
                    value = .array(try (raw as! [Any]).map { v throws(FirestoreErrorCode) in try Query.documentIDValue(v, s, database) })
                } else {
                    value = try Query.documentIDValue(raw, s, database)
                }
            } else {
                value = try ValueBridge.plainValue(raw, database: database)
            }
            // Null and NaN equality are unary filters on the wire, as the SDKs send them.
            if op == .equal || op == .notEqual {
                if case .null = value { return .unary(UnaryFilter(path, op == .equal ? .isNull : .isNotNull)) }
                if case .double(let d) = value, d.isNaN { return .unary(UnaryFilter(path, op == .equal ? .isNaN : .isNotNaN)) }
            }
            return .field(FieldFilter(path, op, value))
        }
    }

    static func name(_ op: FieldFilter.Operator) -> String {
        switch op {
        case .in: "in"
        case .notIn: "not-in"
        case .arrayContainsAny: "array-contains-any"
        case .arrayContains: "array-contains"
        default: op.rawValue
        }
    }
}

/// One aggregation of `Query.aggregate`.
public struct AggregateField: Sendable, Hashable {
    enum Kind: Hashable {
        case count
        case sum(String)
        case average(String)
    }

    let kind: Kind

    public static func count() -> AggregateField { AggregateField(kind: .count) }
    public static func sum(_ field: String) -> AggregateField { AggregateField(kind: .sum(field)) }
    public static func average(_ field: String) -> AggregateField { AggregateField(kind: .average(field)) }
    public static func sum(_ path: FieldPath) -> AggregateField { AggregateField(kind: .sum(path.segments.joined(separator: "."))) }
    public static func average(_ path: FieldPath) -> AggregateField { AggregateField(kind: .average(path.segments.joined(separator: "."))) }

    var alias: String {
        switch kind {
        case .count: "count"
        case .sum(let f): "sum_" + f
        case .average(let f): "average_" + f
        }
    }
}

public enum AggregateSource: Sendable { case server }

/// Aggregations computed by the server over a query's documents.
public final class AggregateQuery: Sendable {
    public let query: Query
    let fields: [AggregateField]

    init(_ query: Query, _ fields: [AggregateField]) {
        self.query = query
        self.fields = fields
    }

    public func getAggregation(source: AggregateSource) async throws -> AggregateQuerySnapshot {
        let (q, reversed) = try query.modelQuery()
        _ = reversed
        let aggregations = try fields.map { f throws(FirestoreErrorCode) -> Aggregation in
            switch f.kind {
            case .count: return Aggregation(alias: f.alias, .count(upTo: nil))
            case .sum(let p): return Aggregation(alias: f.alias, .sum(try FieldPath(dotted: p).model()))
            case .average(let p): return Aggregation(alias: f.alias, .average(try FieldPath(dotted: p).model()))
            }
        }
        let db = query.firestore
        let values = try await firestoreCall { try await db.backend.aggregate(q, aggregations, auth: db.auth) }
        return AggregateQuerySnapshot(query: self, values: values)
    }

    public func getAggregation(source: AggregateSource, completion: @escaping @Sendable (AggregateQuerySnapshot?, (any Error)?) -> Void) {
        Task {
            do { completion(try await getAggregation(source: source), nil) } catch { completion(nil, error) }
        }
    }
}

public final class AggregateQuerySnapshot: Sendable {
    public let query: AggregateQuery
    let values: [String: Value]

    init(query: AggregateQuery, values: [String: Value]) {
        self.query = query
        self.values = values
    }

    /// The count, when it was asked for.
    public var count: NSNumber {
        if case .integer(let n)? = values["count"] { return NSNumber(value: n) }
        return NSNumber(value: 0)
    }

    /// An aggregation's result: an `NSNumber`, or `NSNull` (the average of nothing).
    public func get(_ field: AggregateField) -> Any? {
        guard let v = values[field.alias] else { return nil }
        switch v {
        case .integer(let n): return NSNumber(value: n)
        case .double(let d): return NSNumber(value: d)
        default: return NSNull()
        }
    }
}
