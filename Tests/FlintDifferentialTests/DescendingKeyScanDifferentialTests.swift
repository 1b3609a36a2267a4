import Foundation
import Testing

/// Queries and listings ordered by `__name__` descending, sent as raw REST to the reference and
/// to Flint: with nothing but `__name__` filtered both refuse them (FAILED_PRECONDITION, the
/// same message); with an equality on another field, or another order first, both answer the
/// same documents in the same order. A sum or an average over such a scan is refused for the
/// scan, not for its field following the name.
struct DescendingKeyScanDifferentialTests {
    static let project = "flint-key-scans"
    static let documents = "projects/\(project)/databases/(default)/documents"
    static let byNameDescending = #""orderBy": [{"field": {"fieldPath": "__name__"}, "direction": "DESCENDING"}]"#

    static func filter(_ field: String, _ op: String, _ value: String) -> String {
        #""where": \#(QueryNamesDifferentialTests.filter(field, op, value))"#
    }

    static func name(_ id: String) -> String { #"{"referenceValue": "\#(documents)/c/\#(id)"}"# }

    /// The parts of a structured query after `from`, each with the name order.
    static let queries: [String] = [
        byNameDescending,
        byNameDescending + #", "limit": 2"#,
        byNameDescending + #", "limit": 0"#,
        byNameDescending + #", "offset": 1"#,
        byNameDescending + #", "select": {"fields": [{"fieldPath": "s"}]}"#,
        byNameDescending + #", "startAt": {"values": [\#(name("b"))], "before": true}"#,
        filter("__name__", "EQUAL", name("a")) + ", " + byNameDescending,
        filter("__name__", "GREATER_THAN", name("a")) + ", " + byNameDescending,
        filter("__name__", "NOT_EQUAL", name("a")) + ", " + byNameDescending,
        filter("__name__", "IN", #"{"arrayValue": {"values": [\#(name("a")), \#(name("b"))]}}"#) + ", " + byNameDescending,
        #""where": {"compositeFilter": {"op": "AND", "filters": []}}, "# + byNameDescending,
        filter("s", "EQUAL", #"{"stringValue": "x"}"#) + ", " + byNameDescending,
        filter("s", "IN", #"{"arrayValue": {"values": [{"stringValue": "x"}]}}"#) + ", " + byNameDescending,
        filter("tags", "ARRAY_CONTAINS", #"{"integerValue": "1"}"#) + ", " + byNameDescending,
        filter("s", "GREATER_THAN", #"{"nullValue": null}"#) + ", " + byNameDescending,
        #""where": {"unaryFilter": {"field": {"fieldPath": "s"}, "op": "IS_NULL"}}, "# + byNameDescending,
        #""where": {"unaryFilter": {"field": {"fieldPath": "s"}, "op": "IS_NOT_NULL"}}, "# + byNameDescending,
        #""where": {"compositeFilter": {"op": "OR", "filters": [{"fieldFilter": {"field": {"fieldPath": "s"}, "op": "EQUAL", "value": {"stringValue": "x"}}}, {"fieldFilter": {"field": {"fieldPath": "s"}, "op": "EQUAL", "value": {"stringValue": "y"}}}]}}, "#
            + byNameDescending,
        #""orderBy": [{"field": {"fieldPath": "s"}, "direction": "DESCENDING"}, {"field": {"fieldPath": "__name__"}, "direction": "DESCENDING"}]"#,
        #""orderBy": [{"field": {"fieldPath": "s"}, "direction": "ASCENDING"}, {"field": {"fieldPath": "__name__"}, "direction": "DESCENDING"}]"#,
        #""orderBy": [{"field": {"fieldPath": "__name__"}, "direction": "ASCENDING"}]"#,
    ]

    /// The documents' ids in order, or the error's status and message.
    static func outcome(_ answer: (status: Int, json: Any?)) -> String {
        guard answer.status == 200 else { return "\(answer.status) \(RawHTTP.message(answer.json) ?? "")" }
        // A query answers rows holding documents, a listing one page of them.
        let documents = (answer.json as? [[String: Any]])?.compactMap { $0["document"] as? [String: Any] }
            ?? ((answer.json as? [String: Any])?["documents"] as? [[String: Any]] ?? [])
        return documents.compactMap { ($0["name"] as? String)?.split(separator: "/").last }.joined(separator: ",")
    }

    @Test func descendingKeyScansAreRefusedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "descending key scans") else { return }
        defer { stop() }
        let seed = [("a", #"{"s": {"stringValue": "x"}, "tags": {"arrayValue": {"values": [{"integerValue": "1"}]}}}"#),
                    ("b", #"{"s": {"stringValue": "y"}, "tags": {"arrayValue": {"values": [{"integerValue": "1"}]}}}"#),
                    ("e", #"{"s": {"stringValue": "x"}}"#), ("g", #"{"s": {"nullValue": null}}"#)]
        let writes = seed.map { id, fields in #"{"update": {"name": "\#(Self.documents)/c/\#(id)", "fields": \#(fields)}}"# }
        let commit = #"{"writes": [\#(writes.joined(separator: ", "))]}"#
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.send("POST", base + "/v1/" + Self.documents + ":commit", commit).status == 200)
        }

        var requests = Self.queries.map { (":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], \#($0)}}"#) }
        requests.append((":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c", "allDescendants": true}], \#(Self.byNameDescending)}}"#))
        requests.append((
            ":runAggregationQuery",
            #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}], \#(Self.byNameDescending)}, "aggregations": [{"alias": "n", "count": {}}]}}"#
        ))
        requests.append((":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], \#(Self.byNameDescending)}, "explainOptions": {}}"#))
        // A sum or an average reads its field after the name: refused for that, unless the scan
        // itself is refused first.
        for (from, parts) in [
            (#"{"collectionId": "c"}"#, Self.byNameDescending),
            (#"{"collectionId": "c", "allDescendants": true}"#, Self.byNameDescending),
            (#"{"collectionId": "c"}"#, Self.filter("__name__", "GREATER_THAN", Self.name("a")) + ", " + Self.byNameDescending),
            (#"{"collectionId": "c"}"#, Self.filter("s", "EQUAL", #"{"stringValue": "x"}"#) + ", " + Self.byNameDescending),
        ] {
            for aggregation in [#"{"alias": "n", "sum": {"field": {"fieldPath": "n"}}}"#, #"{"alias": "n", "avg": {"field": {"fieldPath": "n"}}}"#] {
                requests.append((
                    ":runAggregationQuery",
                    #"{"structuredAggregationQuery": {"structuredQuery": {"from": [\#(from)], \#(parts)}, "aggregations": [\#(aggregation)]}}"#
                ))
            }
        }
        var refused = 0
        var others = 0
        for (method, body) in requests {
            let target = "/v1/" + Self.documents + method
            let expected = Self.outcome(try await RawHTTP.send("POST", reference.base + target, body))
            let found = Self.outcome(try await RawHTTP.send("POST", flint + target, body))
            #expect(found == expected, "\(body)")
            if expected.hasPrefix("400 Firestore does not support descending key scans") { refused += 1 } else { others += 1 }
        }
        for order in ["__name__%20desc", "s%20desc", "__name__", "s%20desc,__name__%20desc"] {
            let target = "/v1/" + Self.documents + "/c?orderBy=" + order
            let expected = Self.outcome(try await RawHTTP.send("GET", reference.base + target, nil))
            let found = Self.outcome(try await RawHTTP.send("GET", flint + target, nil))
            #expect(found == expected, "list by \(order)")
            if expected.hasPrefix("400 Firestore does not support descending key scans") { refused += 1 } else { others += 1 }
        }
        #expect(refused == 21 && others == 15, "refused \(refused), others \(others)")
    }
}
