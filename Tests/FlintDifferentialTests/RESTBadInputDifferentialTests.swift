import Foundation
import Testing

/// Malformed requests sent as raw REST to the reference and to a Flint server: the same status
/// and message for each. Where Flint deliberately says more (JSON syntax, unknown fields) or
/// refuses what the reference lets through, the case is not here; docs/rest-api.md lists those.
struct RESTBadInputDifferentialTests {
    /// Method, path below the documents root (`$D`), body.
    static let cases: [(String, String, String?)] = [
        ("POST", ":commit", #"{"writes": [{}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "nope"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects//databases/(default)/documents/c/a"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databasez/(default)/documents/c/a"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases//documents/c/a"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases/(default)"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases/(default)/documentz/c/a"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases/(default)/documents"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases/(default)/documents/"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases/(default)/documents//a"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases/(default)/documents/c/a/"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases/(default)/documents/c/./a"}]}"#),
        ("POST", ":commit", #"{"writes": [{"transform": {"document": "$D/c/a"}}]}"#),
        ("POST", ":commit", #"{"writes": [{"transform": {"document": "$D/c/a", "fieldTransforms": [{"fieldPath": "a"}]}}]}"#),
        ("POST", ":commit", #"{"writes": [{"update": {"name": "$D/c/a"}, "updateTransforms": [{"fieldPath": "", "increment": {"integerValue": "1"}}]}]}"#),
        ("POST", ":commit", #"{"writes": [{"update": {"name": "$D/c/a", "fields": {}}, "updateTransforms": [{"fieldPath": "x", "increment": {"integerValue": "1"}}, {"fieldPath": "a.b.c", "increment": {"integerValue": "1"}}, {"fieldPath": "a", "increment": {"integerValue": "1"}}]}]}"#),
        ("POST", ":commit", #"{"writes": [{"transform": {"document": "$D/c/a", "fieldTransforms": [{"fieldPath": "n", "increment": {"integerValue": "1"}}, {"fieldPath": "n.x", "setToServerValue": "REQUEST_TIME"}]}}]}"#),
        // A mask or update transforms on a write that is not an update.
        ("POST", ":commit", #"{"writes": [{"delete": "$D/c/a", "updateMask": {"fieldPaths": ["a"]}}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "$D/c/a", "updateTransforms": [{"fieldPath": "a", "increment": {"integerValue": "1"}}]}]}"#),
        ("POST", ":commit", #"{"writes": [{"transform": {"document": "$D/c/a", "fieldTransforms": [{"fieldPath": "a", "increment": {"integerValue": "1"}}]}, "updateMask": {"fieldPaths": ["a"]}}]}"#),
        ("POST", ":commit", #"{"writes": [{"transform": {"document": "$D/c/a", "fieldTransforms": [{"fieldPath": "a", "increment": {"integerValue": "1"}}]}, "updateTransforms": [{"fieldPath": "b", "increment": {"integerValue": "1"}}]}]}"#),
        // A parameter read once, given twice; a document path's GET also counts a listing's.
        ("GET", "/c?pageSize=1&pageSize=2", nil),
        ("GET", "/c?orderBy=x&orderBy=x", nil),
        ("GET", "/c?showMissing=true&showMissing=true", nil),
        ("GET", "/c/a?pageToken=x&pageToken=y", nil),
        ("GET", "/c/a?transaction=YQ&transaction=YQ", nil),
        ("POST", "/c?documentId=a&documentId=b", "{bad"),
        ("PATCH", "/c/a?currentDocument.exists=true&currentDocument.exists=true", "{}"),
        ("DELETE", "/c/a?currentDocument.exists=false&currentDocument.exists=false", nil),
        ("PATCH", "/c/a", #"{"fields": {"r": {"referenceValue": "nope"}}}"#),
        ("PATCH", "/c/a", #"{"fields": {"r": {"referenceValue": "projects/bp/databases/(default)"}}}"#),
        ("PATCH", "/c/a", #"{"fields": {"r": {"referenceValue": "projects/bp/databases/(default)/documentz"}}}"#),
        ("PATCH", "/c/a", #"{"fields": {"r": {"referenceValue": "$D/c"}}}"#),
        ("PATCH", "/c/a", #"{"fields": {"t": {}}}"#),
        ("PATCH", "/c/a", #"{"fields": {"m": {"arrayValue": {"values": [{}]}}}}"#),
        ("PATCH", "/c/a", #"{"fields": {"": {"integerValue": "1"}}}"#),
        ("PATCH", "/c/a", #"{"fields": {"m": {"mapValue": {"fields": {"": {"integerValue": "1"}}}}}}"#),
        ("PATCH", "/c/a?updateMask.fieldPaths=", #"{"fields": {}}"#),
        ("PATCH", "/c/a?updateMask.fieldPaths=m.__x__", #"{"fields": {}}"#),
        ("POST", "/c/a", #"{"fields": {}}"#),
        ("POST", "/c?documentId=.", #"{"fields": {}}"#),
        ("POST", "/c?documentId=..", #"{"name": "x", "fields": {}}"#),
        ("POST", "/c?documentId=n", #"{"name": "$D/c/n", "fields": {}}"#),
        ("POST", "/c", #"{"name": "x", "fields": {"__x__": {"nullValue": null}}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": ".."}]}}"#),
        ("GET", "/c?orderBy=a,,b", nil),
        ("GET", "/c?orderBy=%20a", nil),
        ("GET", "/c?orderBy=a,", nil),
        ("GET", "/c?orderBy=a,1b", nil),
        ("GET", "/c?orderBy=a%20sideways", nil),
        ("POST", ":runQuery", "{}"),
        ("POST", "/c/a:runQuery", "{}"),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c/d"}]}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], "where": {}}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], "where": {"unaryFilter": {"op": "IS_NULL"}}}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], "where": {"unaryFilter": {"field": {"fieldPath": "a"}}}}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], "where": {"fieldFilter": {"field": {"fieldPath": "a"}, "value": {"integerValue": "1"}}}}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], "where": {"compositeFilter": {"filters": []}}}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], "orderBy": [{}]}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], "findNearest": {"vectorField": {"fieldPath": "v"}, "queryVector": {"arrayValue": {}}, "distanceMeasure": "EUCLIDEAN", "limit": 1}}}"#),
        ("POST", ":runAggregationQuery", "{}"),
        ("POST", ":runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]}, "aggregations": [{}]}}"#),
        ("POST", ":runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]}, "aggregations": [{"count": {}, "alias": "__x__"}]}}"#),
        ("POST", ":runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]}, "aggregations": [{"sum": {}}]}}"#),
        ("POST", ":batchGet", #"{"documents": ["nope"]}"#),
        ("POST", ":beginTransaction", #"{"options": {"readWrite": {"retryTransaction": "YWJj"}}}"#),
        // Transaction bytes that parse as a protobuf message are unknown ids; others malformed.
        ("POST", ":commit", #"{"transaction": "CAE="}"#),
        ("POST", ":commit", #"{"transaction": "DA=="}"#),
        ("POST", ":rollback", #"{"transaction": "EgNhYmM="}"#),
        ("POST", ":batchGet", #"{"transaction": "CgA=", "documents": ["$D/c/a"]}"#),
        ("POST", ":batchGet", #"{"transaction": "CgVhYg==", "documents": ["$D/c/a"]}"#),
        // `.` and `..` at every level of a name, and the word for each slot.
        ("POST", ":commit", #"{"writes": [{"delete": "projects/../databases/(default)/documents/c/a"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases/./documents/c/a"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases/(default)/documents/./a"}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "projects/bp/databases/(default)/documents/c/a/../b"}]}"#),
        ("POST", ":batchGet", #"{"documents": ["projects/bp/databases/../documents/c/a"]}"#),
        // A path names a document (or collection) for GET, PATCH and DELETE, a parent for POST.
        ("GET", "/c//d", nil),
        ("GET", "//d", nil),
        ("PATCH", "/c//d", "{}"),
        ("DELETE", "/c/d/", nil),
        ("POST", "/c//d", "{}"),
        ("POST", "/c//d/e", "{}"),
        ("POST", "//d:runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}]}}"#),
        ("GET", "/c?showMissing=true&orderBy=n", nil),
        ("GET", "/c?pageSize=-1", nil),
        // A time naming a version is whole microseconds after the epoch; listCollectionIds
        // alone truncates a finer one.
        ("POST", ":batchGet", #"{"readTime": "2020-01-01T00:00:00.000000500Z", "documents": ["$D/c/a"]}"#),
        ("POST", ":batchGet", #"{"newTransaction": {"readOnly": {"readTime": "1960-01-01T00:00:00.000000001Z"}}, "documents": ["$D/c/a"]}"#),
        ("POST", ":batchGet", #"{"readTime": "0001-01-01T00:00:00Z", "documents": ["$D/c/a"]}"#),
        ("POST", ":batchGet", #"{"readTime": "1970-01-01T00:00:00Z", "documents": ["$D/c/a"]}"#),
        ("POST", ":runQuery", #"{"readTime": "2020-01-01T00:00:00.000001001Z", "structuredQuery": {"from": [{"collectionId": "c"}]}}"#),
        ("POST", ":runAggregationQuery", #"{"readTime": "2020-01-01T00:00:00.1234567Z", "structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]}, "aggregations": [{"count": {}}]}}"#),
        ("POST", ":beginTransaction", #"{"options": {"readOnly": {"readTime": "2020-01-01T00:00:00.000000001Z"}}}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "$D/c/a", "currentDocument": {"updateTime": "2020-01-01T00:00:00.000000001Z"}}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "$D/c/a", "currentDocument": {"updateTime": "0001-01-01T00:00:00Z"}}]}"#),
        ("POST", ":listCollectionIds", #"{"readTime": "2020-01-01T00:00:00.000000001Z"}"#),
        // Its read time against the clock before its page token.
        ("POST", ":listCollectionIds", #"{"readTime": "2020-01-01T00:00:00Z", "pageToken": "x"}"#),
        ("POST", ":listCollectionIds", #"{"readTime": "2999-01-01T00:00:00Z", "pageToken": "x"}"#),
        ("POST", ":listCollectionIds", #"{"readTime": "2999-01-01T00:00:00Z", "pageToken": "x", "pageSize": -1}"#),
        // A query's consistency, and a commit's transaction, are checked before the query or
        // the writes are read.
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c/d"}]}, "transaction": "YWJj"}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c/d"}]}, "transaction": "CAE="}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c/d"}]}, "readTime": "1970-01-01T00:00:00Z"}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c/d"}]}, "readTime": "2020-01-01T00:00:00.000000001Z"}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c/d"}]}, "newTransaction": {"readWrite": {"retryTransaction": "YWJj"}}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c/d"}]}, "newTransaction": {"readOnly": {"readTime": "1960-01-01T00:00:00Z"}}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c/d"}]}, "readTime": "2020-01-01T00:00:00Z"}"#),
        ("POST", ":runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]}, "aggregations": [{}]}, "transaction": "YWJj"}"#),
        ("POST", ":runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c/d"}]}, "aggregations": [{"count": {}}]}, "transaction": "CAE="}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "nope"}], "transaction": "CAE="}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "nope"}], "transaction": "YWJj"}"#),
    ]

    /// Method, path below `/v1/`, body: writes where documents may not be stored.
    static let reservedDatabases: [(String, String, String?)] = [
        ("PATCH", "projects/__x__/databases/(default)/documents/c/d", "{}"),
        ("POST", "projects/__x__/databases/(default)/documents:commit",
         #"{"writes": [{"update": {"name": "projects/__x__/databases/(default)/documents/c/d", "fields": {}}}]}"#),
        ("POST", "projects/__x__/databases/(default)/documents:batchWrite",
         #"{"writes": [{"update": {"name": "projects/__x__/databases/(default)/documents/c/d", "fields": {}}}]}"#),
        ("PATCH", "projects/flint-bad/databases/__x__/documents/c/d", "{}"),
        ("PATCH", "projects/flint-bad/databases/" + String(repeating: "d", count: 101) + "/documents/c/d", "{}"),
    ]

    @Test func badRequestsAreRefusedAsTheReferenceRefusesThem() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "REST bad input") else { return }
        defer { stop() }
        let documents = "projects/flint-bad/databases/(default)/documents"
        for (method, path, body) in Self.cases {
            let target = "/v1/" + documents + path
            let text = body?.replacingOccurrences(of: "$D", with: documents)
            let expected = try await RawHTTP.send(method, reference.base + target, text)
            let found = try await RawHTTP.send(method, flint + target, text)
            #expect(expected.status >= 400, "\(method) \(path) \(body ?? ""): the reference accepted it")
            #expect(
                found.status == expected.status && RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(method) \(path) \(body ?? "")")
        }
        for (method, path, body) in Self.reservedDatabases {
            let expected = try await RawHTTP.send(method, reference.base + "/v1/" + path, body)
            let found = try await RawHTTP.send(method, flint + "/v1/" + path, body)
            #expect(expected.status == 400, "\(method) \(path): the reference accepted it")
            #expect(found.status == expected.status && RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(method) \(path)")
        }
        // An open read-only transaction: a commit of writes is refused before they are read,
        // and a query under it is read (and told its fault).
        var open: [String] = []
        for base in [reference.base, flint] {
            let begun = try await RawHTTP.send("POST", base + "/v1/" + documents + ":beginTransaction", #"{"options": {"readOnly": {}}}"#)
            open.append(try #require((begun.json as? [String: Any])?["transaction"] as? String))
        }
        for body in [#"{"writes": [{"delete": "nope"}], "transaction": "TX"}"#, #"{"structuredQuery": {"from": [{"collectionId": "c/d"}]}, "transaction": "TX"}"#] {
            let method = body.contains("writes") ? ":commit" : ":runQuery"
            let expected = try await RawHTTP.send("POST", reference.base + "/v1/" + documents + method, body.replacingOccurrences(of: "TX", with: open[0]))
            let found = try await RawHTTP.send("POST", flint + "/v1/" + documents + method, body.replacingOccurrences(of: "TX", with: open[1]))
            #expect(expected.status == 400 && found.status == 400 && RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(body)")
        }
        // Deleting there is let be, as reading is: it finds nothing.
        let delete = "projects/__x__/databases/(default)/documents/c/d"
        #expect(try await RawHTTP.send("DELETE", reference.base + "/v1/" + delete, nil).status == 200)
        #expect(try await RawHTTP.send("DELETE", flint + "/v1/" + delete, nil).status == 200)
    }
}
