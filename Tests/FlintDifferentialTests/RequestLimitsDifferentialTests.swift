import Foundation
import Testing

/// Production's size limits at their edges (field names and paths, values, query operands,
/// aliases) and the admin-only methods, sent as raw REST to the reference and to Flint: the
/// same status, and the same message when refused.
struct RequestLimitsDifferentialTests {
    static func x(_ n: Int, _ c: String = "x") -> String { String(repeating: c, count: n) }

    static func string(_ n: Int) -> String { #"{"stringValue": "\#(x(n))"}"# }

    static func vector(_ dimensions: Int) -> String {
        let values = Array(repeating: #"{"doubleValue": 1}"#, count: dimensions).joined(separator: ", ")
        return #"{"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [\#(values)]}}}}}"#
    }

    /// A document body of a 1,000,000-byte string, a filler string, and any extra fields.
    static func sized(_ filler: Int, extra: String? = nil) -> String {
        let fields = [#""a": \#(string(1_000_000))"#, #""b": \#(string(filler))"#] + (extra.map { [$0] } ?? [])
        return #"{"fields": {\#(fields.joined(separator: ", "))}}"#
    }

    static func query(_ parts: String) -> String { #"{"structuredQuery": {"from": [{"collectionId": "c"}], \#(parts)}}"# }

    static func filter(_ field: String, _ op: String, _ value: String) -> String {
        query(#""where": {"fieldFilter": {"field": {"fieldPath": "\#(field)"}, "op": "\#(op)", "value": \#(value)}}"#)
    }

    static func nearest(distanceField: String) -> String {
        let vector = #"{"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1}]}}}}}"#
        return query(
            #""findNearest": {"vectorField": {"fieldPath": "v"}, "queryVector": \#(vector), "distanceMeasure": "EUCLIDEAN", "limit": 1, "distanceResultField": "\#(distanceField)"}"#)
    }

    static func aggregation(alias: String) -> String {
        #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]}, "aggregations": [{"count": {}, "alias": "\#(alias)"}]}}"#
    }

    static let user = "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1MSJ9."

    /// A value of maps nested `depth` deep: the deepest the reference's JSON parser reads is 48.
    static func nested(_ depth: Int) -> String {
        (0..<depth).reduce(#"{"integerValue": "1"}"#) { inner, _ in #"{"mapValue": {"fields": {"m": \#(inner)}}}"# }
    }

    /// Method, path below the documents root (`$D`), body, Authorization.
    static let cases: [(String, String, String?, String)] = [
        // Field names and nested paths.
        ("PATCH", "/c/a", #"{"fields": {"\#(x(1500))": {"integerValue": "1"}}}"#, "Bearer owner"),
        ("PATCH", "/c/a", #"{"fields": {"\#(x(1501))": {"integerValue": "1"}}}"#, "Bearer owner"),
        ("PATCH", "/c/a", #"{"fields": {"\#(x(749))": {"mapValue": {"fields": {"\#(x(750))": {"nullValue": null}}}}}}"#, "Bearer owner"),
        ("PATCH", "/c/a", #"{"fields": {"\#(x(750))": {"mapValue": {"fields": {"\#(x(750))": {"nullValue": null}}}}}}"#, "Bearer owner"),
        ("PATCH", "/c/a", #"{"fields": {"a": {"arrayValue": {"values": [{"mapValue": {"fields": {"\#(x(1499))": {"nullValue": null}}}}]}}}}"#, "Bearer owner"),
        // Values.
        ("PATCH", "/c/a", #"{"fields": {"s": \#(string(1_048_487))}}"#, "Bearer owner"),
        ("PATCH", "/c/a", #"{"fields": {"s": \#(string(1_048_488))}}"#, "Bearer owner"),
        ("PATCH", "/c/a", #"{"fields": {"s": {"arrayValue": {"values": [\#(string(1_048_488))]}}}}"#, "Bearer owner"),
        ("PATCH", "/c/a", #"{"fields": {"m": {"mapValue": {"fields": {"s": \#(string(1_048_488))}}}}}"#, "Bearer owner"),
        ("PATCH", "/c/a", #"{"fields": {"a": {"arrayValue": {"values": [{"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1}]}}}}}]}}}}"#, "Bearer owner"),
        // Whole documents at 1 MiB, with a string of 1,000,000 bytes, a filler, and what is
        // counted its own way: a vector by its dimensions, a numeric id as 8 bytes (own name,
        // parent, or reference). Each pair is the largest that fits and one byte more.
        ("PATCH", "/c/a", sized(48_492, extra: #""v": \#(vector(3))"#), "Bearer owner"),
        ("PATCH", "/c/a", sized(48_493, extra: #""v": \#(vector(3))"#), "Bearer owner"),
        ("PATCH", "/c/a", sized(48_490, extra: #""m": {"mapValue": {"fields": {"k": \#(vector(3))}}}"#), "Bearer owner"),
        ("PATCH", "/c/a", sized(48_491, extra: #""m": {"mapValue": {"fields": {"k": \#(vector(3))}}}"#), "Bearer owner"),
        ("PATCH", "/c/__id123456789__", sized(48_512), "Bearer owner"),
        ("PATCH", "/c/__id123456789__", sized(48_513), "Bearer owner"),
        ("PATCH", "/c/__id-9223372036854775808__/s/d", sized(48_508), "Bearer owner"),
        ("PATCH", "/c/__id-9223372036854775808__/s/d", sized(48_509), "Bearer owner"),
        ("PATCH", "/c/a", sized(48_484, extra: #""r": {"referenceValue": "$D/col/__id123456789__/s/d"}"#), "Bearer owner"),
        ("PATCH", "/c/a", sized(48_485, extra: #""r": {"referenceValue": "$D/col/__id123456789__/s/d"}"#), "Bearer owner"),
        // Paths a request names.
        ("PATCH", "/c/a?updateMask.fieldPaths=\(x(1499))", #"{"fields": {}}"#, "Bearer owner"),
        ("PATCH", "/c/a?updateMask.fieldPaths=\(x(1500))", #"{"fields": {}}"#, "Bearer owner"),
        ("GET", "/c/a?mask.fieldPaths=\(x(1500))", nil, "Bearer owner"),
        ("POST", ":runQuery", query(#""orderBy": [{"field": {"fieldPath": "\#(x(749)).\#(x(750))"}}]"#), "Bearer owner"),
        ("POST", ":runQuery", query(#""select": {"fields": [{"fieldPath": "`\#(x(1499))`"}]}"#), "Bearer owner"),
        ("POST", ":runQuery", nearest(distanceField: x(1500)), "Bearer owner"),
        ("POST", ":runQuery", nearest(distanceField: x(1501)), "Bearer owner"),
        ("POST", ":runAggregationQuery", aggregation(alias: x(1500)), "Bearer owner"),
        ("POST", ":runAggregationQuery", aggregation(alias: x(1501)), "Bearer owner"),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "\#(x(1501))"}]}}"#, "Bearer owner"),
        ("POST", ":commit", #"{"writes": [{"update": {"name": "$D/c/a", "fields": {}}, "updateMask": {"fieldPaths": ["a", "a.b", "a"]}}]}"#, "Bearer owner"),
        // Query operands.
        ("POST", ":runQuery", filter("a", "EQUAL", string(1499)), "Bearer owner"),
        ("POST", ":runQuery", filter("a", "EQUAL", string(1500)), "Bearer owner"),
        ("POST", ":runQuery", filter("a.b", "LESS_THAN", #"{"mapValue": {"fields": {"k": \#(string(1497))}}}"#), "Bearer owner"),
        ("POST", ":runQuery", filter("a.b", "LESS_THAN", #"{"mapValue": {"fields": {"k": \#(string(1498))}}}"#), "Bearer owner"),
        ("POST", ":runQuery", filter("a", "ARRAY_CONTAINS", string(1500)), "Bearer owner"),
        ("POST", ":runQuery", filter("v", "EQUAL", vector(187)), "Bearer owner"),
        ("POST", ":runQuery", filter("v", "EQUAL", vector(188)), "Bearer owner"),
        ("POST", ":runQuery", filter("v", "EQUAL", vector(2049)), "Bearer owner"),
        ("POST", ":runQuery", filter("a", "IN", #"{"arrayValue": {"values": [\#(string(1000)), \#(string(1000))]}}"#), "Bearer owner"),
        ("POST", ":runQuery", filter("a", "NOT_IN", #"{"arrayValue": {"values": [\#(string(1500))]}}"#), "Bearer owner"),
        // Values nested deeper than a document keeps, where nothing stores them.
        ("POST", ":runQuery", filter("a", "EQUAL", nested(48)), "Bearer owner"),
        ("PATCH", "/c/a?updateMask.fieldPaths=b", #"{"fields": {"a": \#(nested(48))}}"#, "Bearer owner"),
        ("PATCH", "/c/a", #"{"fields": {"a": \#(nested(21))}}"#, "Bearer owner"),
        // Admin-only methods: a malformed request is refused as malformed first.
        ("POST", ":listCollectionIds", "{}", user),
        ("POST", ":listCollectionIds", "{}", "Bearer owner"),
        ("POST", ":listCollectionIds", #"{"pageSize": -1}"#, user),
        ("POST", ":batchWrite", #"{"writes": [{"delete": "$D/c/a"}]}"#, user),
        ("POST", ":batchWrite", #"{"writes": [{"delete": "$D/c/a"}, {"delete": "$D/c/a"}]}"#, user),
        ("POST", ":batchWrite", #"{"writes": [{"update": {"name": "$D/c/a", "fields": {"__x__": {"nullValue": null}}}}]}"#, user),
        ("POST", ":batchWrite", #"{"writes": [{"delete": "nope"}, {"delete": "nope"}]}"#, "Bearer owner"),
        ("POST", ":batchWrite", #"{"writes": [{}, {}]}"#, "Bearer owner"),
        ("POST", ":runQuery", query(#""where": {"unaryFilter": {}}"#), "Bearer owner"),
        ("POST", ":batchWrite", #"{"writes": [{"transform": {"document": "$D/c/a", "fieldTransforms": [{"fieldPath": "n", "increment": {"stringValue": "x"}}]}}]}"#, "Bearer owner"),
        ("POST", ":commit", #"{"writes": [{"transform": {"document": "$D/c/a", "fieldTransforms": [{"fieldPath": "t", "setToServerValue": "SERVER_VALUE_UNSPECIFIED"}]}}]}"#, "Bearer owner"),
    ]

    @Test func limitsAndAdminOnlyMethodsAnswerAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "request limits") else { return }
        defer { stop() }
        let documents = "projects/flint-limits/databases/(default)/documents"
        var refused = 0
        for (method, path, body, authorization) in Self.cases {
            let target = "/v1/" + documents + path
            let text = body?.replacingOccurrences(of: "$D", with: documents)
            let expected = try await RawHTTP.send(method, reference.base + target, text, authorization: authorization)
            let found = try await RawHTTP.send(method, flint + target, text, authorization: authorization)
            let label = "\(method) \(path.prefix(60)) \(body?.prefix(120) ?? "") as \(authorization.prefix(12))"
            #expect(found.status == expected.status, "\(label): \(RawHTTP.message(found.json) ?? "") / \(RawHTTP.message(expected.json) ?? "")")
            if expected.status >= 400 {
                refused += 1
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(label)")
            }
        }
        #expect(refused > 15 && refused < Self.cases.count - 8, "both sides of each limit are compared")
    }

    /// Rules bodies of another shape: the reference answers 400 (or a bare 500 when "rules" is
    /// missing); Flint answers 400 naming the field, and loads nothing.
    @Test func rulesBodiesOfAnotherShapeAreRefused() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "rules body shape") else { return }
        defer { stop() }
        let content = #""content": "rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { match /c/{id} { allow read: if false; } } }""#
        let bodies = [
            #"{"rules": {"files": [{\#(content)}]}, "name": "x"}"#,
            #"{"rules": {"files": [{\#(content)}], "metadata": {}}}"#,
            #"{"rules": {"files": [{\#(content), "bogus": 1}]}}"#,
            #"{"rules": {"files": [{\#(content), "fingerprint": "!!"}]}}"#,
            #"{"rules": {"files": [{\#(content)}]}, "database": "(default)"}"#,
            #"{"rules": []}"#,
            "{",
        ]
        for body in bodies {
            let expected = try await RawHTTP.send("PUT", reference.base + "/emulator/v1/projects/flint-shape:securityRules", body)
            let found = try await RawHTTP.send("PUT", flint + "/emulator/v1/projects/flint-shape:securityRules", body)
            #expect(expected.status == 400 && found.status == 400, "\(body): \(RawHTTP.message(found.json) ?? "")")
        }
        let accepted = #"{"rules": {"files": [{\#(content), "name": "firestore.rules", "fingerprint": "AAAA"}]}, "database": "projects/flint-shape/databases/(default)"}"#
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.send("PUT", base + "/emulator/v1/projects/flint-shape:securityRules", accepted).status == 200)
            let read = try await RawHTTP.send("GET", base + "/v1/projects/flint-shape/databases/(default)/documents/c/a", nil, authorization: Self.user)
            #expect(read.status == 403, "\(base)")
        }
    }
}
