import FlintModel

/// Nearest-neighbour search, as the reference emulator does it: only vectors of the query's
/// dimension take part, ties go by document name, and for dot product larger is nearer.
public enum FindNearestRules {
    static let maxLimit = 1000

    /// Checks a nearest-neighbour query and what it is combined with, in the reference's order:
    /// the query vector as it is read, the limit, the vector field's names, then the rest.
    static func validate(_ f: FindNearest, in q: Query) throws(FlintError) {
        try checkVector(dimensions: f.queryVector.count)
        try checkLimit(f.limit)
        try Validation.checkNamedPath(f.field)
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

    /// The query vector, checked as it is read.
    static func checkVector(dimensions: Int) throws(FlintError) {
        if dimensions == 0 { throw .invalidArgument("Cannot have a zero length vector.") }
        try Limits.checkDimensions(dimensions)
    }

    static func checkLimit(_ limit: Int) throws(FlintError) {
        if limit <= 0 || limit > maxLimit {
            throw .invalidArgument("FindNearest.limit must be a positive integer of no more than \(maxLimit)")
        }
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

    static func dot(_ a: [Double], _ b: [Double]) -> Double {
        sumOfProducts(a.count, fusedRest: false) { (a[$0], b[$0]) }
    }

    static func squaredDistance(_ a: [Double], _ b: [Double]) -> Double {
        sumOfProducts(a.count, fusedRest: true) { i in
            let d = a[i] - b[i]
            return (d, d)
        }
    }

    /// Σ xᵢ·yᵢ over the `count` pairs `pair` gives, summed as the reference sums (measured
    /// against it): four lanes over the longest prefix whose length is a multiple of four, each
    /// step fused (one rounding for a product and its addition), the lanes added in order, then
    /// the rest one at a time, fused for a squared distance and rounded twice for a dot product.
    @inline(__always)
    private static func sumOfProducts(_ count: Int, fusedRest: Bool, _ pair: (Int) -> (Double, Double)) -> Double {
        var lanes = (0.0, 0.0, 0.0, 0.0)
        var i = 0
        while i + 4 <= count {
            let (x0, y0) = pair(i), (x1, y1) = pair(i + 1), (x2, y2) = pair(i + 2), (x3, y3) = pair(i + 3)
            lanes.0.addProduct(x0, y0)
            lanes.1.addProduct(x1, y1)
            lanes.2.addProduct(x2, y2)
            lanes.3.addProduct(x3, y3)
            i += 4
        }
        var sum = lanes.0 + lanes.1 + lanes.2 + lanes.3
        while i < count {
            let (x, y) = pair(i)
            if fusedRest { sum.addProduct(x, y) } else { sum += x * y }
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
