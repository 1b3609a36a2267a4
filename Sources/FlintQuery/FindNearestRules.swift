import FlintModel

/// Nearest-neighbour search, as the reference emulator does it: only vectors of the query's
/// dimension take part, ties go by document name, and for dot product larger is nearer.
public enum FindNearestRules {
    static let maxLimit = 1000

    /// Checks a nearest-neighbour query and what it is combined with, in the reference's order.
    static func validate(_ f: FindNearest, in q: Query) throws(FlintError) {
        if f.limit <= 0 || f.limit > maxLimit {
            throw .invalidArgument("FindNearest.limit must be a positive integer of no more than \(maxLimit)")
        }
        if f.queryVector.isEmpty { throw .invalidArgument("Cannot have a zero length vector.") }
        try Limits.checkDimensions(f.queryVector.count)
        // The distance field is one field name (`a.__x__` is a name, and let be, as on the reference).
        if let name = f.distanceResultField, Validation.isReserved(name) {
            throw .invalidArgument("The distanceResultField.property.name \"\(name)\" is reserved.")
        }
        // Find-nearest does not combine with a query limit, offset or cursors.
        if q.limit != nil { throw .invalidArgument("A query limit cannot be used with FindNearest") }
        if q.offset != 0 { throw .invalidArgument("A query offset cannot be used with FindNearest") }
        if q.startAt != nil || q.endAt != nil { throw .invalidArgument("Query cursors cannot be used with FindNearest") }
        if let t = f.distanceThreshold, !t.isFinite { throw .invalidArgument("distanceThreshold must be a finite number.") }
    }

    /// The distance between a document's vector and the query's, or nil when not comparable.
    /// Computed with the reference emulator's arithmetic, so a distance field or a threshold on
    /// the edge agrees to the last bit: a vector is at cosine distance exactly 0 from itself, and
    /// a zero vector at NaN (which sorts after every real distance).
    public static func distance(_ v: [Double], _ q: FindNearest) -> Double? {
        guard v.count == q.queryVector.count else { return nil }
        switch q.measure {
        case .euclidean:
            return squaredDistance(v, q.queryVector).squareRoot()
        case .dotProduct:
            return dot(v, q.queryVector)
        case .cosine:
            return 1 - dot(v, q.queryVector) / (dot(v, v) * dot(q.queryVector, q.queryVector)).squareRoot()
        }
    }

    // Both sums run in four lanes over the longest prefix whose length is a multiple of four,
    // each step fused (one rounding for a product and its addition), and add the lanes in order
    // before taking the rest one at a time. Measured against the reference: the rest is fused
    // for the squared distance and rounded twice for the dot product.

    static func dot(_ a: [Double], _ b: [Double]) -> Double {
        let whole = a.count - a.count % 4
        var lanes = (0.0, 0.0, 0.0, 0.0)
        var i = 0
        while i < whole {
            lanes.0.addProduct(a[i], b[i])
            lanes.1.addProduct(a[i + 1], b[i + 1])
            lanes.2.addProduct(a[i + 2], b[i + 2])
            lanes.3.addProduct(a[i + 3], b[i + 3])
            i += 4
        }
        var sum = lanes.0 + lanes.1 + lanes.2 + lanes.3
        while i < a.count {
            sum += a[i] * b[i]
            i += 1
        }
        return sum
    }

    static func squaredDistance(_ a: [Double], _ b: [Double]) -> Double {
        let whole = a.count - a.count % 4
        var lanes = (0.0, 0.0, 0.0, 0.0)
        var i = 0
        while i < whole {
            let d = (a[i] - b[i], a[i + 1] - b[i + 1], a[i + 2] - b[i + 2], a[i + 3] - b[i + 3])
            lanes.0.addProduct(d.0, d.0)
            lanes.1.addProduct(d.1, d.1)
            lanes.2.addProduct(d.2, d.2)
            lanes.3.addProduct(d.3, d.3)
            i += 4
        }
        var sum = lanes.0 + lanes.1 + lanes.2 + lanes.3
        while i < a.count {
            let d = a[i] - b[i]
            sum.addProduct(d, d)
            i += 1
        }
        return sum
    }

    /// Whether `a` is nearer than `b`, nil for a tie. NaN counts as larger than every number, as
    /// on the reference: last by distance, first by dot product.
    public static func nearer(_ a: Double, _ b: Double, _ measure: FindNearest.DistanceMeasure) -> Bool? {
        if a.isNaN || b.isNaN {
            guard a.isNaN != b.isNaN else { return nil }
            return (measure == .dotProduct) == a.isNaN
        }
        if a == b { return nil }
        return measure == .dotProduct ? a > b : a < b
    }

    /// Whether a distance is within the query's threshold; NaN, being larger than any, passes a
    /// dot product's minimum and fails a distance's maximum.
    public static func withinThreshold(_ d: Double, _ q: FindNearest) -> Bool {
        guard let t = q.distanceThreshold else { return true }
        return q.measure == .dotProduct ? d.isNaN || d >= t : d <= t
    }
}
