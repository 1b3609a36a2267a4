import FlintModel

/// A structured query in Flint's terms: where the documents come from, which ones match, in
/// what order, and which part of the result to return.
public struct Query: Sendable {
    /// The document holding the collection, or the root.
    public var parent: ResourcePath
    /// The collection's id; nil reads every collection, as the server SDKs' recursive deletes
    /// do (a "kindless" query, limited to `__name__` filters and ascending `__name__` order).
    public var collectionID: String?
    /// A collection group: every collection with this id (or, kindless, every document) at
    /// any depth below `parent`.
    public var allDescendants: Bool
    /// A group below a document reads a range of names: it may filter and order on `__name__`
    /// alone, and names no single document to the rules.
    public var isGroupBelowDocument: Bool { allDescendants && !parent.isEmpty }
    public var filter: Filter?
    /// The orders the client asked for; `NormalizedQuery` adds the implicit ones.
    public var orderBy: [Ordering]
    public var startAt: Cursor?
    public var endAt: Cursor?
    public var offset: Int
    public var limit: Int?
    /// Fields to return; nil returns whole documents.
    public var projection: [FieldPath]?
    public var findNearest: FindNearest?

    public init(
        parent: ResourcePath = .root, collectionID: String?, allDescendants: Bool = false,
        filter: Filter? = nil, orderBy: [Ordering] = [], startAt: Cursor? = nil, endAt: Cursor? = nil,
        offset: Int = 0, limit: Int? = nil, projection: [FieldPath]? = nil, findNearest: FindNearest? = nil
    ) {
        self.parent = parent
        self.collectionID = collectionID
        self.allDescendants = allDescendants
        self.filter = filter
        self.orderBy = orderBy
        self.startAt = startAt
        self.endAt = endAt
        self.offset = offset
        self.limit = limit
        self.projection = projection
        self.findNearest = findNearest
    }
}

/// A position in a query's order: values for its leading orderings.
public struct Cursor: Sendable {
    public var values: [Value]
    /// For a start cursor: include documents equal to the position (startAt) or not
    /// (startAfter). For an end cursor: stop before them (endBefore) or include them (endAt).
    public var before: Bool

    public init(values: [Value], before: Bool) {
        self.values = values
        self.before = before
    }
}

/// A query filter; a closed set, so every switch over it is exhaustive.
public indirect enum Filter: Sendable {
    case field(FieldFilter)
    case unary(UnaryFilter)
    case composite(CompositeFilter)
}

public struct FieldFilter: Sendable {
    public enum Operator: String, Sendable, CaseIterable {
        case lessThan = "LESS_THAN"
        case lessThanOrEqual = "LESS_THAN_OR_EQUAL"
        case greaterThan = "GREATER_THAN"
        case greaterThanOrEqual = "GREATER_THAN_OR_EQUAL"
        case equal = "EQUAL"
        case notEqual = "NOT_EQUAL"
        case arrayContains = "ARRAY_CONTAINS"
        case `in` = "IN"
        case arrayContainsAny = "ARRAY_CONTAINS_ANY"
        case notIn = "NOT_IN"
    }

    public var field: FieldPath
    public var op: Operator
    public var value: Value

    public init(_ field: FieldPath, _ op: Operator, _ value: Value) {
        self.field = field
        self.op = op
        self.value = value
    }
}

public struct UnaryFilter: Sendable {
    public enum Operator: String, Sendable, CaseIterable {
        case isNaN = "IS_NAN"
        case isNull = "IS_NULL"
        case isNotNaN = "IS_NOT_NAN"
        case isNotNull = "IS_NOT_NULL"
    }

    public var field: FieldPath
    public var op: Operator

    public init(_ field: FieldPath, _ op: Operator) {
        self.field = field
        self.op = op
    }
}

public struct CompositeFilter: Sendable {
    public enum Operator: String, Sendable {
        case and = "AND"
        case or = "OR"
    }

    public var op: Operator
    public var filters: [Filter]

    public init(_ op: Operator, _ filters: [Filter]) {
        self.op = op
        self.filters = filters
    }
}

/// Nearest-neighbour search over a vector field.
public struct FindNearest: Sendable {
    public enum DistanceMeasure: String, Sendable, CaseIterable {
        case euclidean = "EUCLIDEAN"
        case cosine = "COSINE"
        case dotProduct = "DOT_PRODUCT"
    }

    public var field: FieldPath
    public var queryVector: [Double]
    public var measure: DistanceMeasure
    public var limit: Int
    /// The top-level field each returned document gets the distance in, if any. A name, not a
    /// path: `a.b` is one field spelled so.
    public var distanceResultField: String?
    public var distanceThreshold: Double?

    public init(
        field: FieldPath, queryVector: [Double], measure: DistanceMeasure, limit: Int,
        distanceResultField: String? = nil, distanceThreshold: Double? = nil
    ) {
        self.field = field
        self.queryVector = queryVector
        self.measure = measure
        self.limit = limit
        self.distanceResultField = distanceResultField
        self.distanceThreshold = distanceThreshold
    }
}
