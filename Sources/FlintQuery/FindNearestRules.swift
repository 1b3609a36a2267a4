import FlintModel

/// Nearest-neighbour search, as the reference emulator does it: only vectors of the query's
/// dimension take part, ties go by document name, and for dot product larger is nearer.
public enum FindNearestRules {
    static let maxLimit = 1000

    static func validate(_ f: FindNearest) throws(FlintError) {
        if f.limit <= 0 || f.limit > maxLimit {
            throw .invalidArgument("FindNearest.limit must be a positive integer of no more than \(maxLimit)")
        }
        if f.queryVector.isEmpty { throw .invalidArgument("Cannot have a zero length vector.") }
        try Limits.checkDimensions(f.queryVector.count)
        // The distance field is one field name (`a.__x__` is a name, and let be, as on the reference).
        if let name = f.distanceResultField, Validation.isReserved(name) {
            throw .invalidArgument("The distanceResultField.property.name \"\(name)\" is reserved.")
        }
    }

    /// The distance between a document's vector and the query's, or nil when not comparable.
    public static func distance(_ v: [Double], _ q: FindNearest) -> Double? {
        guard v.count == q.queryVector.count else { return nil }
        switch q.measure {
        case .euclidean:
            var sum = 0.0
            for (a, b) in zip(v, q.queryVector) { sum += (a - b) * (a - b) }
            return sum.squareRoot()
        case .dotProduct:
            var sum = 0.0
            for (a, b) in zip(v, q.queryVector) { sum += a * b }
            return sum
        case .cosine:
            var dot = 0.0
            var na = 0.0
            var nb = 0.0
            for (a, b) in zip(v, q.queryVector) {
                dot += a * b
                na += a * a
                nb += b * b
            }
            guard na > 0, nb > 0 else { return .nan }  // undefined: sorts after every real distance
            return 1 - dot / (na.squareRoot() * nb.squareRoot())
        }
    }

    /// Whether `a` is nearer than `b` (NaN last).
    public static func nearer(_ a: Double, _ b: Double, _ measure: FindNearest.DistanceMeasure) -> Bool? {
        if a.isNaN || b.isNaN { return a.isNaN == b.isNaN ? nil : !a.isNaN }
        if a == b { return nil }
        return measure == .dotProduct ? a > b : a < b
    }

    public static func withinThreshold(_ d: Double, _ q: FindNearest) -> Bool {
        guard let t = q.distanceThreshold else { return true }
        if d.isNaN { return false }
        return q.measure == .dotProduct ? d >= t : d <= t
    }
}

extension NormalizedQuery {
    /// Find-nearest does not combine with a query limit, offset or cursors.
    static func checkFindNearestCombination(_ q: Query) throws(FlintError) {
        guard q.findNearest != nil else { return }
        if q.limit != nil { throw .invalidArgument("A query limit cannot be used with FindNearest") }
        if q.offset != 0 { throw .invalidArgument("A query offset cannot be used with FindNearest") }
        if q.startAt != nil || q.endAt != nil { throw .invalidArgument("Query cursors cannot be used with FindNearest") }
    }
}
