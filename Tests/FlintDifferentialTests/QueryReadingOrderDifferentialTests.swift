import Foundation
import Testing

/// Queries and aggregations with several faults each, or one the reference finds before it
/// reads another part, sent as raw REST to the reference and to Flint: the same fault is told.
/// The reference reads an aggregation's own fields first, then the query part by part (the
/// collection, the filters, the projection, the order, each cursor, the nearest-neighbour
/// search), checking each part before reading the next; within the filters it checks the rules
/// across filters on the operators before it reads any field or value.
struct QueryReadingOrderDifferentialTests {
    static let long = String(repeating: "x", count: 1501)
    static let queries: [String] = [
        // A collection id's length is told once the whole query is read.
        #"{"from":[{"collectionId":"\#(long)"}],"limit":-1}"#,
        #"{"from":[{"collectionId":"\#(long)","allDescendants":true}],"offset":-1}"#,
        #"{"from":[{"collectionId":"\#(long)"}],"orderBy":[{"field":{"fieldPath":"__x__"}}]}"#,
        #"{"from":[{"collectionId":"\#(long)"}],"select":{"fields":[{"fieldPath":"__x__"}]}}"#,
        #"{"from":[{"collectionId":"\#(long)"}],"startAt":{"values":[{"integerValue":"1"}]}}"#,
        #"{"from":[{"collectionId":"\#(long)"}],"where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"integerValue":"1"}}}}"#,
        #"{"from":[{"collectionId":"\#(long)"}],"where":{"fieldFilter":{"field":{"fieldPath":"__name__"},"op":"EQUAL","value":{"stringValue":"x"}}}}"#,
        #"{"from":[{"collectionId":"\#(long)"}],"orderBy":[{"field":{"fieldPath":"a"}},{"field":{"fieldPath":"a"}}]}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"op":"EQUAL"}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a b"},"value":{}}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a"},"value":{"arrayValue":{"values":[{}]}}}}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":""},"queryVector":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"doubleValue":1}]}}}}},"distanceMeasure":"COSINE"}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":"v"},"queryVector":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"doubleValue":1}]}}}}}}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":"v"},"queryVector":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{}]}}}}},"limit":1}}"#,
        #"{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"a b"}}],"select":{"fields":[{"fieldPath":"c d"}]}}"#,
        #"{"from":[{"collectionId":"c"}],"startAt":{"values":[{}]},"endAt":{"values":[{"arrayValue":{"values":[{}]}}]}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"EQUAL","value":{"integerValue":"1"}}},"findNearest":{"vectorField":{"fieldPath":"v"},"queryVector":{},"limit":1}}"#,
        #"{"from":[{"collectionId":"c"}],"startAt":{"values":[{}]},"findNearest":{"vectorField":{"fieldPath":"v"},"queryVector":{},"limit":1}}"#,
        #"{"from":[{"collectionId":"c"}],"limit":-1,"findNearest":{"vectorField":{"fieldPath":"v"},"queryVector":{},"limit":1}}"#,
        #"{"from":[{"collectionId":"c"}],"offset":-1,"where":{"fieldFilter":{}}}"#,
        #"{"from":[{"collectionId":"__x__"}],"where":{"fieldFilter":{}}}"#,
        #"{"from":[{"collectionId":"c"}],"select":{"fields":[{"fieldPath":"c d"}]},"where":{"fieldFilter":{"field":{"fieldPath":"a b"}}}}"#,
        #"{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"a"}}],"startAt":{"values":[{}]},"endAt":{"values":[{"integerValue":"1"},{"integerValue":"1"}]}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":"v"},"queryVector":{},"limit":0}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":"v"},"queryVector":{"arrayValue":{}},"limit":0}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":"v"},"queryVector":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[]}}}}},"limit":0,"distanceMeasure":"COSINE"}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":"v"},"queryVector":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[]}}}}},"limit":1}}"#,
        #"{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"a"},"direction":5}],"startAt":{"values":[{},{}]}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"__x__"},"op":"EQUAL","value":{"integerValue":"1"}}},"select":{"fields":[{"fieldPath":"c d"}]}}"#,
        #"{"from":[{"collectionId":"c/d"}],"where":{"fieldFilter":{"field":{"fieldPath":"__x__"},"op":"EQUAL","value":{"integerValue":"1"}}}}"#,
        #"{"from":[{"collectionId":"c"}],"select":{"fields":[{"fieldPath":"__x__"}]},"where":{"fieldFilter":{"field":{"fieldPath":"a b"}}}}"#,
        #"{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"__x__"}}],"startAt":{"values":[{}]}}"#,
        #"{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"a"}}],"startAt":{"values":[{}]},"select":{"fields":[{"fieldPath":"__x__"}]}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"integerValue":"1"}}},"startAt":{"values":[{}]}}"#,
        #"{"from":[{"collectionId":"c"}],"select":{"fields":[{"fieldPath":"__name__.x"}]},"startAt":{"values":[{}]}}"#,
        #"{"from":[{"collectionId":"c"}],"limit":-1,"startAt":{"values":[{}]}}"#,
        #"{"from":[{"collectionId":"c"}],"select":{"fields":[{"fieldPath":"__foo__"}]},"where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"integerValue":"1"}}}}"#,
        #"{"from":[{"collectionId":"c"}],"startAt":{"values":[{"integerValue":"1"}]},"findNearest":{"vectorField":{"fieldPath":"__foo__"},"queryVector":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"doubleValue":1}]}}}}},"limit":1,"distanceMeasure":"COSINE"}}"#,
        #"{"from":[{"collectionId":"c"}],"select":{"fields":[{"fieldPath":"__name__.x"}]},"where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"integerValue":"1"}}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"op":"AND","filters":[{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"integerValue":"1"}}},{"fieldFilter":{"field":{"fieldPath":"__foo__"},"op":"EQUAL","value":{"integerValue":"1"}}}]}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"op":"AND","filters":[{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"integerValue":"1"}}},{"fieldFilter":{"field":{"fieldPath":"a b"},"op":"EQUAL","value":{"integerValue":"1"}}}]}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"op":"AND","filters":[{"fieldFilter":{"field":{"fieldPath":"__foo__"},"op":"EQUAL","value":{"integerValue":"1"}}},{"fieldFilter":{"field":{"fieldPath":"a b"},"op":"EQUAL","value":{"integerValue":"1"}}}]}}}"#,
        #"{"from":[{"collectionId":"c/d"}],"orderBy":[{"field":{"fieldPath":"__foo__"}}]}"#,
        #"{"from":[{"collectionId":"__x__"}],"select":{"fields":[{"fieldPath":"__foo__"}]}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"op":"AND","filters":[{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"arrayValue":{}}}},{"fieldFilter":{"field":{"fieldPath":"__foo__"},"op":"EQUAL","value":{"integerValue":"1"}}}]}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"op":"AND","filters":[{"fieldFilter":{"field":{"fieldPath":"a"},"op":"NOT_EQUAL","value":{"integerValue":"1"}}},{"fieldFilter":{"field":{"fieldPath":"b"},"op":"NOT_EQUAL","value":{"integerValue":"1"}}},{"fieldFilter":{"field":{"fieldPath":"__foo__"},"op":"EQUAL","value":{"integerValue":"1"}}}]}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"op":"AND","filters":[{"fieldFilter":{"field":{"fieldPath":"__foo__"},"op":"NOT_EQUAL","value":{"integerValue":"1"}}},{"fieldFilter":{"field":{"fieldPath":"a"},"op":"NOT_EQUAL","value":{"integerValue":"1"}}}]}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"op":"AND","filters":[{"fieldFilter":{"field":{"fieldPath":"a b"},"op":"NOT_EQUAL","value":{"integerValue":"1"}}},{"fieldFilter":{"field":{"fieldPath":"c"},"op":"NOT_EQUAL","value":{"integerValue":"1"}}}]}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"op":"AND","filters":[{"fieldFilter":{"field":{"fieldPath":"a"},"op":"NOT_EQUAL","value":{}}},{"fieldFilter":{"field":{"fieldPath":"c"},"op":"NOT_EQUAL","value":{"integerValue":"1"}}}]}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"op":"OR","filters":[{"fieldFilter":{"field":{"fieldPath":"a"},"op":"EQUAL","value":{"integerValue":"1"}}},{"fieldFilter":{"field":{"fieldPath":"__foo__"},"op":"NOT_IN","value":{"arrayValue":{"values":[{"integerValue":"1"}]}}}}]}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"__foo__"},"op":"EQUAL","value":{}}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"unaryFilter":{"field":{"fieldPath":"__foo__"}}}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":"__foo__"},"queryVector":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[]}}}}},"limit":1,"distanceMeasure":"COSINE"}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":"__foo__"},"queryVector":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"doubleValue":1}]}}}}},"limit":1,"distanceMeasure":"COSINE","distanceResultField":"__x__"}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":"__foo__"},"queryVector":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"doubleValue":1}]}}}}},"limit":0,"distanceMeasure":"COSINE"}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a"}}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"unaryFilter":{"field":{"fieldPath":""}}}}"#,
        #"{"from":[{"collectionId":"c/d"}],"where":{"compositeFilter":{}}}"#,
        #"{"from":[{"collectionId":"c/d"}],"orderBy":[{"field":{"fieldPath":""}}]}"#,
        #"{"from":[{"collectionId":"c/d"}],"findNearest":{"vectorField":{"fieldPath":"v"},"queryVector":{"arrayValue":{}},"limit":1}}"#,
        #"{"from":[{"collectionId":"c"}],"findNearest":{"vectorField":{"fieldPath":""},"queryVector":{"arrayValue":{}},"limit":1}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"filters":[{"fieldFilter":{}}]}}}"#,
        #"{"from":[{"collectionId":"c"}],"where":{"compositeFilter":{"op":"AND","filters":[{"fieldFilter":{}}]}}}"#,
        #"{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"a"},"direction":5}]}"#,
        #"{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"a b"},"direction":5}]}"#,
    ]

