import FlintTesting
import Foundation
import Testing

/// Random counts, sums and averages over random filters, orders, cursors, limits and offsets,
/// sent as the same REST JSON to the reference and to a Flint server: each must end with the
/// same status and message, or the same aggregate values. The values are integers, strings and
/// nulls, whose sums the reference gives the same every time (it adds doubles in no fixed order).
struct RandomAggregationDifferentialTests {
    static let fields = ["x", "y", "g"]

    static func pick<T>(_ items: [T], _ rng: inout SeededGenerator) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }
    static func int(_ i: Int) -> String { #"{"integerValue": "\#(i)"}"# }

    /// Twelve documents, each field an integer from 0 to 4 most of the time, else a string, a
    /// null, or missing.
    static func document(_ rng: inout SeededGenerator) -> String {
        var fields: [String] = []
        for field in Self.fields {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<7: fields.append(#""\#(field)": \#(int(Int.random(in: 0...4, using: &rng)))"#)
            case 7: fields.append(#""\#(field)": {"stringValue": "s"}"#)
            case 8: fields.append(#""\#(field)": {"nullValue": null}"#)
            default: break
            }
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    static func query(_ rng: inout SeededGenerator, documents: String) -> String {
        var parts = [#""from": [{"collectionId": "c"}]"#]
        let filters = (0..<Int.random(in: 0...2, using: &rng)).map { _ in
            let op = pick(["EQUAL", "GREATER_THAN", "LESS_THAN_OR_EQUAL", "NOT_EQUAL", "IN"], &rng)
            let value = op == "IN" ? #"{"arrayValue": {"values": [\#(int(1)), \#(int(3))]}}"# : int(Int.random(in: 0...4, using: &rng))
            return #"{"fieldFilter": {"field": {"fieldPath": "\#(pick(fields, &rng))"}, "op": "\#(op)", "value": \#(value)}}"#
        }
        if filters.count == 1 {
            parts.append(#""where": \#(filters[0])"#)
        } else if !filters.isEmpty {
            parts.append(#""where": {"compositeFilter": {"op": "\#(pick(["AND", "OR"], &rng))", "filters": [\#(filters.joined(separator: ", "))]}}"#)
        }
        if Bool.random(using: &rng) {
            let field = pick(fields + ["__name__"], &rng)
            parts.append(#""orderBy": [{"field": {"fieldPath": "\#(field)"}, "direction": "\#(pick(["ASCENDING", "DESCENDING"], &rng))"}]"#)
            if Int.random(in: 0..<3, using: &rng) == 0 {
                let value = field == "__name__" ? #"{"referenceValue": "\#(documents)/c/d05"}"# : int(Int.random(in: 0...4, using: &rng))
                parts.append(#""startAt": {"values": [\#(value)], "before": \#(Bool.random(using: &rng))}"#)
            }
        }
        if Int.random(in: 0..<5, using: &rng) < 2 { parts.append(#""limit": \#(Int.random(in: 0...6, using: &rng))"#) }
        if Int.random(in: 0..<10, using: &rng) < 3 { parts.append(#""offset": \#(Int.random(in: 0...3, using: &rng))"#) }
        let aggregations = (0..<Int.random(in: 1...3, using: &rng)).map { i in
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: #"{"alias": "a\#(i)", "count": {}}"#
            case 1: #"{"alias": "a\#(i)", "sum": {"field": {"fieldPath": "\#(pick(fields, &rng))"}}}"#
            default: #"{"alias": "a\#(i)", "avg": {"field": {"fieldPath": "\#(pick(fields, &rng))"}}}"#
            }
        }
        return #"{"structuredAggregationQuery": {"structuredQuery": {\#(parts.joined(separator: ", "))}, "aggregations": [\#(aggregations.joined(separator: ", "))]}}"#
    }

    /// The status and message of a refusal, or the aggregate fields, keys sorted.
    static func outcome(_ answer: (status: Int, json: Any?)) throws -> String {
        guard answer.status == 200 else { return "\(answer.status) \(RawHTTP.message(answer.json) ?? "")" }
        let results = (answer.json as? [[String: Any]] ?? []).compactMap { ($0["result"] as? [String: Any])?["aggregateFields"] }
        return "200 " + String(decoding: try JSONSerialization.data(withJSONObject: results, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func randomAggregationsEndAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "random aggregation") else { return }
        defer { stop() }
        // FLINT_AGGREGATION_SEED explores other data and queries; the default is the one kept.
        let seed = ProcessInfo.processInfo.environment["FLINT_AGGREGATION_SEED"].flatMap { UInt64($0) } ?? 20_261_128
        var rng = SeededGenerator(seed: seed)
        let documents = "projects/flint-random-aggregations/databases/(default)/documents"
        let writes = (0..<12).map { i in
            #"{"update": {"name": "\#(documents)/c/d\#(i < 10 ? "0" : "")\#(i)", "fields": \#(Self.document(&rng))}}"#
        }
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.send("POST", base + "/v1/\(documents):commit", #"{"writes": [\#(writes.joined(separator: ", "))]}"#).status == 200)
        }
        var refused = 0
        var numbers = 0
        for step in 0..<150 {
            let body = Self.query(&rng, documents: documents)
            let expected = try Self.outcome(try await RawHTTP.send("POST", reference.base + "/v1/\(documents):runAggregationQuery", body))
            let found = try Self.outcome(try await RawHTTP.send("POST", flint + "/v1/\(documents):runAggregationQuery", body))
            #expect(found == expected, "step \(step): \(body)")
            if !expected.hasPrefix("200") { refused += 1 }
            if expected.contains("doubleValue") { numbers += 1 }
        }
        // Refusals and answers both, or the test compares little. About 45 answers hold an
        // average on most seeds; seed 9238 has 27, so the floor sits well below that.
        #expect(refused > 5 && refused < 60, "\(refused) of 150 refused")
        #expect(numbers > 20, "\(numbers) answers with a sum or an average")
    }
}
