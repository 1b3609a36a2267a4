import Foundation
import Testing

/// Reserved names and `__name__` in the field paths and operands of queries and aggregations,
/// and in masks and transforms, sent as raw REST to the reference and to Flint: the same status
/// and, when refused, the same message, including which fault a query with several is told.
struct QueryNamesDifferentialTests {
    static func filter(_ field: String, _ op: String = "EQUAL", _ value: String = #"{"integerValue": "1"}"#) -> String {
        #"{"fieldFilter": {"field": {"fieldPath": "\#(field)"}, "op": "\#(op)", "value": \#(value)}}"#
    }

    static func unary(_ field: String, _ op: String) -> String {
        #"{"unaryFilter": {"field": {"fieldPath": "\#(field)"}, "op": "\#(op)"}}"#
    }

    static func and(_ filters: String...) -> String {
        #"{"compositeFilter": {"op": "AND", "filters": [\#(filters.joined(separator: ", "))]}}"#
    }

    static func order(_ fields: String...) -> String {
        #""orderBy": [\#(fields.map { #"{"field": {"fieldPath": "\#($0)"}}"# }.joined(separator: ", "))]"#
    }

    static func select(_ field: String) -> String { #""select": {"fields": [{"fieldPath": "\#(field)"}]}"# }

    static func reference(_ project: String, _ database: String = "(default)") -> String {
        #"{"referenceValue": "projects/\#(project)/databases/\#(database)/documents/c/a"}"#
    }

    static let own = reference("flint-names")
    static let vector = #"{"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1}]}}}}}"#

    static func nearest(_ field: String, distance: String? = nil) -> String {
        let extra = distance.map { #", "distanceResultField": "\#($0)""# } ?? ""
        return #""findNearest": {"vectorField": {"fieldPath": "\#(field)"}, "queryVector": \#(vector), "distanceMeasure": "EUCLIDEAN", "limit": 3\#(extra)}"#
    }

    /// The parts of a structured query after `from`.
    static let queries: [String] = [
        #""where": \#(filter("__foo__"))"#,
        #""where": \#(filter("a.__foo__.b"))"#,
        #""where": \#(filter("__foo__.__name__"))"#,
        #""where": \#(filter("__name__.__foo__"))"#,
        #""where": \#(filter("`a.b`.__foo__"))"#,
        #""where": \#(filter("__key__.a"))"#,
        #""where": \#(filter("____"))"#,
        #""where": \#(filter("_____"))"#,
        #""where": \#(filter("__id5__"))"#,
        #""where": \#(unary("__foo__", "IS_NAN"))"#,
        #""where": \#(unary("__name__", "IS_NULL"))"#,
        #""where": \#(unary("__name__", "IS_NOT_NULL"))"#,
        #""where": \#(unary("__name__", "IS_NAN"))"#,
        #""where": \#(unary("__name__", "IS_NOT_NAN"))"#,
        #""where": \#(filter("__name__.x"))"#,
        #""where": \#(filter("a.__name__"))"#,
        #""where": \#(filter("__name__", "EQUAL", own))"#,
        #""where": \#(filter("__name__", "EQUAL", reference("zz")))"#,
        #""where": \#(filter("__name__", "GREATER_THAN", reference("flint-names", "other")))"#,
        #""where": \#(filter("__name__", "IN", "{\"arrayValue\": {\"values\": [\(own), \(reference("zz"))]}}"))"#,
        #""where": \#(filter("__name__", "NOT_EQUAL", "{\"nullValue\": null}"))"#,
        #""where": \#(filter("r", "EQUAL", reference("zz")))"#,
        #"\#(order("__name__")), "startAt": {"values": [\#(reference("zz"))]}"#,
        #"\#(order("__name__")), "endAt": {"values": [\#(own)]}"#,
        order("__foo__"),
        order("x.__name__"),
        order("`__name__`"),
        select("__foo__"),
        select("__name__.x"),
        select("__name__"),
        // Several faults: which one is told.
        #""where": \#(and(filter("__foo__"), filter("__key__")))"#,
        #""where": \#(and(filter("__name__.x"), filter("__key__")))"#,
        #""where": \#(and(filter("__name__.x"), filter("__foo__")))"#,
        #""where": \#(filter("__key__")), \#(order("__foo__"))"#,
        #""where": \#(filter("__bar__")), \#(order("__foo__"))"#,
        #""where": \#(filter("__bar__")), \#(select("__foo__"))"#,
        #"\#(order("__bar__")), \#(select("__foo__"))"#,
        #""where": \#(filter("__bar__")), "limit": -1"#,
        #""where": \#(filter("__name__.x")), "limit": -1"#,
        #""where": \#(filter("__name__.x")), \#(order("a", "a"))"#,
        #""where": \#(filter("__name__")), \#(order("a", "a"))"#,
        #""where": \#(filter("__name__")), \#(select("__name__.x"))"#,
        #""where": \#(filter("__name__", "EQUAL", reference("zz"))), \#(order("a", "a"))"#,
        #""where": \#(and(filter("__name__", "EQUAL", reference("zz")), filter("__name__")))"#,
        #""where": \#(and(filter("__name__"), filter("__name__", "EQUAL", reference("zz"))))"#,
        nearest("__foo__"),
        nearest("__name__.x"),
        nearest("v", distance: "__foo__"),
        nearest("v", distance: "__name__"),
        nearest("v", distance: "a.__foo__"),
    ]

    /// Aggregations, each with the parts of its query after `from`.
    static let aggregations: [(String, String)] = [
        (#"{"alias": "s", "sum": {"field": {"fieldPath": "__name__"}}}"#, ""),
        (#"{"alias": "s", "sum": {"field": {"fieldPath": "__name__.x"}}}"#, ""),
        (#"{"alias": "s", "avg": {"field": {"fieldPath": "a.__foo__"}}}"#, ""),
        (#"{"alias": "s", "avg": {"field": {"fieldPath": "__key__"}}}"#, ""),
        (#"{"alias": "s", "sum": {"field": {"fieldPath": "__name__.x"}}}, {"alias": "t", "avg": {"field": {"fieldPath": "__foo__"}}}"#, ""),
        (#"{"alias": "t", "avg": {"field": {"fieldPath": "__foo__"}}}"#, #", "where": \#(filter("__bar__"))"#),
        (#"{"alias": "t", "avg": {"field": {"fieldPath": "____"}}}"#, ""),
    ]

    @Test func reservedNamesInQueriesAreRefusedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "query names") else { return }
        defer { stop() }
        let documents = "/v1/projects/flint-names/databases/(default)/documents"
        var bodies = Self.queries.map { (":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], \#($0)}}"#) }
        bodies += Self.aggregations.map { aggregations, parts in
            (":runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]\#(parts)}, "aggregations": [\#(aggregations)]}}"#)
        }
        var refused = 0
        for (method, body) in bodies {
            let expected = try await RawHTTP.send("POST", reference.base + documents + method, body)
            let found = try await RawHTTP.send("POST", flint + documents + method, body)
            #expect(found.status == expected.status, "\(body): \(RawHTTP.message(found.json) ?? "") / \(RawHTTP.message(expected.json) ?? "")")
            if expected.status >= 400 {
                refused += 1
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(body)")
            }
        }
        #expect(refused > 40 && refused < bodies.count - 8, "both accepted and refused names are compared")
    }

    /// Read and update masks, and transforms. Not here: `__name__` in an update mask or in a
    /// transform, which the reference lets through (a transform then stores a field named
    /// `__key__`) and Flint refuses.
    @Test func reservedNamesInMasksAndTransformsAreRefusedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "mask names") else { return }
        defer { stop() }
        let documents = "projects/flint-names/databases/(default)/documents"
        var requests: [(String, String, String?)] = []
        for path in ["__foo__", "a.__foo__.b", "__foo__.__name__", "__key__", "a.__name__", "__name__.a", "__name__", "____"] {
            let query = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path
            requests.append(("GET", "/c/a?mask.fieldPaths=\(query)", nil))
            requests.append(("POST", ":batchGet", #"{"documents": ["\#(documents)/c/a"], "mask": {"fieldPaths": ["\#(path)"]}}"#))
            if !path.contains("__name__") {
                requests.append(("PATCH", "/c/a?updateMask.fieldPaths=\(query)", #"{"fields": {}}"#))
                requests.append((
                    "POST", ":commit",
                    #"{"writes": [{"transform": {"document": "\#(documents)/c/a", "fieldTransforms": [{"fieldPath": "\#(path)", "increment": {"integerValue": "1"}}]}}]}"#
                ))
            } else if path != "__name__" {
                requests.append(("PATCH", "/c/a?updateMask.fieldPaths=\(query)", #"{"fields": {}}"#))
            }
        }
        for (method, path, body) in requests {
            let target = "/v1/" + documents + path
            let expected = try await RawHTTP.send(method, reference.base + target, body)
            let found = try await RawHTTP.send(method, flint + target, body)
            #expect(found.status == expected.status, "\(method) \(path) \(body ?? ""): \(RawHTTP.message(found.json) ?? "")")
            if expected.status >= 400 { #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(method) \(path) \(body ?? "")") }
        }
    }

    /// `distanceResultField` names one top-level field, whatever its spelling: dots, backquotes
    /// and characters a path would refuse are part of the name.
    @Test func theDistanceFieldIsANameNotAPath() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "distance field names") else { return }
        defer { stop() }
        let documents = "projects/flint-distance-names/databases/(default)/documents"
        let commit = #"{"writes": [{"update": {"name": "\#(documents)/c/a", "fields": {"v": \#(Self.vector), "a": {"mapValue": {"fields": {"b": {"integerValue": "1"}}}}}}}]}"#
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.send("POST", base + "/v1/" + documents + ":commit", commit).status == 200)
        }
        var answered = 0
        for name in ["d", "a.b", "a", "`a b`", "a b", "1a", "\u{1F600}", "`__x__`", "a.__x__", "__x__", "x.`y`.z"] {
            let body = #"{"structuredQuery": {"from": [{"collectionId": "c"}], \#(Self.nearest("v", distance: name))}}"#
            let target = "/v1/" + documents + ":runQuery"
            let expected = try await RawHTTP.send("POST", reference.base + target, body)
            let found = try await RawHTTP.send("POST", flint + target, body)
            #expect(found.status == expected.status, "\(name): \(RawHTTP.message(found.json) ?? "")")
            if expected.status == 200 {
                answered += 1
                #expect(Self.fieldsOfFirstDocument(found.json) == Self.fieldsOfFirstDocument(expected.json), "\(name)")
            } else {
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(name)")
            }
        }
        #expect(answered == 10)
    }

    /// The first returned document's fields as sorted JSON text.
    static func fieldsOfFirstDocument(_ json: Any?) -> String? {
        guard let rows = json as? [[String: Any]], let fields = (rows.first?["document"] as? [String: Any])?["fields"],
            let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Nearest-neighbour searches without a collection id, directly below a parent and at any
    /// depth, are served as on the reference: the same documents, order and distances.
    @Test func nearestNeighboursWithoutACollectionID() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "kindless vector search") else { return }
        defer { stop() }
        let documents = "projects/flint-kindless-nearest/databases/(default)/documents"
        func vector(_ x: Int, _ y: Int) -> String {
            #"{"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": \#(x)}, {"doubleValue": \#(y)}]}}}}}"#
        }
        let writes = [("c/a", vector(1, 2)), ("d/b", vector(1, 3)), ("c/a/s/x", vector(2, 2)), ("e/f", #"{"integerValue": "1"}"#)]
            .map { #"{"update": {"name": "\#(documents)/\#($0.0)", "fields": {"v": \#($0.1)}}}"# }
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.send("POST", base + "/v1/" + documents + ":commit", #"{"writes": [\#(writes.joined(separator: ", "))]}"#).status == 200)
        }
        let nearest = #""findNearest": {"vectorField": {"fieldPath": "v"}, "queryVector": \#(vector(1, 2)), "distanceMeasure": "EUCLIDEAN", "limit": 5, "distanceResultField": "d"}"#
        let requests = [
            ("", #"{"structuredQuery": {\#(nearest)}}"#),
            ("", #"{"structuredQuery": {"from": [{"allDescendants": true}], \#(nearest)}}"#),
            ("/c/a", #"{"structuredQuery": {\#(nearest)}}"#),
            ("", #"{"structuredQuery": {"where": {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "GREATER_THAN", "value": {"referenceValue": "\#(documents)/c/a"}}}, \#(nearest)}}"#),
        ]
        for (parent, body) in requests {
            let target = "/v1/" + documents + parent + ":runQuery"
            let expected = try await RawHTTP.send("POST", reference.base + target, body)
            let found = try await RawHTTP.send("POST", flint + target, body)
            #expect(found.status == 200 && expected.status == 200, "\(body): \(RawHTTP.message(found.json) ?? "")")
            #expect(Self.namesAndDistances(found.json) == Self.namesAndDistances(expected.json), "\(body)")
        }
    }

    /// Each returned document's name below the database, with its distance field.
    static func namesAndDistances(_ json: Any?) -> [String] {
        (json as? [[String: Any]] ?? []).compactMap { row in
            guard let document = row["document"] as? [String: Any], let name = document["name"] as? String else { return nil }
            let distance = ((document["fields"] as? [String: Any])?["d"] as? [String: Any])?["doubleValue"].map { "\($0)" } ?? "-"
            return (name.components(separatedBy: "/documents/").last ?? name) + " " + distance
        }
    }
}
