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