    static let aggregations: [String] = [
        #"{"structuredQuery":{"from":[{"collectionId":"c/d"}]},"aggregations":[{"sum":{"field":{"fieldPath":"__foo__"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a b"}}}},"aggregations":[{"sum":{"field":{"fieldPath":"__foo__"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"__foo__"},"op":"EQUAL","value":{"integerValue":"1"}}}},"aggregations":[{"sum":{"field":{"fieldPath":"a b"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"EQUAL","value":{}}}},"aggregations":[{"sum":{"field":{"fieldPath":"a b"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"integerValue":"1"}}}},"aggregations":[{"sum":{"field":{"fieldPath":"__foo__"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"a b"}}]},"aggregations":[{"sum":{"field":{"fieldPath":"__foo__"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"__bar__"}}]},"aggregations":[{"sum":{"field":{"fieldPath":"__foo__"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"orderBy":[{"field":{"fieldPath":"a b"}}]},"aggregations":[{}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"__foo__"},"op":"EQUAL","value":{"integerValue":"1"}}}},"aggregations":[{"count":{"upTo":"-1"}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c/d"}]},"aggregations":[{"count":{"upTo":"-1"}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a b"}}}},"aggregations":[{"count":{"upTo":"-1"}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}]},"aggregations":[{"count":{"upTo":"-1"}},{"sum":{"field":{"fieldPath":"__foo__"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}]},"aggregations":[{"sum":{"field":{"fieldPath":"__foo__"}}},{"sum":{"field":{"fieldPath":"a b"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}]},"aggregations":[{"sum":{"field":{"fieldPath":"__foo__"}}},{}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}]},"aggregations":[]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c/d"}]},"aggregations":[]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"integerValue":"1"}}}},"aggregations":[]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"select":{"fields":[{"fieldPath":"a"}]}},"aggregations":[{"sum":{"field":{"fieldPath":"__name__.x"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"select":{"fields":[{"fieldPath":"__name__.x"}]}},"aggregations":[{"sum":{"field":{"fieldPath":"__name__.y"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}],"select":{"fields":[{"fieldPath":"__name__"}]}},"aggregations":[{"sum":{"field":{"fieldPath":"__name__.x"}}}]}"#,
        #"{"structuredQuery":{"from":[{"collectionId":"c"}]},"aggregations":[{"alias":"x","sum":{"field":{"fieldPath":"__name__.x"}}},{"alias":"x","count":{}}]}"#,
    ]

