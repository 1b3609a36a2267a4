import Foundation
import Testing

/// The reference's index-usage report, `GET /emulator/v1/projects/{p}:indexUsage?database=…`,
/// after the same queries on both servers: the same indexes (scope, fields, the closing
/// `__name__` and its direction) with the same counts. Each query runs in a project of its
/// own, so each report is that query's. Queries the reference reports an index for that
/// production does not need (equalities alone, an order on an equality's field) are left
/// out: Flint reports what production needs (docs/rest-api.md).
struct IndexUsageDifferentialTests {
    static func filter(_ field: String, _ op: String, _ value: String = #"{"integerValue": "1"}"#) -> String {
        #"{"fieldFilter": {"field": {"fieldPath": "\#(field)"}, "op": "\#(op)", "value": \#(value)}}"#
    }

    static func both(_ op: String, _ filters: String...) -> String {
        #"{"compositeFilter": {"op": "\#(op)", "filters": [\#(filters.joined(separator: ", "))]}}"#
    }

    static func order(_ field: String, _ direction: String = "ASCENDING") -> String {
        #"{"field": {"fieldPath": "\#(field)"}, "direction": "\#(direction)"}"#
    }

    static func query(_ filter: String? = nil, _ orders: [String] = [], group: Bool = false) -> String {
        var parts = [#""from": [{"collectionId": "c", "allDescendants": \#(group)}]"#]
        if let filter { parts.append(#""where": \#(filter)"#) }
        if !orders.isEmpty { parts.append(#""orderBy": [\#(orders.joined(separator: ", "))]"#) }
        return "{" + parts.joined(separator: ", ") + "}"
    }

    /// Each entry: the verb, its body, how many times it runs.
    static let cases: [(String, String, Int)] = [
        ("runQuery", #"{"structuredQuery": \#(query(filter("x", "EQUAL"), [order("y")]))}"#, 3),
        ("runQuery", #"{"structuredQuery": \#(query(filter("x", "EQUAL"), [order("y", "DESCENDING")]))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(filter("x", "GREATER_THAN"), [order("y")]))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(both("AND", filter("x", "GREATER_THAN"), filter("y", "LESS_THAN"))))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(both("AND", filter("z", "EQUAL"), filter("a", "GREATER_THAN")), [order("b")]))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(filter("t", "ARRAY_CONTAINS"), [order("y")]))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(both("AND", filter("z", "EQUAL"), filter("a", "ARRAY_CONTAINS_ANY", #"{"arrayValue": {"values": [{"integerValue": "1"}]}}"#)), [order("b")]))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(filter("x", "EQUAL"), group: true))}"#, 2),
        ("runQuery", #"{"structuredQuery": \#(query(nil, [order("y")], group: true))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(filter("x", "EQUAL"), [order("y", "DESCENDING")], group: true))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(filter("t", "ARRAY_CONTAINS"), group: true))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(nil, [order("b"), order("a", "DESCENDING")]))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(both("OR", filter("z", "EQUAL"), filter("a", "EQUAL")), [order("b")]))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(filter("x", "EQUAL"), [order("y"), order("__name__", "DESCENDING")]))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(filter("x", "EQUAL")))}"#, 1),
        ("runQuery", #"{"structuredQuery": \#(query(nil, [order("y", "DESCENDING")]))}"#, 1),
        ("runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": \#(query(filter("z", "EQUAL"))), "aggregations": [{"alias": "s", "sum": {"field": {"fieldPath": "q"}}}]}}"#, 1),
        ("runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": \#(query(filter("x", "EQUAL"), [order("y")])), "aggregations": [{"alias": "n", "count": {}}]}}"#, 2),
    ]

    @Test func queriesAreReportedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "index usage") else { return }
        defer { stop() }
        let run = UInt32.random(in: 0...UInt32.max)
        var reports: [[String]] = [[], []]
        for (side, base) in [reference.base, flint].enumerated() {
            for (i, (verb, body, times)) in Self.cases.enumerated() {
                let project = "flint-index-usage-\(run)-\(i)"
                let database = "projects/\(project)/databases/(default)"
                for _ in 0..<times {
                    let (status, json) = try await RawHTTP.send("POST", "\(base)/v1/\(database)/documents:\(verb)", body)
                    #expect(status == 200, "\(verb) \(body): \(RawHTTP.message(json) ?? "")")
                }
                let (status, json) = try await RawHTTP.send("GET", "\(base)/emulator/v1/projects/\(project):indexUsage?database=\(database)", nil)
                reports[side].append("\(body) ×\(times): \(status) " + Self.canonical(json).replacingOccurrences(of: project, with: "P"))
            }
        }
        #expect(reports[0].count == Self.cases.count)
        for (expected, found) in zip(reports[0], reports[1]) { #expect(found == expected) }
        // Most cases were reported at all, each with its count.
        #expect(reports[1].filter { $0.contains(#""numQueries":"#) }.count == Self.cases.count - 2)
        #expect(reports[1][0].contains(#""numQueries":"3""#))
    }

    @Test func aMissingOrMalformedDatabaseIsRefusedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "index usage refusal") else { return }
        defer { stop() }
        for query in ["", "?database=projects/p", "?database=projects/p/databases/(default)/documents"] {
            let expected = try await RawHTTP.send("GET", "\(reference.base)/emulator/v1/projects/p:indexUsage\(query)", nil)
            let found = try await RawHTTP.send("GET", "\(flint)/emulator/v1/projects/p:indexUsage\(query)", nil)
            #expect(expected.status == 400)
            #expect(found.status == expected.status)
            #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json))
        }
    }

    /// Reports in a fixed order (the reference's follows its hash table), as sorted JSON.
    static func canonical(_ json: Any?) -> String {
        guard var object = json as? [String: Any] else { return "not an object" }
        if let reports = object["reports"] as? [[String: Any]] {
            object["reports"] = reports.sorted { Self.text($0) < Self.text($1) }
        }
        return text(object)
    }

    static func text(_ object: Any) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data(), as: UTF8.self)
    }
}
