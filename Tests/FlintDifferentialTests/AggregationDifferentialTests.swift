import FlintFixtures
import FlintModel
import FlintQuery
import Foundation
import Testing

/// Sums and averages on the reference against Flint's aggregator, for values whose result the
/// reference gives the same every time: integers (added exactly), and at most two distinct
/// doubles (whose order cannot matter). Firestore documents sums of more doubles as
/// non-deterministic, and the reference's do vary between runs, so they are left out.
struct AggregationDifferentialTests {
    static let cases: [[String]] = [
        [#"{"integerValue": "9223372036854775807"}"#, #"{"integerValue": "1"}"#, #"{"integerValue": "-1"}"#],
        [#"{"integerValue": "9223372036854775807"}"#, #"{"integerValue": "9223372036854775807"}"#,
         #"{"integerValue": "-9223372036854775808"}"#, #"{"integerValue": "-9223372036854775808"}"#],
        [#"{"integerValue": "9223372036854775807"}"#, #"{"integerValue": "1"}"#],
        [#"{"doubleValue": 3.0}"#, #"{"integerValue": "9223372036854775807"}"#, #"{"integerValue": "-9223372036854775808"}"#],
        [#"{"integerValue": "1"}"#, #"{"doubleValue": 0.1}"#, #"{"integerValue": "2"}"#, #"{"doubleValue": 0.2}"#],
        [#"{"integerValue": "9007199254740993"}"#, #"{"doubleValue": 0.5}"#],
        [#"{"integerValue": "1"}"#, #"{"doubleValue": 9007199254740992.0}"#, #"{"doubleValue": 0.5}"#],
        [#"{"doubleValue": 1e16}"#, #"{"doubleValue": 1.0}"#, #"{"integerValue": "1"}"#],
        [#"{"integerValue": "9007199254740993"}"#, #"{"integerValue": "1"}"#, #"{"stringValue": "x"}"#],
        Array(repeating: #"{"doubleValue": 0.1}"#, count: 10),
        [#"{"doubleValue": 0.1}"#, #"{"doubleValue": 0.7}"#, #"{"nullValue": null}"#],
        [#"{"doubleValue": "Infinity"}"#, #"{"integerValue": "9223372036854775807"}"#],
        [#"{"doubleValue": "NaN"}"#, #"{"doubleValue": 1.5}"#],
        [#"{"booleanValue": true}"#],
    ]

    @Test func sumsAndAveragesAreTheReferences() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential aggregation test skipped")
            return
        }
        defer { reference.stop() }
        let id = DatabaseID(project: "flint-aggregation")
        for (n, texts) in Self.cases.enumerated() {
            let values = try texts.map { try JSONSerialization.jsonObject(with: Data($0.utf8), options: .fragmentsAllowed) }
            let writes = values.enumerated().map { i, v in
                ["update": ["name": "\(id.documentsRoot)/c\(n)/d\(i)", "fields": ["v": v]]]
            }
            let (written, _) = try await reference.request("POST", "/v1/\(id.documentsRoot):commit", ["writes": writes])
            #expect(written == 200)
            let query: [String: Any] = [
                "structuredAggregationQuery": [
                    "structuredQuery": ["from": [["collectionId": "c\(n)"]]],
                    "aggregations": [["alias": "s", "sum": ["field": ["fieldPath": "v"]]], ["alias": "a", "avg": ["field": ["fieldPath": "v"]]]],
                ]
            ]
            let (status, body) = try await reference.request("POST", "/v1/\(id.documentsRoot):runAggregationQuery", query)
            #expect(status == 200)
            let fields = try #require(((body as? [[String: Any]])?.first?["result"] as? [String: Any])?["aggregateFields"] as? [String: Any])
            let expectedSum = try DocumentJSON.value(try #require(fields["s"]), database: id, at: "s")
            let expectedAverage = try DocumentJSON.value(try #require(fields["a"]), database: id, at: "a")

            let documents = try values.map { MapValue([("v", try DocumentJSON.value($0, database: id, at: "v"))]) }
            let found = Aggregator.aggregate([Aggregation(.sum(try FieldPath(parsing: "v"))), Aggregation(.average(try FieldPath(parsing: "v")))], over: documents)
            #expect(found[0].isIdentical(to: expectedSum), "sum of \(texts): Flint \(found[0]), reference \(expectedSum)")
            #expect(found[1].isIdentical(to: expectedAverage), "average of \(texts): Flint \(found[1]), reference \(expectedAverage)")
        }
    }
}

/// Whole aggregation requests over REST on both servers: which documents a sum, an average and
/// a count beside them take, under limits, offsets, orders and filters.
struct AggregationScopeDifferentialTests {
    static let documents = [
        ("p", #"{"a": {"integerValue": "1"}, "b": {"integerValue": "10"}}"#), ("q", #"{"a": {"integerValue": "2"}}"#),
        ("r", #"{"b": {"integerValue": "20"}}"#), ("s", #"{"a": {"integerValue": "3"}, "b": {"integerValue": "5"}}"#),
        ("u", #"{"c": {"integerValue": "7"}}"#), ("v", #"{"a": {"stringValue": "x"}, "b": {"integerValue": "1"}}"#),
        ("w", #"{"a": {"nullValue": null}, "b": {"doubleValue": 2.5}}"#),
    ]

    static func sum(_ field: String, as alias: String) -> String { #"{"alias": "\#(alias)", "sum": {"field": {"fieldPath": "\#(field)"}}}"# }
    static func avg(_ field: String, as alias: String) -> String { #"{"alias": "\#(alias)", "avg": {"field": {"fieldPath": "\#(field)"}}}"# }
    static let count = #"{"alias": "n", "count": {}}"#
    static func order(_ field: String, _ direction: String = "ASCENDING") -> String {
        #"{"field": {"fieldPath": "\#(field)"}, "direction": "\#(direction)"}"#
    }

    /// Aggregations, and the parts of the query after `from`.
    static let requests: [([String], String)] = [
        ([sum("a", as: "a"), sum("b", as: "b"), count], ""),
        ([sum("b", as: "b"), sum("a", as: "a"), count], #", "limit": 1"#),
        ([sum("b", as: "b"), sum("a", as: "a"), count], #", "limit": 3"#),
        ([sum("a", as: "a"), count], #", "offset": 1"#),
        ([avg("a", as: "a"), count], #", "offset": 2, "limit": 2"#),
        ([count, sum("a", as: "a")], #", "orderBy": [\#(order("b", "DESCENDING"))], "limit": 1"#),
        ([count, sum("a", as: "a")], #", "orderBy": [\#(order("a", "DESCENDING"))], "limit": 2"#),
        ([avg("b", as: "b")], #", "where": {"fieldFilter": {"field": {"fieldPath": "a"}, "op": "GREATER_THAN", "value": {"integerValue": "1"}}}, "limit": 1"#),
        ([sum("a", as: "a"), count], #", "where": {"fieldFilter": {"field": {"fieldPath": "c"}, "op": "EQUAL", "value": {"integerValue": "7"}}}"#),
        ([sum("a", as: "a")], #", "orderBy": [\#(order("__name__"))]"#),
        ([sum("b", as: "b"), sum("a", as: "a")], #", "orderBy": [\#(order("b")), \#(order("__name__"))]"#),
        ([sum("b", as: "b")], #", "orderBy": [\#(order("b")), \#(order("__name__"))]"#),
        ([#"{"alias": "n", "count": {"upTo": "0"}}"#], ""),
        ([#"{"alias": "a", "count": {}}"#, #"{"count": {}}"#], ""),
        ([#"{"count": {}}"#, #"{"alias": "field_1", "count": {}}"#], ""),
        // Projections: a count may stand beside one, a sum or an average may not.
        ([count], #", "select": {"fields": [{"fieldPath": "a"}]}"#),
        ([sum("a", as: "a")], #", "select": {"fields": [{"fieldPath": "a"}]}"#),
        ([count, avg("b", as: "b")], #", "select": {"fields": [{"fieldPath": "a"}]}"#),
        ([sum("a", as: "a")], #", "select": {}"#),
        ([sum("a", as: "a")], #", "select": {"fields": [{"fieldPath": "__name__"}]}"#),
        ([sum("b", as: "x"), sum("a", as: "x")], #", "select": {"fields": [{"fieldPath": "a"}]}"#),
    ]

    @Test func aggregationsTakeTheReferencesDocuments() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "aggregation scope") else { return }
        defer { stop() }
        let documents = "projects/flint-aggregation-scope/databases/(default)/documents"
        let writes = Self.documents.map { #"{"update": {"name": "\#(documents)/t/\#($0.0)", "fields": \#($0.1)}}"# }
        let commit = #"{"writes": [\#(writes.joined(separator: ", "))]}"#
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.send("POST", base + "/v1/" + documents + ":commit", commit).status == 200)
        }
        for (aggregations, parts) in Self.requests {
            let body = #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "t"}]\#(parts)}, "aggregations": [\#(aggregations.joined(separator: ", "))]}}"#
            let target = "/v1/" + documents + ":runAggregationQuery"
            let expected = try await RawHTTP.send("POST", reference.base + target, body)
            let found = try await RawHTTP.send("POST", flint + target, body)
            #expect(found.status == expected.status, "\(body)")
            if expected.status == 200 {
                #expect(Self.fields(found.json) == Self.fields(expected.json), "\(body)")
                // Each answer carries the same members, `done` on the last.
                let members = { (json: Any?) in (json as? [[String: Any]])?.map { $0.keys.sorted() } }
                #expect(members(found.json) == members(expected.json), "\(body)")
            } else {
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(body)")
            }
        }
    }

    /// The aggregated values of a runAggregationQuery answer, each as its JSON text.
    static func fields(_ json: Any?) -> [String: String] {
        let rows = json as? [[String: Any]] ?? []
        let fields = rows.compactMap { ($0["result"] as? [String: Any])?["aggregateFields"] as? [String: Any] }.first ?? [:]
        return fields.mapValues { value in
            (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "?"
        }
    }
}
