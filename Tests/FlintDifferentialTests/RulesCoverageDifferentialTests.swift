import Foundation
import Testing

/// The coverage report after the same reads on the reference and on a Flint server: the same
/// expressions at the same places, with the same values. The reference also counts the values
/// of its first pass (made before any document is read, mostly `{"undefined": {}}`) and keeps
/// request times to the millisecond; those are left out of the comparison.
struct RulesCoverageDifferentialTests {
    static let conditions = [
        "resource.data.s.matches('a.*') && f(1) == 1 && math.abs(-1) == 1 && request.auth.uid.size() > 0 && resource.data.s[0] == 'a' && resource.data.s[0:1] == 'a'",
        "resource.data.m == {} && resource.data.l == [] && resource.data.keys().size() == 3",
        "resource.data.m.diff({}).affectedKeys().size() == 0 && f(f(1)) == 1 && [1, 2][0] == 1 && {'a': 1}['a'] == 1",
        "[1, 2].toSet().size() == 2 && {'a': 1}.diff({'a': 2}).affectedKeys().size() == 1 && {'a': 1}.diff({'a': 2}) != null",
        "exists(/databases/$(database)/documents/c/$(doc)) && (resource.data.s) == 'abc' && -(1) == -1",
        "f( 1 ) == 1 && resource.data.s.size( ) == 3 && [ 1 ][ 0 ] == 1 && (true ? (1 == 1) : (2 == 2))",
    ]

    @Test func coverageReportsTheReferencesExpressionsAndValues() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "coverage") else { return }
        defer { stop() }
        let user = RulesDifferential.bearer(#"{"sub":"alice"}"#)
        for (n, condition) in Self.conditions.enumerated() {
            let project = "flint-coverage\(n)"
            let rules = RulesDifferential.ruleset(["function f(x) { return x; }", "match /c/{doc} { allow read: if \(condition); }"])
            var reports: [[String]] = []
            for base in [reference.base, flint] {
                let documents = base + "/v1/projects/\(project)/databases/(default)/documents"
                _ = try await RawHTTP.loadRules(rules, project: project, on: base)
                _ = try await RawHTTP.send("PATCH", documents + "/c/d", #"{"fields": {"s": {"stringValue": "abc"}, "m": {"mapValue": {}}, "l": {"arrayValue": {}}}}"#)
                let (status, _) = try await RawHTTP.send("GET", documents + "/c/d", nil, authorization: user)
                #expect(status == 200, "\(condition)")
                let (_, report) = try await RawHTTP.send("GET", base + "/emulator/v1/projects/\(project):ruleCoverage", nil)
                var nodes: [String] = []
                Self.collect((report as? [String: Any])?["report"], into: &nodes)
                reports.append(nodes.sorted())
            }
            #expect(reports[0].count > 10)
            #expect(reports[1] == reports[0], "\(condition)")
        }
    }

    /// A query's constrained fields, as the report shows them: one comparator per filter
    /// (`EQ`, `LT`, `LIST_CONTAINS`, …), and the impossible pair for a filter against null.
    @Test func queriesReportTheirConstraintsAsTheReferenceDoes() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "query coverage") else { return }
        defer { stop() }
        let project = "flint-query-coverage"
        let rules = RulesDifferential.ruleset([
            "match /c/{doc} { allow list: if resource.data.a > 2 || resource.data.tags.hasAny(['q']) || resource.data.m.k < 0 || resource.data.b == 1; }"
        ])
        let filters = [
            #"{"compositeFilter": {"op": "AND", "filters": [{"fieldFilter": {"field": {"fieldPath": "a"}, "op": "EQUAL", "value": {"integerValue": "2"}}}, {"fieldFilter": {"field": {"fieldPath": "a"}, "op": "LESS_THAN", "value": {"integerValue": "5"}}}, {"fieldFilter": {"field": {"fieldPath": "a"}, "op": "GREATER_THAN_OR_EQUAL", "value": {"integerValue": "1"}}}, {"fieldFilter": {"field": {"fieldPath": "tags"}, "op": "ARRAY_CONTAINS", "value": {"stringValue": "x"}}}, {"fieldFilter": {"field": {"fieldPath": "m.k"}, "op": "NOT_IN", "value": {"arrayValue": {"values": [{"integerValue": "1"}, {"integerValue": "2"}]}}}}]}}"#,
            #"{"compositeFilter": {"op": "AND", "filters": [{"fieldFilter": {"field": {"fieldPath": "a"}, "op": "EQUAL", "value": {"nullValue": null}}}, {"unaryFilter": {"field": {"fieldPath": "m.k"}, "op": "IS_NOT_NULL"}}, {"fieldFilter": {"field": {"fieldPath": "b"}, "op": "EQUAL", "value": {"integerValue": "1"}}}]}}"#,
            #"{"compositeFilter": {"op": "AND", "filters": [{"unaryFilter": {"field": {"fieldPath": "a"}, "op": "IS_NULL"}}, {"fieldFilter": {"field": {"fieldPath": "a"}, "op": "LESS_THAN", "value": {"doubleValue": "NaN"}}}]}}"#,
        ]
        var reports: [[String]] = []
        for base in [reference.base, flint] {
            _ = try await RawHTTP.loadRules(rules, project: project, on: base)
            for filter in filters {
                _ = try await RawHTTP.send(
                    "POST", base + "/v1/projects/\(project)/databases/(default)/documents:runQuery",
                    #"{"structuredQuery": {"from": [{"collectionId": "c"}], "where": \#(filter)}}"#, authorization: nil)
            }
            let (_, report) = try await RawHTTP.send("GET", base + "/emulator/v1/projects/\(project):ruleCoverage", nil)
            var nodes: [String] = []
            Self.collect((report as? [String: Any])?["report"], into: &nodes)
            reports.append(nodes.sorted())
        }
        #expect(reports[0].contains { $0.contains(#"{"comparator":"LIST_CONTAINS","value":{"stringValue":"x"}}"#) })
        #expect(reports[0].contains { $0.contains(#"{"constraintValue":{"simpleConstraints":[{"comparator":"EQ","value":{"boolValue":true}},{"comparator":"EQ","value":{"boolValue":false}}]}}"#) })
        #expect(reports[1] == reports[0])
    }

    /// Each node as `start-end values`, without first-pass errors, request times and the places
    /// of errors' causes.
    static func collect(_ node: Any?, into out: inout [String]) {
        if let list = node as? [Any] {
            for item in list { collect(item, into: &out) }
            return
        }
        guard let map = node as? [String: Any] else { return }
        if let position = map["sourcePosition"] as? [String: Any], let values = map["values"] as? [[String: Any]] {
            let kept = values.compactMap { v -> String? in
                guard var value = v["value"] else { return nil }
                // Where the reference places an error's cause is left out (see security-rules.md).
                if var undefined = (value as? [String: Any])?["undefined"] as? [String: Any] {
                    undefined["sourcePosition"] = nil
                    value = ["undefined": undefined]
                }
                guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) else { return nil }
                let text = String(decoding: data, as: UTF8.self)
                return text == #"{"undefined":{}}"# || text.contains("timestampValue") ? nil : text
            }
            out.append("\(position["currentOffset"] ?? "")-\(position["endOffset"] ?? "") " + kept.sorted().joined(separator: " | "))
        }
        for value in map.values { collect(value, into: &out) }
    }
}
