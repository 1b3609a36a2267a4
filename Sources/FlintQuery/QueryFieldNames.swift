import FlintModel

/// Firestore's reserved names in the field paths a query names, refused in the reference
/// emulator's words and order. `__name__` alone is the document's name, which the reference
/// calls `__key__`; every other `__…__` segment is reserved, and so is `__name__` inside a
/// longer path.
enum QueryFieldNames {
    /// The first pass, before anything else about the query is checked: `__key__` or another
    /// reserved segment anywhere, in aggregated fields, filters, the projection, the order and
    /// the nearest-neighbour vector field, in that order.
    static func checkReserved(_ query: Query, aggregations: [Aggregation] = []) throws(FlintError) {
        let aggregated = aggregations.compactMap { a -> FieldPath? in
            switch a.kind {
            case .count: nil
            case .sum(let path), .average(let path): path
            }
        }
        let filtered = query.filter.map(FilterRules.fields) ?? []
        let named = aggregated + filtered + (query.projection ?? []) + query.orderBy.map(\.field)
            + (query.findNearest.map { [$0.field] } ?? [])
        for path in named { try checkReserved(path) }
    }

    static func checkReserved(_ path: FieldPath) throws(FlintError) {
        if path.segments.contains("__key__") {
            throw .invalidArgument("Invalid property path member name \"__key__\".")
        }
        guard let first = path.segments.firstIndex(where: { Validation.isReserved($0) && $0 != "__name__" }) else { return }
        // The reference names the path from that segment on, in its own spelling of the name.
        let named = path.segments[first...].map { $0 == "__name__" ? "__key__" : $0 }
        throw .invalidArgument("Invalid reserved name in field path \(named.joined(separator: "."))")
    }

    /// `__name__` is a whole path or nothing: refused inside a longer one.
    static func checkNameAlone(_ path: FieldPath) throws(FlintError) {
        if path.segments.count > 1 && path.segments.contains("__name__") {
            throw .invalidArgument("the name __key__ is reserved")
        }
    }
}
