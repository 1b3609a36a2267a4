import FlintModel

/// One aggregation of an aggregation query.
public struct Aggregation: Sendable {
    public enum Kind: Sendable {
        /// Counts matching documents, stopping at `upTo` when given (0 means no bound).
        case count(upTo: Int64?)
        case sum(FieldPath)
        case average(FieldPath)
    }

    /// The result's name; empty gets `field_N` by position, as Firestore does.
    public var alias: String
    public var kind: Kind

    public init(alias: String = "", _ kind: Kind) {
        self.alias = alias
        self.kind = kind
    }
}

/// Computes aggregations over a query's documents with Firestore's number rules: sums of
/// integers stay integers until they overflow, then become doubles; a double makes the sum a
/// double; non-numeric values are skipped; the average of nothing is null.
public enum Aggregator {
    public static let maxAggregations = 5

    /// Checks the list and returns the alias of each entry.
    public static func aliases(_ aggregations: [Aggregation]) throws(FlintError) -> [String] {
        if aggregations.isEmpty { throw .invalidArgument("Aggregations can not be empty.") }
        if aggregations.count > maxAggregations {
            throw .invalidArgument("Aggregation queries can have at most \(maxAggregations) aggregations.")
        }
        var names: [String] = []
        var seen = Set<UTF8Key>()
        for (i, a) in aggregations.enumerated() {
            let name = a.alias.isEmpty ? "field_\(i + 1)" : a.alias
            if Validation.isReserved(name) { throw .invalidArgument("The property.name \"\(name)\" is reserved.") }
            if name.utf8.count > Limits.maxFieldNameBytes {
                throw .invalidArgument("The property.name is longer than \(Limits.maxFieldNameBytes) bytes.")
            }
            if !seen.insert(UTF8Key(name)).inserted {
                throw .invalidArgument("Aggregation aliases contain duplicate alias: \(name).")
            }
            if case .count(let upTo?) = a.kind, upTo < 0 {
                throw .invalidArgument("The `up_to` value in a COUNT aggregation must be greater than or equal to zero.")
            }
            names.append(name)
        }
        return names
    }

    /// The aggregated values, in the order of `aggregations`, over `documents`' fields.
    public static func aggregate(_ aggregations: [Aggregation], over documents: [MapValue]) -> [Value] {
        aggregations.map { a in
            switch a.kind {
            case .count(let upTo):
                let bound = (upTo ?? 0) > 0 ? Int(upTo ?? 0) : Int.max
                return .integer(Int64(min(documents.count, bound)))
            case .sum(let path):
                return sum(documents.compactMap { $0.value(at: path) })
            case .average(let path):
                var total = 0.0
                var n = 0
                for case let v? in documents.map({ $0.value(at: path) }) {
                    switch v {
                    case .integer(let i): total += Double(i); n += 1
                    case .double(let d): total += d; n += 1
                    default: continue
                    }
                }
                return n == 0 ? .null : .double(total / Double(n))
            }
        }
    }

    static func sum(_ values: [Value]) -> Value {
        var integer: Int64 = 0
        var double = 0.0
        var isDouble = false
        for v in values {
            switch v {
            case .integer(let i):
                if isDouble {
                    double += Double(i)
                } else {
                    let (s, overflow) = integer.addingReportingOverflow(i)
                    if overflow {
                        isDouble = true
                        double = Double(integer) + Double(i)
                    } else {
                        integer = s
                    }
                }
            case .double(let d):
                if !isDouble {
                    isDouble = true
                    double = Double(integer)
                }
                double += d
            default: continue
            }
        }
        return isDouble ? .double(double) : .integer(integer)
    }
}
