import Foundation
import Testing

/// Collection and document ids over 1,500 bytes in every place a request names a document,
/// over REST on both servers: which requests refuse them, with which message, and which let
/// them be (lookups, deletes, cursors).
struct IDLengthDifferentialTests {
    static let long = String(repeating: "x", count: 1501)

    /// Each a method, a path below `documents` and a body, with `ROOT` standing for the
    /// documents root and `PATH` for a document path holding an over-long id.
    static let requests: [(String, String, String?)] = [
        ("GET", "/PATH", nil),
        ("GET", "/PATH?mask.fieldPaths=a", nil),
        ("DELETE", "/PATH", nil),
        ("DELETE", "/PATH?currentDocument.exists=false", nil),
        ("PATCH", "/PATH", #"{"fields": {}}"#),
        ("GET", "/PATH/s", nil),
        ("POST", "/PATH/s?documentId=d", #"{"fields": {}}"#),
        ("POST", "/PATH:listCollectionIds", "{}"),
        ("POST", "/PATH:runQuery", #"{"structuredQuery": {"from": [{"collectionId": "s"}]}}"#),
        ("POST", "/PATH:runAggregationQuery",
         #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "s"}]}, "aggregations": [{"alias": "n", "count": {}}]}}"#),
        ("POST", ":batchGet", #"{"documents": ["ROOT/PATH"]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "ROOT/PATH"}]}"#),
        ("POST", ":commit", #"{"writes": [{"update": {"name": "ROOT/PATH", "fields": {}}}]}"#),
        ("POST", ":commit", #"{"writes": [{"transform": {"document": "ROOT/PATH", "fieldTransforms": [{"fieldPath": "n", "increment": {"integerValue": "1"}}]}}]}"#),
        ("POST", ":commit", #"{"writes": [{"update": {"name": "ROOT/c/a", "fields": {"r": {"referenceValue": "ROOT/PATH"}}}}]}"#),
        ("POST", ":batchWrite", #"{"writes": [{"delete": "ROOT/PATH"}]}"#),
        ("POST", ":batchWrite", #"{"writes": [{"update": {"name": "ROOT/PATH", "fields": {}}}]}"#),
        ("POST", ":runQuery", query(#""where": {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "EQUAL", "value": {"referenceValue": "ROOT/PATH"}}}"#)),
        ("POST", ":runQuery", query(#""where": {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "IN", "value": {"arrayValue": {"values": [{"referenceValue": "ROOT/PATH"}]}}}}"#)),
        ("POST", ":runQuery", query(#""where": {"fieldFilter": {"field": {"fieldPath": "r"}, "op": "EQUAL", "value": {"referenceValue": "ROOT/PATH"}}}"#)),
        ("POST", ":runQuery", query(#""where": {"fieldFilter": {"field": {"fieldPath": "r"}, "op": "ARRAY_CONTAINS", "value": {"referenceValue": "ROOT/PATH"}}}"#)),
        ("POST", ":runQuery", query(#""orderBy": [{"field": {"fieldPath": "__name__"}}], "startAt": {"values": [{"referenceValue": "ROOT/PATH"}]}"#)),
        ("POST", ":runQuery", query(#""orderBy": [{"field": {"fieldPath": "r"}}], "endAt": {"values": [{"arrayValue": {"values": [{"referenceValue": "ROOT/PATH"}]}}]}"#)),
        // A stored document's ids are measured when it comes to be stored: after every write
        // was read, and before what the write stores is.
        ("POST", ":commit", #"{"writes": [{"update": {"name": "ROOT/PATH", "fields": {}}}, {"update": {"name": "ROOT/c/a", "fields": {"__x__": {"integerValue": "1"}}}}]}"#),
        ("POST", ":commit", #"{"writes": [{"update": {"name": "ROOT/c/a", "fields": {"FFFF": {"integerValue": "1"}}}}, {"update": {"name": "ROOT/PATH", "fields": {}}}]}"#),
        ("POST", ":commit", #"{"writes": [{"update": {"name": "ROOT/PATH", "fields": {"FFFF": {"integerValue": "1"}}}}]}"#),
        ("POST", ":commit", #"{"writes": [{"transform": {"document": "ROOT/PATH", "fieldTransforms": [{"fieldPath": "n", "increment": {"stringValue": "1"}}]}}]}"#),
        ("POST", ":commit", #"{"writes": [{"update": {"name": "ROOT/PATH", "fields": {}}}, {"update": {"name": "ROOT/c", "fields": {}}}]}"#),
        ("PATCH", "/PATH?updateMask.fieldPaths=__x__", #"{"fields": {}}"#),
        ("POST", "/PATH/s?documentId=d&mask.fieldPaths=__x__", #"{"fields": {}}"#),
    ]

    static func query(_ parts: String) -> String { #"{"structuredQuery": {"from": [{"collectionId": "c"}], \#(parts)}}"# }

    /// An over-long document id, then an over-long collection id, first and deeper down.
    static let paths = ["c/\(long)", "\(long)/d", "c/d/\(long)/e"]

    @Test func overLongIDsAreRefusedWhereTheReferenceRefusesThem() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "id length") else { return }
        defer { stop() }
        let root = "projects/flint-id-lengths/databases/(default)/documents"
        var refused = 0
        var accepted = 0
        for path in Self.paths {
            for (method, target, body) in Self.requests {
                let url = "/v1/\(root)" + target.replacingOccurrences(of: "PATH", with: path)
                let sent = body?.replacingOccurrences(of: "ROOT", with: root).replacingOccurrences(of: "PATH", with: path)
                    .replacingOccurrences(of: "FFFF", with: Self.long)
                let expected = try await RawHTTP.send(method, reference.base + url, sent)
                let found = try await RawHTTP.send(method, flint + url, sent)
                let what = "\(method) \(target) \(body?.prefix(70) ?? "") at \(path.prefix(12))"
                #expect(found.status == expected.status, "\(what)")
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(what)")
                if expected.status == 200 { accepted += 1 } else { refused += 1 }
            }
        }
        // Both kinds of answer are exercised, so agreeing is not agreeing on one.
        #expect(accepted >= 20)
        #expect(refused >= 40)
    }
}
