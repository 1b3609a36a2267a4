import Foundation
import Testing

/// The limit of 100 filters, orders and ancestor, counted as the reference counts it, and the
/// order in which the reference tells a query's faults when it has two: raw REST queries sent to
/// the reference and to a Flint server, the same status and message for each.
struct QueryLimitsDifferentialTests {
    static func equal(_ field: String, _ value: String = #"{"integerValue": "1"}"#) -> String {
        #"{"fieldFilter": {"field": {"fieldPath": "\#(field)"}, "op": "EQUAL", "value": \#(value)}}"#
    }
    static func list(_ field: String, _ op: String, _ values: [Int]) -> String {
        let items = values.map { #"{"integerValue": "\#($0)"}"# }.joined(separator: ", ")
        return #"{"fieldFilter": {"field": {"fieldPath": "\#(field)"}, "op": "\#(op)", "value": {"arrayValue": {"values": [\#(items)]}}}}"#
    }
    static func notEqual(_ field: String) -> String {
        #"{"fieldFilter": {"field": {"fieldPath": "\#(field)"}, "op": "NOT_EQUAL", "value": {"integerValue": "1"}}}"#
    }
    static func contains(_ field: String) -> String {
        #"{"fieldFilter": {"field": {"fieldPath": "\#(field)"}, "op": "ARRAY_CONTAINS", "value": {"integerValue": "1"}}}"#
    }
    static func composite(_ op: String, _ filters: [String]) -> String {
        #"{"compositeFilter": {"op": "\#(op)", "filters": [\#(filters.joined(separator: ", "))]}}"#
    }
    static func equalities(_ n: Int, from: Int = 0) -> [String] { (from..<from + n).map { equal("f\($0)") } }
    static func orders(_ fields: [String]) -> String {
        #""orderBy": [\#(fields.map { #"{"field": {"fieldPath": "\#($0)"}}"# }.joined(separator: ", "))]"#
    }
    static func query(_ parts: String...) -> String {
        #"{"structuredQuery": {"from": [{"collectionId": "c"}]\#(parts.map { ", " + $0 }.joined())}}"#
    }
    static func `where`(_ filter: String) -> String { #""where": \#(filter)"# }

    static let big = #"{"stringValue": "\#(String(repeating: "x", count: 1600))"}"#
    static let oneValueCursor = #""startAt": {"values": [{"integerValue": "1"}]}"#
    static let twoValueCursor = #""startAt": {"values": [{"integerValue": "1"}, {"integerValue": "1"}]}"#
    static let nameIsString = equal("__name__", #"{"stringValue": "x"}"#)
    static let nameReference = #"{"referenceValue": "projects/flint-query-limits/databases/(default)/documents/c/d"}"#
    static let nameEquals = equal("__name__", nameReference)
    static func greater(_ field: String, _ value: String = #"{"integerValue": "1"}"#) -> String {
        #"{"fieldFilter": {"field": {"fieldPath": "\#(field)"}, "op": "GREATER_THAN", "value": \#(field == "__name__" ? nameReference : value)}}"#
    }
    static let nameContains =
        #"{"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "ARRAY_CONTAINS", "value": {"referenceValue": "projects/flint-query-limits/databases/(default)/documents/c/d"}}}"#

    /// Path below the documents root, and the body.
    static var cases: [(String, String)] {
        let and = { (filters: [String]) in Self.where(composite("AND", filters)) }
        return [
            ("", query(and(equalities(100)))),
            ("", query(and(equalities(101)))),
            ("", query(and(equalities(50)), orders((0..<51).map { "o\($0)" }))),
            ("", query(and(equalities(100)), orders(["__name__"]))),
            ("/p/1", query(and(equalities(99)))),
            ("/p/1", query(and(equalities(100)))),
            ("/p/1", query(and(equalities(99)), orders(["o"]))),
            ("", query(and(equalities(91) + [list("n", "NOT_IN", Array(0..<10))]))),
            ("", query(and(equalities(71) + [list("a", "ARRAY_CONTAINS_ANY", Array(0..<30))]))),
            ("", query(and(equalities(100) + [list("f1", "IN", [1])]))),
            ("", query(and(equalities(100) + [equal("f1", #"{"doubleValue": 1}"#)]))),
            ("", query(and(equalities(99) + [list("x", "IN", [1, 2]), list("x", "IN", [2, 1])]))),
            ("", query(and(Array(repeating: equal("v"), count: 101)))),
            ("", query(Self.where(composite("OR", Array(repeating: equal("v"), count: 101))))),
            ("", query(Self.where(composite("OR", (0..<31).map { equal("v", #"{"integerValue": "\#($0 % 2)"}"#) })))),
            ("", query(Self.where(composite("OR", [composite("AND", equalities(60)), composite("AND", equalities(60).reversed())])))),
            ("", query(Self.where(composite("OR", [composite("AND", equalities(60)), composite("AND", equalities(60) + [equal("g")])])))),
            ("", query(and(equalities(60) + [composite("AND", equalities(41))]))),
            ("", query(and([list("a", "IN", Array(0..<6)), list("a", "IN", Array(0..<6))]))),
            ("", query(and(equalities(98) + [#"{"fieldFilter": {"field": {"fieldPath": "z"}, "op": "GREATER_THAN", "value": {"integerValue": "1"}}}"#]))),
            // Two faults: the one the reference tells first.
            ("", query(and([equal("s", big), list("n1", "NOT_IN", [1]), list("n2", "NOT_IN", [1])]))),
            ("", query(and([equal("__name__", #"{"stringValue": "x"}"#), list("n1", "NOT_IN", [1]), list("n2", "NOT_IN", [1])]))),
            ("", query(and([#"{"fieldFilter": {"field": {"fieldPath": "a1"}, "op": "ARRAY_CONTAINS", "value": {"integerValue": "1"}}}"#,
                            #"{"fieldFilter": {"field": {"fieldPath": "a2"}, "op": "ARRAY_CONTAINS", "value": {"integerValue": "1"}}}"#]), oneValueCursor)),
            ("", query(orders(["o", "o"]), #""startAt": {"values": [{"integerValue": "1"}, {"integerValue": "1"}, {"integerValue": "1"}]}"#)),
            ("", query(orders(["__name__", "o"]), oneValueCursor.replacingOccurrences(of: "]}", with: #", {"integerValue": "1"}, {"integerValue": "1"}]}"#))),
            ("", query(and(equalities(101)), orders(["__name__", "x"]))),
            ("", query(and(equalities(101)), orders(["o", "o"]))),
            ("", query(and(equalities(100) + [equal("s", big)]))),
            ("", query(and(equalities(100) + [list("n1", "IN", Array(0..<30)), list("n2", "IN", [1, 2])]))),
            ("", query(and(equalities(99) + [#"{"fieldFilter": {"field": {"fieldPath": "a1"}, "op": "ARRAY_CONTAINS", "value": {"integerValue": "1"}}}"#,
                                             #"{"fieldFilter": {"field": {"fieldPath": "a2"}, "op": "ARRAY_CONTAINS", "value": {"integerValue": "1"}}}"#]))),
            ("", query(and([equal("s", big), list("n1", "IN", Array(0..<30)), list("n2", "IN", [1, 2])]))),
            ("", query(and([equal("s", big)]), orders(["o", "o"]))),
            ("", query(and([list("n1", "IN", Array(0..<30)), list("n2", "IN", [1, 2])]), orders(["o", "o"]))),
            ("", query(and(equalities(101)), oneValueCursor)),
            // What `__name__` is compared with is told after cursors, the nearest-neighbour
            // search, the count of filters and array-contains, and before operand sizes.
            ("", query(Self.where(nameIsString), orders(["a"]), twoValueCursor)),
            ("", query(Self.where(#"{"unaryFilter": {"field": {"fieldPath": "__name__"}, "op": "IS_NULL"}}"#), orders(["a"]), twoValueCursor)),
            ("", query(Self.where(nameContains), orders(["a"]), twoValueCursor)),
            ("", query(and([nameIsString] + equalities(101)))),
            ("", query(and([nameContains] + equalities(101)))),
            ("", query(and([nameContains, #"{"fieldFilter": {"field": {"fieldPath": "b"}, "op": "ARRAY_CONTAINS", "value": {"integerValue": "1"}}}"#]))),
            ("", query(and([list("b", "ARRAY_CONTAINS_ANY", [1]), nameIsString, #"{"fieldFilter": {"field": {"fieldPath": "a"}, "op": "ARRAY_CONTAINS", "value": {"integerValue": "1"}}}"#]))),
            ("", query(and([nameIsString, equal("s", big)]))),
            // An equality on `__name__` beside inequalities on other fields, unless the key is
            // among the inequalities: told after the kindless rules, before disjunctions and order.
            ("", query(and([nameEquals, greater("a")]))),
            ("", query(and([#"{"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "IN", "value": {"arrayValue": {"values": [\#(nameReference)]}}}}"#, #"{"unaryFilter": {"field": {"fieldPath": "a"}, "op": "IS_NOT_NAN"}}"#]))),
            ("", query(Self.where(composite("OR", [nameEquals, greater("a")])))),
            ("", query(and([nameEquals, greater("a"), greater("__name__")]))),
            ("", query(and([nameEquals, #"{"fieldFilter": {"field": {"fieldPath": "a"}, "op": "NOT_EQUAL", "value": {"nullValue": null}}}"#]))),
            ("", query(and([nameEquals, greater("a"), list("b", "IN", Array(0..<6)), list("c", "IN", Array(0..<6))]))),
            ("", query(and([nameEquals, greater("a")]), orders(["__name__", "a"]))),
            ("", query(and([nameEquals, greater("a")]), orders(["b", "b"]))),
            ("", query(Self.where(nameIsString), #""findNearest": {"vectorField": {"fieldPath": "v"}, "queryVector": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1}]}}}}}, "distanceMeasure": "EUCLIDEAN", "limit": 0}"#)),
        ]
    }

    @Test func queriesAreCountedAndRefusedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "query limits") else { return }
        defer { stop() }
        let root = "/v1/projects/flint-query-limits/databases/(default)/documents"
        var refused = 0
        for (parent, body) in Self.cases {
            let expected = try await RawHTTP.send("POST", reference.base + root + parent + ":runQuery", body)
            let found = try await RawHTTP.send("POST", flint + root + parent + ":runQuery", body)
            let label = String(body.prefix(160))
            #expect(found.status == expected.status, "\(parent) \(label)")
            #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(parent) \(label)")
            if expected.status != 200 { refused += 1 }
        }
        #expect(refused == Self.cases.count - 10)
    }
}

/// Queries and aggregations with two faults each, over REST on both servers: the reference
/// reads a query's shape first (names, lists, `!=` rules, cursors, the vector search), then an
/// aggregation's own checks, then offset and limit and the rest.
struct QueryCheckOrderDifferentialTests {
    typealias Q = QueryLimitsDifferentialTests

    static let in31 = Q.list("a", "IN", Array(0..<31))
    static let twoNotEqual = Q.composite("AND", [Q.notEqual("a"), Q.notEqual("b")])
    static let nameInPath = Q.equal("__name__.x")
    static let nameIsString = Q.nameIsString
    static let cursor = #""orderBy": [{"field": {"fieldPath": "a"}}], "startAt": {"values": [{"integerValue": "1"}, {"integerValue": "1"}]}"#
    static let duplicateOrder = Q.orders(["b", "b"])
    static let badNearest =
        #""findNearest": {"vectorField": {"fieldPath": "v"}, "queryVector": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1}]}}}}}, "distanceMeasure": "EUCLIDEAN", "limit": 0}"#
    static let contains2 = Q.composite("AND", [nameInPath, Q.contains("a"), Q.contains("b")])

    static var queries: [String] {
        [
            Q.query(#""limit": -1"#, Q.where(in31)), Q.query(#""limit": -1"#, cursor), Q.query(#""limit": -1"#, duplicateOrder),
            Q.query(#""limit": -1"#, Q.where(twoNotEqual)), Q.query(#""offset": -1"#, Q.where(in31)), Q.query(#""limit": -1"#, Q.where(nameIsString)),
            Q.query(#""limit": -1"#, badNearest), Q.query(#""offset": -1"#, badNearest), Q.query(#""limit": -1"#, #""offset": -1"#),
            Q.query(#""limit": -1"#, #""select": {"fields": [{"fieldPath": "__name__.x"}]}"#),
            Q.query(Q.where(nameInPath), cursor), Q.query(Q.where(Q.composite("AND", [nameInPath, in31]))), Q.query(Q.where(contains2)),
            Q.query(Q.where(Q.composite("AND", [nameIsString, nameInPath]))), Q.query(Q.where(Q.composite("AND", [nameInPath, nameIsString]))),
            Q.query(Q.where(nameInPath), badNearest),
            Q.query(Q.where(#"{"unaryFilter": {"field": {"fieldPath": "__name__.x"}, "op": "IS_NULL"}}"#), #""limit": -1"#),
        ]
    }

    static func aggregation(_ parts: [String], _ aggregations: [String]) -> String {
        #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]\#(parts.map { ", " + $0 }.joined())}, "aggregations": [\#(aggregations.joined(separator: ", "))]}}"#
    }

    static var aggregations: [String] {
        let sum = { (field: String) in #"{"alias": "s", "sum": {"field": {"fieldPath": "\#(field)"}}}"# }
        let count = #"{"alias": "s", "count": {}}"#
        let select = #""select": {"fields": [{"fieldPath": "x"}]}"#
        return [
            aggregation([select, cursor], [sum("a")]), aggregation([select, Q.where(twoNotEqual)], [sum("a")]),
            aggregation([select, Q.where(in31)], [sum("a")]), aggregation([select, #""limit": -1"#], [sum("a")]),
            aggregation([select, Q.where(nameIsString)], [sum("a")]),
            aggregation([Q.where(in31)], [count, count]), aggregation([Q.where(nameIsString)], [count, count]),
            aggregation([Q.where(in31)], [#"{"alias": "__s__", "count": {}}"#]), aggregation([Q.where(in31)], [sum("__name__")]),
            aggregation([Q.where(nameIsString)], [sum("__name__")]), aggregation([Q.where(in31)], [#"{"alias": "s", "count": {"upTo": "-1"}}"#]),
            aggregation([Q.where(in31)], (0..<6).map { #"{"alias": "s\#($0)", "count": {}}"# }), aggregation([Q.where(in31)], []),
            aggregation([#""limit": -1"#], [count, count]), aggregation([duplicateOrder], [sum("__name__")]),
        ]
    }

    @Test func faultsAreToldInTheReferencesOrder() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "query check order") else { return }
        defer { stop() }
        let root = "/v1/projects/flint-check-order/databases/(default)/documents"
        let requests = Self.queries.map { (":runQuery", $0) } + Self.aggregations.map { (":runAggregationQuery", $0) }
        for (method, body) in requests {
            let expected = try await RawHTTP.send("POST", reference.base + root + method, body)
            let found = try await RawHTTP.send("POST", flint + root + method, body)
            #expect(expected.status == 400, "\(body.prefix(200))")
            #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(body.prefix(200))")
        }
    }
}

/// Disjunctions counted as the reference counts them (shared values, conjunctions as sets, parts
/// of an AND that come out the same, `-0.0` and `0.0`, operands no value meets, more than 60
/// refused before expanding), and what comes first beside an equality on `__name__`: sent by
/// the owner and by a caller held to rules, for whom the reference counts disjunctions first.
struct DisjunctionCountDifferentialTests {
    typealias Q = QueryLimitsDifferentialTests

    static func and(_ filters: [String]) -> String { Q.where(Q.composite("AND", filters)) }
    static func or(_ filters: [String]) -> String { Q.composite("OR", filters) }
    static func ints(_ values: some Sequence<Int>) -> [Int] { Array(values) }
    static func filter(_ field: String, _ op: String, _ value: String) -> String {
        #"{"fieldFilter": {"field": {"fieldPath": "\#(field)"}, "op": "\#(op)", "value": \#(value)}}"#
    }
    static func has(_ field: String, _ value: Int) -> String { filter(field, "ARRAY_CONTAINS", #"{"integerValue": "\#(value)"}"#) }
    static func zero(_ sign: String) -> String { filter("a", "EQUAL", #"{"doubleValue": \#(sign)0.0}"#) }

    static var cases: [String] {
        let z16 = Q.list("z", "IN", ints(0..<16))
        var filters: [String] = []
        filters.append(and([or([Q.equal("a"), Q.list("a", "IN", [1, 2])]), z16]))
        filters.append(and([Q.list("a", "IN", ints(1...7)), Q.list("a", "IN", ints(2...8))]))
        filters.append(and([Q.list("a", "IN", ints(1...6)), Q.list("a", "IN", [1, 2, 3, 4, 5, 7])]))
        filters.append(and([Q.list("a", "IN", ints(1...6)), Q.list("a", "IN", [1, 2, 3, 4, 5, 7]), Q.list("c", "IN", [1, 2])]))
        filters.append(and([Q.list("a", "IN", ints(1...8)), or((1...8).map { Q.equal("a", #"{"integerValue": "\#($0)"}"#) })]))
        filters.append(and([or([Q.composite("AND", [Q.equal("a"), Q.equal("a")]), Q.equal("a")]), Q.list("z", "IN", ints(0..<30))]))
        filters.append(and([or([has("c", 1), Q.list("c", "ARRAY_CONTAINS_ANY", [1, 2])]), z16]))
        filters.append(and([or([zero("-"), zero("")]), z16]))
        filters.append(and([Q.list("a", "IN", ints(0..<7)), Q.list("b", "IN", ints(0..<9))]))
        filters.append(and([Q.list("a", "IN", ints(0..<2)), Q.list("b", "IN", ints(0..<30))]))
        filters.append(Q.where(or([Q.list("a", "IN", ints(0..<30)), Q.list("b", "IN", ints(0..<30)), Q.equal("c")])))
        filters.append(and([Q.list("c", "ARRAY_CONTAINS_ANY", [1, 2]), or([has("c", 2), has("c", 1)])]))
        filters.append(and([has("c", 1), or([has("c", 1)])]))
        filters.append(and([Q.list("c", "ARRAY_CONTAINS_ANY", [1]), or([or([has("c", 1)])])]))
        // Operands no value meets (null, NaN; for array-contains an empty array too).
        let null = #"{"nullValue": null}"#, nan = #"{"doubleValue": "NaN"}"#, empty = #"{"arrayValue": {}}"#
        filters.append(and([filter("c", "ARRAY_CONTAINS", nan), filter("c", "ARRAY_CONTAINS", empty)]))
        filters.append(and([or([filter("a", "EQUAL", null), filter("a", "GREATER_THAN", nan)]), z16]))
        let unmet = #"{"arrayValue": {"values": [\#(null), \#(nan), \#(empty), {"stringValue": "s"}]}}"#
        filters.append(and([filter("c", "ARRAY_CONTAINS_ANY", unmet), z16]))
        filters.append(and(Q.equalities(99) + [filter("c", "ARRAY_CONTAINS", nan), filter("c", "ARRAY_CONTAINS", null)]))
        filters.append(and([Q.nameEquals, Q.greater("a"), Q.list("b", "IN", ints(0..<6)), Q.list("c", "IN", ints(0..<6))]))
        filters.append(and([Q.list("b", "IN", ints(0..<8)), Q.list("c", "IN", ints(0..<8)), Q.greater("a"), Q.nameEquals]))
        return filters.map { Q.query($0) }
    }

    @Test func disjunctionsAreCountedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "disjunctions") else { return }
        defer { stop() }
        let root = "/v1/projects/flint-query-limits/databases/(default)/documents:runQuery"
        var refused = 0
        for authorization in ["Bearer owner", nil] {
            for body in Self.cases {
                let expected = try await RawHTTP.send("POST", reference.base + root, body, authorization: authorization)
                let found = try await RawHTTP.send("POST", flint + root, body, authorization: authorization)
                #expect(found.status == expected.status, "\(authorization ?? "no auth") \(body)")
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(authorization ?? "no auth") \(body)")
                if expected.status != 200 { refused += 1 }
            }
        }
        #expect(refused == 2 * 12)
    }
}
