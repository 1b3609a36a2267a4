import FlintModel

/// Reserved names in the field paths a query names, refused before anything else about the
/// query is checked, as on the reference. (`__name__` inside a longer path is refused later,
/// with the clause that holds it.)
enum QueryFieldNames {
    /// `__key__` or another reserved segment anywhere: in aggregated fields, filters, the
    /// projection, the order and the nearest-neighbour vector field, in that order.
    static func checkReserved(_ query: Query, aggregations: [Aggregation] = []) throws(FlintError) {
        let aggregated = aggregations.compactMap(\.field)
        let filtered = query.filter.map(FilterRules.fields) ?? []
        let named = aggregated + filtered + (query.projection ?? []) + query.orderBy.map(\.field)
            + (query.findNearest.map { [$0.field] } ?? [])
        for path in named { try Validation.checkNamedPath(path) }
    }
}
