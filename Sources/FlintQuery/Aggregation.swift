import FlintModel

/// One aggregation of an aggregation query.
public struct Aggregation: Sendable {
    public enum Kind: Sendable {
        /// Counts matching documents, stopping at `upTo` when given (so 0 counts none, as on
        /// the reference over REST and gRPC).
        case count(upTo: Int64?)
        case sum(FieldPath)
        case average(FieldPath)
    }

    /// The result's name; empty gets `field_N`, N counting the unnamed aggregations.
    public var alias: String
    public var kind: Kind

    public init(alias: String = "", _ kind: Kind) {
        self.alias = alias
        self.kind = kind
    }

    /// The field a sum or average reads; nil for a count.
    public var field: FieldPath? {
        switch kind {
        case .count: nil
        case .sum(let path), .average(let path): path
        }
    }
}

/// Computes aggregations over a query's documents with Firestore's number rules: non-numeric
/// values are skipped; integers add exactly, and the sum stays an integer while it fits in
/// 64 bits; with any double the sum is a double: the integers' total rounded to a double, added
/// exactly to the doubles' exact total, rounded once (probed on the reference: `1 + 0.1 + 2 +
/// 0.2` is 3.3, yet `9007199254740993 + 0.5` is 9007199254740992); the average is that sum
/// divided by how many numbers there were, or null when there were none.
public enum Aggregator {
    public static let maxAggregations = 5

    /// The checks the reference makes as it reads each aggregation, before the query: reserved
    /// names in the aggregated field, then a count's `up_to`.
    public static func checkFirst(_ aggregations: [Aggregation]) throws(FlintError) {
        for a in aggregations { try checkFirst(a) }
    }

    /// The same for one aggregation, which `Wire.aggregations` checks as it reads it.
    public static func checkFirst(_ a: Aggregation) throws(FlintError) {
        if let path = a.field { try Validation.checkNamedPath(path) }
        if case .count(let upTo?) = a.kind, upTo < 0 {
            throw .invalidArgument("The `up_to` value in a COUNT aggregation must be greater than or equal to zero.")
        }
    }

    /// Checks the list (after `checkFirst` and the query's `NormalizedQuery.checkShape`, as
    /// the reference orders them) and returns the alias of each entry.
    public static func aliases(_ aggregations: [Aggregation], of query: Query) throws(FlintError) -> [String] {
        if aggregations.isEmpty { throw .invalidArgument("Aggregations can not be empty.") }
        if aggregations.count > maxAggregations {
            throw .invalidArgument("Aggregation queries can have at most \(maxAggregations) aggregations.")
        }
        var names: [String] = []
        var unnamed = 0
        for a in aggregations {
            // Numbered among the unnamed ones, as the reference numbers them.
            if a.alias.isEmpty { unnamed += 1 }
            let name = a.alias.isEmpty ? "field_\(unnamed)" : a.alias
            if Validation.isReserved(name) { throw .invalidArgument("The property.name \"\(name)\" is reserved.") }
            if name.utf8.count > Limits.maxFieldNameBytes {
                throw .invalidArgument("The property.name is longer than \(Limits.maxFieldNameBytes) bytes.")
            }
            names.append(name)
        }
        // A projection is refused before `__name__` inside an aggregated path, as the reference
        // refuses them.
        try checkProjection(of: query, against: aggregations)
        for a in aggregations {
            if let path = a.field { try Validation.checkNameAlone(path) }
        }
        var seen = Set<UTF8Key>()
        for (a, name) in zip(aggregations, names) {
            if !seen.insert(UTF8Key(name)).inserted {
                throw .invalidArgument("Aggregation aliases contain duplicate alias: \(name).")
            }
            if let path = a.field, path.isDocumentID {
                throw .invalidArgument("Aggregations are not supported for the property: __key__")
            }
        }
        return names
    }

    /// Sums and averages cannot run over a query with a projection (`select`), as on the
    /// reference; a count can. The reference names the first summed field the projection lacks,
    /// or the projection's being keys only, before refusing the projection itself.
    static func checkProjection(of query: Query, against aggregations: [Aggregation]) throws(FlintError) {
        guard let projection = query.projection else { return }
        let fields = aggregations.compactMap(\.field)
        guard !fields.isEmpty else { return }
        let keysOnly = projection.allSatisfy(\.isDocumentID)
        for field in fields where !field.isDocumentID {
            if keysOnly {
                throw .invalidArgument("Aggregation over non-key properties is not supported for base query that only returns keys.")
            }
            if !projection.contains(where: { $0.isPrefix(of: field) }) {
                // Segments joined plainly, unquoted, as the reference prints them, and
                // `__name__` by the reference's own name for it.
                let name = field.segments.map { $0 == FieldPath.documentID.segments[0] ? "__key__" : $0 }.joined(separator: ".")
                throw .invalidArgument("The aggregation property \(name) is not present in the base query's property mask.")
            }
        }
        throw .invalidArgument("Cannot apply property masks when aggregation fields are present.")
    }

    /// The aggregated values, in the order of `aggregations`, over `documents`' fields.
    public static func aggregate(_ aggregations: [Aggregation], over documents: [MapValue]) -> [Value] {
        aggregations.map { a in
            switch a.kind {
            case .count(let upTo):
                let bound = upTo.map { Int($0) } ?? Int.max
                return .integer(Int64(min(documents.count, bound)))
            case .sum(let path):
                return total(documents.compactMap { $0.value(at: path) }).sum
            case .average(let path):
                let (sum, count) = total(documents.compactMap { $0.value(at: path) })
                guard count > 0 else { return .null }
                if case .integer(let i) = sum { return .double(Double(i) / Double(count)) }
                if case .double(let d) = sum { return .double(d / Double(count)) }
                return .null
            }
        }
    }

    /// The sum of the numbers among `values`, and how many there were.
    static func total(_ values: [Value]) -> (sum: Value, count: Int) {
        var integers: Int128 = 0
        var doubles: ExactSum?
        var count = 0
        for v in values {
            switch v {
            case .integer(let i): integers += Int128(i)
            case .double(let d): doubles = doubles ?? ExactSum(); doubles?.add(d)
            default: continue
            }
            count += 1
        }
        guard let doubles else {
            if let exact = Int64(exactly: integers) { return (.integer(exact), count) }
            return (.double(ExactSum.rounded(integers)), count)
        }
        // The two totals meet as doubles, each rounded first, as on the reference: 1 + 2^53 + 0.5
        // is 2^53 there (2^53 + 0.5 rounds to 2^53, and 2^53 + 1 to 2^53), not 2^53 + 2.
        return (.double(doubles.rounded() + ExactSum.rounded(integers)), count)
    }
}