    @Test func theFirstFaultReadIsTheOneTold() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "query reading order") else { return }
        defer { stop() }
        let documents = "/v1/projects/flint-reading-order/databases/(default)/documents"
        let bodies = Self.queries.map { (":runQuery", #"{"structuredQuery": \#($0)}"#) }
            + Self.aggregations.map { (":runAggregationQuery", #"{"structuredAggregationQuery": \#($0)}"#) }
        for (method, body) in bodies {
            let expected = try await RawHTTP.send("POST", reference.base + documents + method, body)
            let found = try await RawHTTP.send("POST", flint + documents + method, body)
            #expect(expected.status == 400, "\(body): the reference accepted it")
            #expect(found.status == expected.status && RawHTTP.message(found.json) == RawHTTP.message(expected.json),
                    "\(body): \(RawHTTP.message(found.json) ?? "") / \(RawHTTP.message(expected.json) ?? "")")
        }
    }

    /// A request holding no query: its transaction and new transaction's options are told
    /// before that, its read time after.
    @Test func aRequestWithoutAQueryIsToldItsTransactionFirst() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "query without a query") else { return }
        defer { stop() }
        let documents = "/v1/projects/flint-reading-order/databases/(default)/documents"
        let bodies = [
            "{}", #"{"transaction":"CAE="}"#, #"{"transaction":"AAAA"}"#,
            #"{"newTransaction":{"readWrite":{"retryTransaction":"AAAA"}}}"#,
            #"{"newTransaction":{"readOnly":{"readTime":"1970-01-01T00:00:00Z"}}}"#,
            #"{"newTransaction":{"readOnly":{"readTime":"2020-01-01T00:00:00.000000001Z"}}}"#,
            #"{"newTransaction":{"readOnly":{"readTime":"2020-01-01T00:00:00Z"}}}"#,
            #"{"newTransaction":{"readOnly":{"readTime":"2999-01-01T00:00:00Z"}}}"#,
            #"{"readTime":"1970-01-01T00:00:00Z"}"#, #"{"readTime":"2020-01-01T00:00:00.000000001Z"}"#,
            #"{"readTime":"2020-01-01T00:00:00Z"}"#,
        ]
        // The same selectors beside a query with a fault of its own.
        let reserved = #"{"from":[{"collectionId":"__x__"}]}"#
        let queried = bodies.dropFirst().map { #"{"structuredQuery":\#(reserved),\#($0.dropFirst())"# }
        let counted = bodies.dropFirst().map {
            #"{"structuredAggregationQuery":{"structuredQuery":\#(reserved),"aggregations":[{"count":{}}]},\#($0.dropFirst())"#
        }
        for (method, bodies) in [(":runQuery", bodies + queried), (":runAggregationQuery", bodies + counted)] {
            for body in bodies {
                let expected = try await RawHTTP.send("POST", reference.base + documents + method, body)
                let found = try await RawHTTP.send("POST", flint + documents + method, body)
                #expect(expected.status == 400, "\(method) \(body): the reference answered \(expected.status)")
                #expect(found.status == expected.status && RawHTTP.message(found.json) == RawHTTP.message(expected.json),
                        "\(method) \(body): \(RawHTTP.message(found.json) ?? "") / \(RawHTTP.message(expected.json) ?? "")")
            }
        }
    }
}
