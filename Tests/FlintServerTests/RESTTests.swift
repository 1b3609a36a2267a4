import FlintEngine
import FlintModel
import FlintProto
import FlintServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SwiftProtobuf
import Testing

/// Every REST route over a real loopback connection, with the answers the reference emulator
/// gives to the same requests.
struct RESTTests {
    static let base = "/v1/projects/p1/databases/(default)/documents"
    static let name = "projects/p1/databases/(default)/documents"

    func withServer(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        try await server.makeApplication().test(.live) { client in try await body(client) }
    }

    static func json(_ buffer: ByteBuffer) -> Any? { try? JSONSerialization.jsonObject(with: Data(buffer: buffer), options: [.fragmentsAllowed]) }

    @discardableResult
    static func call(_ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil,
                     expect status: HTTPResponse.Status = .ok, auth: String? = nil) async throws -> Any? {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let auth { headers[.authorization] = auth }
        return try await client.execute(uri: uri, method: method, headers: headers,
                                 body: body.map { ByteBuffer(string: $0) }) { response in
            #expect(response.status == status, "\(method) \(uri): \(String(buffer: response.body))")
            return json(response.body)
        }
    }

    static func error(_ any: Any?) -> (String, String)? {
        guard let e = (any as? [String: Any])?["error"] as? [String: Any] else { return nil }
        return (e["status"] as? String ?? "", e["message"] as? String ?? "")
    }

    @Test func documentsLifecycle() async throws {
        try await withServer { client in
            let commit = try await Self.call(client, .post, Self.base + ":commit", """
                {"writes":[{"update":{"name":"\(Self.name)/c/a","fields":{"x":{"integerValue":"1"},"t":{"timestampValue":"2020-01-01T00:00:00.123456789Z"}}}}]}
                """) as? [String: Any]
            #expect((commit?["writeResults"] as? [[String: Any]])?.count == 1)
            let doc = try await Self.call(client, .get, Self.base + "/c/a") as? [String: Any]
            #expect((doc?["fields"] as? [String: Any])?["t"] as? [String: String] == ["timestampValue": "2020-01-01T00:00:00.123456Z"])
            #expect((doc?["fields"] as? [String: Any])?["x"] as? [String: String] == ["integerValue": "1"])
            let masked = try await Self.call(client, .get, Self.base + "/c/a?mask.fieldPaths=x") as? [String: Any]
            #expect((masked?["fields"] as? [String: Any])?.keys.sorted() == ["x"])
            // The short form names the mask's one field; both forms may be mixed.
            let short = try await Self.call(client, .get, Self.base + "/c/a?mask=t") as? [String: Any]
            #expect((short?["fields"] as? [String: Any])?.keys.sorted() == ["t"])
            let mixed = try await Self.call(client, .get, Self.base + "/c/a?mask=t&mask.fieldPaths=x") as? [String: Any]
            #expect((mixed?["fields"] as? [String: Any])?.keys.sorted() == ["t", "x"])
            // A parameter read once may not be given twice; a repeated mask path is fine.
            let twice = try await Self.call(client, .get, Self.base + "/c/a?transaction=YQ&transaction=Yg", expect: .badRequest)
            #expect(Self.error(twice)?.1 == "Payload isn't valid for request.")
            _ = try await Self.call(client, .get, Self.base + "/c?pageSize=1&pageSize=1", expect: .badRequest)
            _ = try await Self.call(client, .post, Self.base + "/c?documentId=a&documentId=b", "{}", expect: .badRequest)
            _ = try await Self.call(client, .delete, Self.base + "/c/a?currentDocument.exists=true&currentDocument.exists=true", expect: .badRequest)
            _ = try await Self.call(client, .get, Self.base + "/c/a?mask=x&mask=x&documentId=a&documentId=b")
            let badEscape = try await Self.call(client, .get, Self.base + "/c/a?mask=%zz", expect: .badRequest)
            #expect(Self.error(badEscape)?.1 == #"The query string "mask=%zz" has invalid percent-encoding."#)
            _ = try await Self.call(client, .get, Self.base + "/c/a?mask=%C3", expect: .badRequest)
            let escaped = try await Self.call(client, .get, Self.base + "/c/a?mask=%60x%60") as? [String: Any]
            #expect((escaped?["fields"] as? [String: Any])?.keys.sorted() == ["x"])
            let empty = try await Self.call(client, .get, Self.base + "/c/a?mask=", expect: .badRequest)
            #expect(Self.error(empty)?.1 == "Invalid empty property path string.")
            let encoded = try await Self.call(client, .get, "/v1/projects/p1/databases/%28default%29/documents/c/a") as? [String: Any]
            #expect(encoded?["name"] as? String == Self.name + "/c/a")

            let created = try await Self.call(client, .post, Self.base + "/c?documentId=made", #"{"fields":{"k":{"stringValue":"v"}}}"#) as? [String: Any]
            #expect(created?["name"] as? String == Self.name + "/c/made")
            let auto = try await Self.call(client, .post, Self.base + "/c", #"{"fields":{}}"#) as? [String: Any]
            #expect((auto?["name"] as? String)?.split(separator: "/").last?.count == 20)
            let exists = try await Self.call(client, .post, Self.base + "/c?documentId=made", #"{"fields":{}}"#, expect: .conflict)
            #expect(Self.error(exists)?.0 == "ALREADY_EXISTS")

            let patched = try await Self.call(client, .patch, Self.base + "/c/made?updateMask.fieldPaths=n&updateMask.fieldPaths=k&currentDocument.exists=true",
                                              #"{"fields":{"n":{"integerValue":"5"},"ignored":{"nullValue":null}}}"#) as? [String: Any]
            #expect((patched?["fields"] as? [String: Any])?.keys.sorted() == ["n"])
            let shortMask = try await Self.call(client, .patch, Self.base + "/c/made?updateMask=k",
                                                #"{"fields":{"k":{"stringValue":"w"},"ignored":{"nullValue":null}}}"#) as? [String: Any]
            #expect((shortMask?["fields"] as? [String: Any])?.keys.sorted() == ["k", "n"])
            let missing = try await Self.call(client, .patch, Self.base + "/c/nope?currentDocument.exists=true", #"{"fields":{}}"#, expect: .notFound)
            #expect(Self.error(missing)?.1 == "No document to update: \(Self.name)/c/nope")
            let raw = try await client.execute(uri: Self.base + "/c/nope?currentDocument.exists=true", method: .patch, body: ByteBuffer(string: #"{"fields":{}}"#)) {
                String(buffer: $0.body)
            }
            #expect(raw.contains("No document to update: \(Self.name)/c/nope"))
            // Query-string booleans are read in any case; anything else is refused, not taken as false.
            _ = try await Self.call(client, .patch, Self.base + "/c/nope?currentDocument.exists=TRUE", #"{"fields":{}}"#, expect: .notFound)
            _ = try await Self.call(client, .patch, Self.base + "/c/new?currentDocument.exists=False", #"{"fields":{}}"#)
            let unclear = try await Self.call(client, .patch, Self.base + "/c/nope?currentDocument.exists=1", #"{"fields":{}}"#, expect: .badRequest)
            #expect(Self.error(unclear)?.1 == #"currentDocument.exists must be true or false, not "1"."#)

            try await Self.call(client, .delete, Self.base + "/c/made")
            let gone = try await Self.call(client, .get, Self.base + "/c/made", expect: .notFound)
            #expect(Self.error(gone)?.1 == "Document (\(Self.name)/c/made) not found.")
        }
    }

    /// A fragment written into a raw request's target is cut off, as the reference cuts it: it
    /// is no part of the id, and a query after it is part of the fragment.
    @Test func aFragmentInTheTargetIsCutOff() async throws {
        try await withServer { client in
            try await Self.call(client, .patch, Self.base + "/c/f#x", #"{"fields":{"x":{"integerValue":"1"},"y":{"integerValue":"2"}}}"#)
            let read = try await Self.call(client, .get, Self.base + "/c/f#x?mask.fieldPaths=x") as? [String: Any]
            #expect(read?["name"] as? String == Self.name + "/c/f")
            #expect((read?["fields"] as? [String: Any])?.keys.sorted() == ["x", "y"])
            // Percent-encoded, `#` is part of the id.
            try await Self.call(client, .get, Self.base + "/c/f%23x", expect: .notFound)
        }
    }

    @Test func listingsAndCollectionIDs() async throws {
        try await withServer { client in
            try await Self.call(client, .post, Self.base + ":commit", """
                {"writes":[{"update":{"name":"\(Self.name)/l/b","fields":{"n":{"integerValue":"2"}}}},{"update":{"name":"\(Self.name)/l/a","fields":{"n":{"integerValue":"3"}}}},
                {"update":{"name":"\(Self.name)/l/m/sub/x","fields":{}}},{"update":{"name":"\(Self.name)/l/c","fields":{"n":{"integerValue":"1"}}}}]}
                """)
            let page = try await Self.call(client, .get, Self.base + "/l?pageSize=2") as? [String: Any]
            #expect((page?["documents"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == [Self.name + "/l/a", Self.name + "/l/b"])
            let token = try #require(page?["nextPageToken"] as? String)
            let rest = try await Self.call(client, .get, Self.base + "/l?pageSize=2&pageToken=\(token)") as? [String: Any]
            #expect((rest?["documents"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == [Self.name + "/l/c"])
            let withMissing = try await Self.call(client, .get, Self.base + "/l?showMissing=True", auth: "Bearer owner") as? [String: Any]
            #expect((withMissing?["documents"] as? [[String: Any]])?.last?.keys.sorted() == ["name"])
            // Missing documents are the owner's to list, rules or none, as on the reference.
            let refused = try await Self.call(client, .get, Self.base + "/l?showMissing=true", expect: .forbidden)
            #expect(Self.error(refused)?.1 == "Metadata operations require admin authentication.")
            let ordered = try await Self.call(client, .get, Self.base + "/l?orderBy=n%20desc") as? [String: Any]
            #expect((ordered?["documents"] as? [[String: Any]])?.compactMap { ($0["name"] as? String)?.split(separator: "/").last.map(String.init) } == ["a", "b", "c"])
            // Later pages keep the order (the reference fails them with 500 when there is an orderBy).
            let firstOrdered = try await Self.call(client, .get, Self.base + "/l?orderBy=n%20desc&pageSize=2") as? [String: Any]
            let orderedToken = try #require(firstOrdered?["nextPageToken"] as? String)
            let nextOrdered = try await Self.call(client, .get, Self.base + "/l?orderBy=n%20desc&pageSize=2&pageToken=\(orderedToken)") as? [String: Any]
            #expect((nextOrdered?["documents"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == [Self.name + "/l/c"])
            let bad = try await Self.call(client, .get, Self.base + "/l?orderBy=n%20sideways", expect: .badRequest)
            #expect(Self.error(bad)?.1 == "Invalid order by clause \"n sideways\".")
            // A trailing `/` on the root or a document lists every collection directly below.
            try await Self.call(client, .post, Self.base + ":commit", """
                {"writes":[{"update":{"name":"\(Self.name)/k/z","fields":{}}},{"update":{"name":"\(Self.name)/l/m/other/y","fields":{}}}]}
                """)
            let everywhere = try await Self.call(client, .get, Self.base + "/?pageSize=3") as? [String: Any]
            #expect((everywhere?["documents"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["k/z", "l/a", "l/b"].map { Self.name + "/" + $0 })
            let below = try await Self.call(client, .get, Self.base + "/l/m/") as? [String: Any]
            #expect((below?["documents"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["l/m/other/y", "l/m/sub/x"].map { Self.name + "/" + $0 })
            let unordered = try await Self.call(client, .get, Self.base + "/?orderBy=n", expect: .badRequest)
            #expect(Self.error(unordered)?.1 == "kind is required for all orders except __key__ ascending")
            let collection = try await Self.call(client, .get, Self.base + "/l/", expect: .badRequest)
            #expect(Self.error(collection)?.1 == "Document name \"\(Self.name)/l/\" has invalid trailing \"/\".")
            let ids = try await Self.call(client, .post, Self.base + ":listCollectionIds", "{}", auth: "Bearer owner") as? [String: Any]
            #expect(ids?["collectionIds"] as? [String] == ["k", "l"])
            let sub = try await Self.call(client, .post, Self.base + "/l/m:listCollectionIds", "{}", auth: "Bearer owner") as? [String: Any]
            #expect(sub?["collectionIds"] as? [String] == ["other", "sub"])
            // Listing collections is for the server SDKs only, rules or none, as on the reference.
            let anonymous = try await Self.call(client, .post, Self.base + ":listCollectionIds", "{}", expect: .forbidden)
            #expect(Self.error(anonymous)?.1 == "Metadata operations require admin authentication.")
            let negative = try await Self.call(client, .post, Self.base + ":listCollectionIds", #"{"pageSize":-1}"#, expect: .badRequest)
            #expect(Self.error(negative)?.1 == "page_size must be greater than or equal to zero.")
        }
    }

    @Test func queriesAggregationsAndBatchGet() async throws {
        try await withServer { client in
            try await Self.call(client, .post, Self.base + ":commit", """
                {"writes":[{"update":{"name":"\(Self.name)/q/a","fields":{"v":{"integerValue":"1"}}}},{"update":{"name":"\(Self.name)/q/b","fields":{"v":{"doubleValue":2.5}}}},
                {"update":{"name":"\(Self.name)/q/a/sub/c","fields":{"v":{"integerValue":"1"}}}}]}
                """)
            let rows = try await Self.call(client, .post, Self.base + ":runQuery", """
                {"structuredQuery":{"from":[{"collectionId":"q"}],"where":{"fieldFilter":{"field":{"fieldPath":"v"},"op":"GREATER_THAN","value":{"integerValue":"0"}}},"orderBy":[{"field":{"fieldPath":"v"},"direction":"DESCENDING"}]}}
                """) as? [[String: Any]]
            #expect(rows?.compactMap { ($0["document"] as? [String: Any])?["name"] as? String } == [Self.name + "/q/b", Self.name + "/q/a"])
            #expect(rows?.allSatisfy { $0["readTime"] is String } == true)
            // Only the last answer says the query is done.
            #expect(rows?.map { $0["done"] as? Bool } == [nil, true])
            // What an offset skipped is counted on the first document's answer, unless that one
            // is also the last.
            try await Self.call(client, .post, Self.base + ":commit", """
                {"writes":[{"update":{"name":"\(Self.name)/off/a"}},{"update":{"name":"\(Self.name)/off/b"}},{"update":{"name":"\(Self.name)/off/c"}}]}
                """)
            for (offset, limit, skipped) in [(1, 2, [1 as Int?, nil]), (1, 1, [nil]), (2, 2, [nil]), (5, 2, [nil])] {
                let body = #"{"structuredQuery":{"from":[{"collectionId":"off"}],"offset":\#(offset),"limit":\#(limit)}}"#
                let page = try await Self.call(client, .post, Self.base + ":runQuery", body) as? [[String: Any]]
                #expect(page?.map { ($0["skippedResults"] as? NSNumber)?.intValue } == skipped, "offset \(offset) limit \(limit)")
            }
            try await Self.call(client, .post, Self.base + ":commit", """
                {"writes":[{"delete":"\(Self.name)/off/a"},{"delete":"\(Self.name)/off/b"},{"delete":"\(Self.name)/off/c"}]}
                """)
            let empty = try await Self.call(client, .post, Self.base + ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"zz"}]}}"#) as? [[String: Any]]
            #expect(empty?.count == 1 && empty?.first?["document"] == nil && empty?.first?["readTime"] != nil)
            #expect(empty?.first?["done"] as? Bool == true)
            let nested = try await Self.call(client, .post, Self.base + "/q/a:runQuery", #"{"structuredQuery":{"from":[{"collectionId":"sub"}]}}"#) as? [[String: Any]]
            #expect(nested?.compactMap { ($0["document"] as? [String: Any])?["name"] as? String } == [Self.name + "/q/a/sub/c"])
            let group = try await Self.call(client, .post, Self.base + ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"sub","allDescendants":true}]}}"#) as? [[String: Any]]
            #expect(group?.count == 1)
            // No collection id: every collection below the parent, at any depth when asked.
            let kindless = try await Self.call(client, .post, Self.base + ":runQuery", #"{"structuredQuery":{"from":[{"allDescendants":true}]}}"#) as? [[String: Any]]
            #expect(kindless?.compactMap { ($0["document"] as? [String: Any])?["name"] as? String } == [
                Self.name + "/q/a", Self.name + "/q/a/sub/c", Self.name + "/q/b",
            ])
            let noFrom = try await Self.call(client, .post, Self.base + "/q/a:runQuery", #"{"structuredQuery":{}}"#) as? [[String: Any]]
            #expect(noFrom?.compactMap { ($0["document"] as? [String: Any])?["name"] as? String } == [Self.name + "/q/a/sub/c"])
            let twoFrom = try await Self.call(
                client, .post, Self.base + ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"q"},{"collectionId":"r"}]}}"#, expect: .badRequest)
            #expect(Self.error(twoFrom)?.1 == "StructuredQuery.from cannot have more than one collection selector.")
            let invalid = try await Self.call(client, .post, Self.base + ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"q"}],"limit":-1}}"#, expect: .badRequest)
            #expect(Self.error(invalid)?.1 == "limit is negative")
            let agg = try await Self.call(client, .post, Self.base + ":runAggregationQuery", """
                {"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"q"}]},"aggregations":[{"alias":"n","count":{}},{"alias":"s","sum":{"field":{"fieldPath":"v"}}},{"avg":{"field":{"fieldPath":"v"}}}]}}
                """) as? [[String: Any]]
            let fields = (agg?.first?["result"] as? [String: Any])?["aggregateFields"] as? [String: Any]
            #expect(agg?.map { $0.keys.sorted() } == [["done", "readTime", "result"]])
            #expect(fields?["n"] as? [String: String] == ["integerValue": "2"])
            #expect(fields?["s"] as? [String: Double] == ["doubleValue": 3.5])
            // The first aggregation without an alias is field_1, wherever it stands.
            #expect(fields?["field_1"] as? [String: Double] == ["doubleValue": 1.75])
            let batchBody = "{\"documents\":[\"\(Self.name)/q/b\",\"\(Self.name)/q/zz\"]}"
            let got = try await Self.call(client, .post, Self.base + ":batchGet", batchBody) as? [[String: Any]]
            #expect(got?.first?["found"] != nil)
            #expect(got?.last?["missing"] as? String == Self.name + "/q/zz")
            let partitionBody = #"{"structuredQuery":{"from":[{"collectionId":"q","allDescendants":true}],"orderBy":[{"field":{"fieldPath":"__name__"}}]},"partitionCount":2}"#
            let partitions = try await Self.call(client, .post, Self.base + ":partitionQuery", partitionBody, auth: "Bearer owner") as? [String: Any]
            let refusedPartitions = try await Self.call(client, .post, Self.base + ":partitionQuery", partitionBody, expect: .forbidden)
            #expect(Self.error(refusedPartitions)?.1 == "Partition queries require admin authentication.")
            let cursor = (partitions?["partitions"] as? [[String: Any]])?.first?["values"] as? [[String: String]]
            #expect(cursor == [["referenceValue": Self.name + "/q/b"]])
            let explained = try await Self.call(client, .post, Self.base + ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"q"}]},"explainOptions":{"analyze":false}}"#) as? [[String: Any]]
            #expect(explained?.count == 1 && explained?.first?["explainMetrics"] != nil)
            // An aggregation explained: the plan alone, then the plan with the result and its statistics.
            let countQ = #"{"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"q"}]},"aggregations":[{"alias":"n","count":{}}]},"#
            let planned = try await Self.call(client, .post, Self.base + ":runAggregationQuery", countQ + #""explainOptions":{}}"#) as? [[String: Any]]
            #expect(planned?.map { $0.keys.sorted() } == [["explainMetrics", "readTime"]])
            let plan = (planned?.first?["explainMetrics"] as? [String: Any])?["planSummary"] as? [String: Any]
            #expect(plan?["indexesUsed"] as? [[String: String]] == [["query_scope": "Collection", "properties": "(__name__ ASC)"]])
            let analyzed = try await Self.call(client, .post, Self.base + ":runAggregationQuery", countQ + #""explainOptions":{"analyze":true}}"#) as? [[String: Any]]
            #expect(((analyzed?.first?["result"] as? [String: Any])?["aggregateFields"] as? [String: Any])?["n"] as? [String: String] == ["integerValue": "2"])
            let stats = (analyzed?.first?["explainMetrics"] as? [String: Any])?["executionStats"] as? [String: Any]
            #expect(stats?["resultsReturned"] as? String == "1")
            #expect(stats?["readOperations"] as? String == "1")
        }
    }

    /// A body is read as JSON whatever its type, so `curl -d`, which sends a form type, works
    /// (the reference answers a POST typed as a form 404). PUT says what to use instead.
    /// The API's earlier version answers under `/v1beta1/` with the same JSON, reading and
    /// writing the same documents, except that it has no runAggregationQuery.
    @Test func v1beta1PathsAreServedAsV1Paths() async throws {
        try await withServer { client in
            let beta = "/v1beta1/projects/p1/databases/(default)/documents"
            try await Self.call(client, .patch, beta + "/c/a", #"{"fields":{"n":{"integerValue":"3"}}}"#)
            try await Self.call(client, .post, beta + "/c?documentId=b", #"{"fields":{"n":{"integerValue":"4"}}}"#)
            let read = try await Self.call(client, .get, Self.base + "/c/a?mask.fieldPaths=n") as? [String: Any]
            #expect((read?["fields"] as? [String: Any])?["n"] as? [String: String] == ["integerValue": "3"])
            let listed = try await Self.call(client, .get, beta + "/c?orderBy=n%20desc") as? [String: Any]
            #expect((listed?["documents"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == [Self.name + "/c/b", Self.name + "/c/a"])
            let query = #"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"n"},"op":"GREATER_THAN","value":{"integerValue":"3"}}}}}"#
            let found = try await Self.call(client, .post, "/v1beta1/projects/p1/databases/%28default%29/documents:runQuery", query) as? [[String: Any]]
            #expect(found?.compactMap { ($0["document"] as? [String: Any])?["name"] as? String } == [Self.name + "/c/b"])
            let commit = #"{"writes":[{"delete":"\#(Self.name)/c/b","currentDocument":{"exists":true}}]}"#
            try await Self.call(client, .post, beta + ":commit", commit)
            try await Self.call(client, .get, Self.base + "/c/b", expect: .notFound)

            let count = #"{"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"c"}]},"aggregations":[{"count":{}}]}}"#
            for parent in [beta, beta + "/c/a"] {
                let refused = try await Self.call(client, .post, parent + ":runAggregationQuery", count, expect: .notImplemented)
                #expect(Self.error(refused)?.0 == "UNIMPLEMENTED")
                #expect(Self.error(refused)?.1 == "Method google.firestore.v1beta1.Firestore/RunAggregationQuery is unimplemented")
            }
            let counted = try await Self.call(client, .post, Self.base + ":runAggregationQuery", count) as? [[String: Any]]
            #expect(((counted?.first?["result"] as? [String: Any])?["aggregateFields"] as? [String: Any])?.values.first as? [String: String]
                == ["integerValue": "1"])
            try await Self.call(client, .get, "/v1beta2/projects/p1/databases/(default)/documents/c/a", expect: .notFound)
        }
    }

    @Test func bodiesAreReadAsJSONWhateverTheirType() async throws {
        try await withServer { client in
            for type in ["application/json; charset=utf-8", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "application/octet-stream", nil] {
                var headers: HTTPFields = [:]
                if let type { headers[.contentType] = type }
                try await client.execute(uri: Self.base + ":commit", method: .post, headers: headers, body: ByteBuffer(string: #"{"writes": []}"#)) {
                    response in
                    #expect(response.status == .ok, "\(type ?? "no type")")
                }
            }
            let put = try await Self.call(client, .put, Self.base + "/c/typed", "{}", expect: .notFound)
            #expect(Self.error(put)?.1.hasSuffix("documents are written with PATCH (or created with POST to their collection).") == true)
            try await client.execute(
                uri: Self.base + "/c/typed", method: .patch, headers: [.contentType: "application/octet-stream"], body: ByteBuffer(string: "{}")
            ) { response in #expect(response.status == .ok) }
            // A byte order mark before the JSON, as Windows tools write UTF-8, is read past.
            try await client.execute(
                uri: Self.base + "/c/marked", method: .patch, headers: [.contentType: "application/json"],
                body: ByteBuffer(bytes: [0xEF, 0xBB, 0xBF] + Array(#"{"fields": {"n": {"integerValue": "1"}}}"#.utf8))
            ) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#""integerValue":"1""#))
            }
        }
    }

    /// Characters beyond the Basic Multilingual Plane written as JSON surrogate-pair escapes,
    /// as Python's `json` writes them, are stored as themselves: in values, map keys and names.
    @Test func surrogatePairEscapesAreTheCharactersTheyName() async throws {
        try await withServer { client in
            let characters = ["\u{10000}", "\u{1F600}", "\u{20000}", "\u{2A6D6}", "\u{E0001}", "\u{10FFFF}"]
            for character in characters {
                let escaped = character.utf16.map { String(format: "\\u%04x", $0) }.joined()
                try await Self.call(client, .post, Self.base + ":commit", """
                    {"writes": [{"update": {"name": "\(Self.name)/c/x\(escaped)",
                                            "fields": {"s": {"stringValue": "\(escaped)"}, "k\(escaped)": {"nullValue": null}}}}]}
                    """)
                let id = ("x" + character).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                let stored = try await Self.call(client, .get, Self.base + "/c/" + id) as? [String: Any]
                let fields = stored?["fields"] as? [String: Any]
                #expect((fields?["s"] as? [String: Any])?["stringValue"] as? String == character)
                #expect(fields?["k" + character] != nil)
                #expect(stored?["name"] as? String == Self.name + "/c/x" + character)
            }
        }
    }

    @Test func transactionsOverREST() async throws {
        try await withServer { client in
            let begun = try await Self.call(client, .post, Self.base + ":beginTransaction", "{}") as? [String: Any]
            let tx = try #require(begun?["transaction"] as? String)
            let rows = try await Self.call(client, .post, Self.base + ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"t"}]},"transaction":"\#(tx)"}"#) as? [[String: Any]]
            #expect(rows?.count == 1)
            let commit = try await Self.call(client, .post, Self.base + ":commit", """
                {"transaction":"\(tx)","writes":[{"update":{"name":"\(Self.name)/t/a","fields":{"n":{"integerValue":"1"}}}}]}
                """) as? [String: Any]
            #expect((commit?["writeResults"] as? [[String: Any]])?.count == 1)
            let again = try await Self.call(client, .post, Self.base + ":commit", #"{"transaction":"\#(tx)","writes":[]}"#, expect: .badRequest)
            #expect(Self.error(again)?.1 == "Transaction is invalid or closed.")
            let elsewhere = try await Self.call(client, .post, "/v1/projects/other/databases/(default)/documents:commit",
                #"{"transaction":"\#(tx)","writes":[]}"#, expect: .badRequest)
            #expect(Self.error(elsewhere)?.1 == "Transaction is invalid or closed.")
            // Bytes that parse as a protobuf message could be an id, and are unknown; others are
            // malformed: `08 01` (a varint field), `12 03 61 62 63` (a bytes field), `0c` (a
            // group's end, unopened), `0a 05 61 62` (cut short).
            for (bytes, message) in [("CAE=", "Transaction is invalid or closed."), ("EgNhYmM=", "Transaction is invalid or closed."),
                                     ("DA==", "Invalid transaction."), ("CgVhYg==", "Invalid transaction.")] {
                let answer = try await Self.call(client, .post, Self.base + ":commit", #"{"transaction":"\#(bytes)","writes":[]}"#, expect: .badRequest)
                #expect(Self.error(answer)?.1 == message, "\(bytes)")
            }
            let rolledBack = try await Self.call(client, .post, Self.base + ":rollback", #"{"transaction":"CAE="}"#, expect: .badRequest)
            #expect(Self.error(rolledBack)?.1 == "Transaction is invalid or expired.")
            let withNew = try await Self.call(client, .post, Self.base + ":batchGet",
                "{\"documents\":[\"\(Self.name)/t/a\"],\"newTransaction\":{\"readOnly\":{}}}") as? [[String: Any]]
            let readOnly = try #require(withNew?.first?["transaction"] as? String)
            #expect(withNew?.last?["found"] != nil)
            // A query or aggregation that begins a transaction answers it first, on its own.
            let queried = try await Self.call(client, .post, Self.base + ":runQuery",
                #"{"structuredQuery":{"from":[{"collectionId":"t"}]},"newTransaction":{"readOnly":{}}}"#) as? [[String: Any]]
            #expect(queried?.map { $0.keys.sorted() } == [["transaction"], ["document", "done", "readTime"]])
            let counted = try await Self.call(client, .post, Self.base + ":runAggregationQuery",
                #"{"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"t"}]},"aggregations":[{"count":{}}]},"newTransaction":{"readOnly":{}}}"#) as? [[String: Any]]
            #expect(counted?.map { $0.keys.sorted() } == [["transaction"], ["done", "readTime", "result"]])
            let refused = try await Self.call(client, .post, Self.base + ":commit", """
                {"transaction":"\(readOnly)","writes":[{"delete":"\(Self.name)/t/a"}]}
                """, expect: .badRequest)
            #expect(Self.error(refused)?.1 == "Cannot modify entities in a read-only transaction.")
            let second = try await Self.call(client, .post, Self.base + ":beginTransaction", #"{"options":{"readWrite":{}}}"#) as? [String: Any]
            let tx2 = try #require(second?["transaction"] as? String)
            let encoded = tx2.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? tx2
            let doc = try await Self.call(client, .get, Self.base + "/t/a?transaction=\(encoded)") as? [String: Any]
            #expect(doc?["name"] as? String == Self.name + "/t/a")
            try await Self.call(client, .post, Self.base + ":rollback", #"{"transaction":"\#(tx2)"}"#)
        }
    }

    /// A query request holding no query is told so after its transaction is looked up and its
    /// new transaction's options are read, but before its read time is, as on the reference.
    /// A new read-only transaction's snapshot time is checked against the clock and the
    /// retention window before the query is read, too.
    @Test func aRequestWithoutAQueryIsToldItsTransactionFirst() async throws {
        try await withServer { client in
            let open = try #require((try await Self.call(client, .post, Self.base + ":beginTransaction", "{}") as? [String: Any])?["transaction"] as? String)
            let ended = try #require((try await Self.call(client, .post, Self.base + ":beginTransaction", "{}") as? [String: Any])?["transaction"] as? String)
            try await Self.call(client, .post, Self.base + ":rollback", #"{"transaction":"\#(ended)"}"#)
            for (method, noQuery) in [(":runQuery", "only structured queries are supported"),
                                      (":runAggregationQuery", "Only structured aggregation queries are supported.")] {
                for (body, message) in [
                    "{}": noQuery,
                    #"{"transaction":"\#(open)"}"#: noQuery,
                    #"{"transaction":"\#(ended)"}"#: "Transaction is invalid or closed.",
                    #"{"transaction":"CAE="}"#: "Transaction is invalid or closed.",
                    #"{"transaction":"AAAA"}"#: "Invalid transaction.",
                    #"{"newTransaction":{"readWrite":{"retryTransaction":"AAAA"}}}"#: "Invalid transaction.",
                    #"{"newTransaction":{"readOnly":{"readTime":"1970-01-01T00:00:00Z"}}}"#: "Only timestamps past epoch are supported.",
                    #"{"newTransaction":{"readOnly":{"readTime":"2020-01-01T00:00:00.000000001Z"}}}"#:
                        "timestamp cannot have more than microseconds precision",
                    #"{"newTransaction":{"readOnly":{"readTime":"2020-01-01T00:00:00Z"}}}"#: "The requested 'read_time' is too old.",
                    #"{"newTransaction":{"readOnly":{"readTime":"2999-01-01T00:00:00Z"}}}"#: "The requested 'read_time' cannot be in the future.",
                    #"{"readTime":"1970-01-01T00:00:00Z"}"#: noQuery,
                    #"{"readTime":"2020-01-01T00:00:00.000000001Z"}"#: noQuery,
                    #"{"readTime":"2020-01-01T00:00:00Z"}"#: noQuery,
                ] {
                    let answer = try await Self.call(client, .post, Self.base + method, body, expect: .badRequest)
                    #expect(Self.error(answer)?.1 == message, "\(method) \(body)")
                }
            }
            // With a query that has a fault of its own, a new transaction's time is told first; a
            // read time's after the query.
            let reserved = #"{"from":[{"collectionId":"__x__"}]}"#
            for (selector, message) in [#""newTransaction":{"readOnly":{"readTime":"2020-01-01T00:00:00Z"}}"#: "The requested 'read_time' is too old.",
                                        #""newTransaction":{"readOnly":{"readTime":"2999-01-01T00:00:00Z"}}"#: "The requested 'read_time' cannot be in the future.",
                                        #""readTime":"2020-01-01T00:00:00Z""#: #"Collection id "__x__" is invalid because it is reserved."#] {
                let queried = try await Self.call(client, .post, Self.base + ":runQuery", #"{"structuredQuery":\#(reserved),\#(selector)}"#, expect: .badRequest)
                #expect(Self.error(queried)?.1 == message, "\(selector)")
                let counted = try await Self.call(client, .post, Self.base + ":runAggregationQuery",
                    #"{"structuredAggregationQuery":{"structuredQuery":\#(reserved),"aggregations":[{"count":{}}]},\#(selector)}"#, expect: .badRequest)
                #expect(Self.error(counted)?.1 == message, "\(selector)")
            }
        }
    }

    /// A listing's collection id, the last id of its path, is checked among the listing's own
    /// checks, after its page size, as on the reference; a fault in its parent is told first.
    @Test func aListingsCollectionIDIsCheckedAfterItsPageSize() async throws {
        try await withServer { client in
            let long = String(repeating: "x", count: 1501)
            for (path, message) in [
                ("/c/d/__x__?pageSize=-1", "Page size must be nonnegative."),
                ("/__x__?pageSize=-1", "Page size must be nonnegative."),
                ("/c/d/\(long)?pageSize=-1", "Page size must be nonnegative."),
                ("/c/d/__x__?mask.fieldPaths=__y__", #"Collection id "__x__" is invalid because it is reserved."#),
                ("/c/d/\(long)?mask.fieldPaths=__y__", "Invalid reserved name in field path __y__"),
                ("/c/d/\(long)", "The query kind is longer than 1500 bytes."),
                ("/__y__/d/__x__?pageSize=-1", #"Collection id "__y__" is invalid because it is reserved."#),
                ("/c?pageSize=-1&readTime=1970-01-01T00:00:00Z", "Page size must be nonnegative."),
                ("/c?orderBy=__x__&readTime=1970-01-01T00:00:00Z", "Invalid reserved name in field path __x__"),
            ] {
                let answer = try await Self.call(client, .get, Self.base + path, expect: .badRequest)
                #expect(Self.error(answer)?.1 == message, "\(path.prefix(40))")
            }
            // A document below a reserved id is still no listing.
            let read = try await Self.call(client, .get, Self.base + "/c/__x__", expect: .badRequest)
            #expect(Self.error(read)?.1 == #"Resource id "__x__" is invalid because it is reserved."#)
        }
    }

    /// A create posted to a document's path names a collection as its parent; a bad body is
    /// told before that, as the reference reads the body first.
    @Test func aCreateOnADocumentPathIsToldItsBodyFirst() async throws {
        try await withServer { client in
            let parent = #"Document parent name "\#(Self.name)/c" lacks "/" at index \#(Self.name.count + 2)."#
            for (body, message) in [("{", "Invalid JSON payload received. Invalid value at 'document'. The JSON ends too early."),
                                    (#"{"bogus": 1}"#, #"Invalid JSON payload received. Unknown name "bogus" at 'document': Cannot find field."#),
                                    (#"{"fields": {}}"#, parent)] {
                let answer = try await Self.call(client, .post, Self.base + "/c/d", body, expect: .badRequest)
                #expect(Self.error(answer)?.1 == message, "\(body)")
            }
        }
    }

    /// A document of another database is refused only once the request's other checks have
    /// passed, each write checked in its own database, as the reference checks it there.
    @Test func anotherDatabasesDocumentIsRefusedLast() async throws {
        try await withServer { client in
            let other = "projects/p1/databases/other/documents"
            let long = String(repeating: "x", count: 1501)
            let cases: [(String, String, String)] = [
                (":commit", #"{"writes": [{"delete": "\#(other)/c/a"}, {}]}"#, "empty write operation"),
                (":commit", #"{"writes": [{"update": {"name": "\#(other)/c/\#(long)", "fields": {}}}]}"#,
                 "The key path element name is longer than 1500 bytes."),
                (":commit", #"{"writes": [{"update": {"name": "projects/p1/databases/__y__/documents/c/a", "fields": {}}}]}"#,
                 #"The database "__y__" is reserved."#),
                (":batchWrite", #"{"writes": [{"update": {"name": "\#(other)/c/a", "fields": {"__x__": {"integerValue": "1"}}}}]}"#,
                 "field name __x__ is reserved"),
                (":batchGet", #"{"documents": ["\#(other)/c/a"], "transaction": "CAE="}"#, "Transaction is invalid or closed."),
                (":batchGet", #"{"documents": ["\#(other)/c/a"], "readTime": "2020-01-01T00:00:00Z"}"#, "The requested 'read_time' is too old."),
                (":commit", #"{"writes": [{"delete": "\#(other)/c/a"}]}"#,
                 #"Document "\#(other)/c/a" is not in the database of the request, projects/p1/databases/(default)."#),
                (":batchGet", #"{"documents": ["\#(other)/c/a"]}"#,
                 #"Document "\#(other)/c/a" is not in the database of the request, projects/p1/databases/(default)."#),
            ]
            for (method, body, message) in cases {
                let answer = try await Self.call(client, .post, Self.base + method, body, expect: .badRequest)
                #expect(Self.error(answer)?.1 == message, "\(method) \(body.prefix(80))")
            }
        }
    }

    /// A read time or a precondition's update time names a version: whole microseconds after
    /// the epoch. A finer one is refused rather than truncated to another version, as on the
    /// reference; only listCollectionIds truncates it there.
    @Test func timesThatNameVersionsAreWholeMicroseconds() async throws {
        try await withServer { client in
            let written = try await Self.call(client, .patch, Self.base + "/v/a", #"{"fields":{}}"#) as? [String: Any]
            let updated = try #require(written?["updateTime"] as? String)
            let finer = updated.replacingOccurrences(of: "Z", with: "001Z")
            let precision = ("INVALID_ARGUMENT", "timestamp cannot have more than microseconds precision")
            let precondition = try await Self.call(client, .post, Self.base + ":commit", """
                {"writes":[{"delete":"\(Self.name)/v/a","currentDocument":{"updateTime":"\(finer)"}}]}
                """, expect: .badRequest)
            #expect(Self.error(precondition)! == precision)
            let read = try await Self.call(client, .post, Self.base + ":batchGet",
                #"{"readTime":"\#(finer)","documents":["\#(Self.name)/v/a"]}"#, expect: .badRequest)
            #expect(Self.error(read)! == precision)
            let single = try await Self.call(client, .get, Self.base + "/v/a?readTime=\(finer)", expect: .badRequest)
            #expect(Self.error(single)! == precision)
            let begun = try await Self.call(client, .post, Self.base + ":beginTransaction",
                #"{"options":{"readOnly":{"readTime":"\#(finer)"}}}"#, expect: .badRequest)
            #expect(Self.error(begun)! == precision)
            let epoch = try await Self.call(client, .post, Self.base + ":runQuery",
                #"{"readTime":"1970-01-01T00:00:00Z","structuredQuery":{"from":[{"collectionId":"v"}]}}"#, expect: .badRequest)
            #expect(Self.error(epoch)! == ("INVALID_ARGUMENT", "Only timestamps past epoch are supported."))
            // The same times to the microsecond are taken.
            try await Self.call(client, .post, Self.base + ":batchGet", #"{"readTime":"\#(updated)","documents":["\#(Self.name)/v/a"]}"#)
            try await Self.call(client, .post, Self.base + ":listCollectionIds", #"{"readTime":"\#(finer)"}"#, auth: "Bearer owner")
            try await Self.call(client, .post, Self.base + ":commit", """
                {"writes":[{"delete":"\(Self.name)/v/a","currentDocument":{"updateTime":"\(updated)"}}]}
                """)
        }
    }

    /// Fields come back in key order, nested maps included, in every answer and every run.
    @Test func fieldsAreWrittenInKeyOrder() async throws {
        let keys = ["z", "b", "y", "c", "x", "d", "w", "e", "v", "f", "u", "g"]
        let fields = keys.map { #""\#($0)":{"integerValue":"1"}"# }.joined(separator: ",")
        let nested = #""m":{"mapValue":{"fields":{\#(fields)}}}"#
        try await withServer { client in
            try await Self.call(client, .patch, Self.base + "/o/d", #"{"fields":{\#(fields),\#(nested)}}"#)
            func body(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil) async throws -> String {
                try await client.execute(uri: uri, method: method, body: body.map { ByteBuffer(string: $0) }) { String(buffer: $0.body) }
            }
            for text in [try await body(.get, Self.base + "/o/d"),
                         try await body(.post, Self.base + ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"o"}]}}"#)] {
                let found = (keys + ["m"]).flatMap { k in text.ranges(of: #""\#(k)":"#).map { ($0.lowerBound, k) } }
                let inOrder = found.sorted { $0.0 < $1.0 }.map(\.1)
                let sorted = keys.sorted()
                let early = sorted.filter { $0 < "m" }, late = sorted.filter { $0 > "m" }
                #expect(inOrder == early + ["m"] + sorted + late, "\(text)")
            }
        }
    }

    /// `é` written as one scalar and as `e` with a combining accent are two names to Firestore,
    /// though Swift's strings hold them equal: a document keeps both, a query's filter and an
    /// update's mask name one of them.
    @Test func namesThatDifferOnlyInNormalizationAreKeptApart() async throws {
        let composed = "\u{E9}", decomposed = "e\u{301}"
        try await withServer { client in
            func text(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil) async throws -> String {
                try await client.execute(uri: uri, method: method, headers: [.authorization: "Bearer owner"], body: body.map { ByteBuffer(string: $0) }) { response in
                    #expect(response.status == .ok, "\(method) \(uri): \(String(buffer: response.body))")
                    return String(buffer: response.body)
                }
            }
            func stored() async throws -> [UTF8Key: Google_Firestore_V1_Value] {
                try Google_Firestore_V1_Document(jsonString: try await text(.get, Self.base + "/n/d")).fields
            }
            _ = try await text(.patch, Self.base + "/n/d", #"{"fields":{"\#(composed)":{"integerValue":"1"},"\#(decomposed)":{"integerValue":"2"},"#
                + #""m":{"mapValue":{"fields":{"\u212b":{"integerValue":"3"},"\u00c5":{"integerValue":"4"}}}}}}"#)
            var fields = try await stored()
            #expect(fields.count == 3)
            #expect(fields[UTF8Key(composed)]?.integerValue == 1 && fields[UTF8Key(decomposed)]?.integerValue == 2)
            #expect(fields["m"]?.mapValue.fields[UTF8Key("\u{212B}")]?.integerValue == 3)
            #expect(fields["m"]?.mapValue.fields[UTF8Key("\u{C5}")]?.integerValue == 4)

            for (name, value, found) in [(composed, 1, true), (composed, 2, false), (decomposed, 2, true), (decomposed, 1, false)] {
                let query = #"{"structuredQuery":{"from":[{"collectionId":"n"}],"where":{"fieldFilter":{"field":{"fieldPath":"`\#(name)`"},"op":"EQUAL","value":{"integerValue":"\#(value)"}}}}}"#
                let answer = try await text(.post, Self.base + ":runQuery", query)
                #expect(answer.contains(#""document""#) == found, "\(name.unicodeScalars.map(\.value)) == \(value): \(answer)")
            }

            let mask = decomposed.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            _ = try await text(.patch, Self.base + "/n/d?updateMask.fieldPaths=%60\(mask)%60", #"{"fields":{}}"#)
            fields = try await stored()
            #expect(fields.keys.sorted() == ["m", UTF8Key(composed)])

            // Two documents so named in one batch are two writes; two aggregations so named, two results.
            let batch = #"{"writes":[{"update":{"name":"\#(Self.name)/b/\#(composed)"}},{"update":{"name":"\#(Self.name)/b/\#(decomposed)"}}]}"#
            _ = try await text(.post, Self.base + ":batchWrite", batch)
            let aggregation = #"{"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"b"}]},"#
                + #""aggregations":[{"alias":"\#(composed)","count":{}},{"alias":"\#(decomposed)","count":{"upTo":"1"}}]}}"#
            let answer = try await text(.post, Self.base + ":runAggregationQuery", aggregation)
            let results = try Google_Firestore_V1_RunAggregationQueryResponse(jsonString: String(answer.dropFirst().dropLast())).result.aggregateFields
            #expect(results.count == 2 && results[UTF8Key(composed)]?.integerValue == 2 && results[UTF8Key(decomposed)]?.integerValue == 1)
        }
    }

    /// An id may start with a combining mark (U+0301), which Swift joins with the `/` before it
    /// into one `Character`: such names are still routed, created, listed and cleared.
    @Test func idsStartingWithACombiningMarkAreRouted() async throws {
        let mark = "%CC%81"
        try await withServer { client in
            let patched = try await Self.call(client, .patch, Self.base + "/\(mark)c/\(mark)d", #"{"fields":{}}"#) as? [String: Any]
            #expect((patched?["name"] as? String).map { Array($0.utf8) } == Array((Self.name + "/\u{301}c/\u{301}d").utf8))
            try await Self.call(client, .get, Self.base + "/\(mark)c/\(mark)d")
            let created = try await Self.call(client, .post, Self.base + "/\(mark)c/\(mark)d/\(mark)s?documentId=w", #"{"fields":{}}"#) as? [String: Any]
            #expect((created?["name"] as? String).map { Array($0.utf8) } == Array((Self.name + "/\u{301}c/\u{301}d/\u{301}s/w").utf8))
            let ids = try await Self.call(client, .post, Self.base + "/\(mark)c/\(mark)d:listCollectionIds", "{}", auth: "Bearer owner") as? [String: Any]
            #expect((ids?["collectionIds"] as? [String])?.map { Array($0.utf8) } == [Array("\u{301}s".utf8)])
            // The first colon of `e:\u{301}x:runQuery` is the one the mark follows, so no method
            // is named: the POST creates a document in that collection, as on the reference.
            let colon = try await Self.call(client, .post, Self.base + "/\(mark)c/\(mark)d/e:\(mark)x:runQuery", #"{"fields":{}}"#) as? [String: Any]
            #expect((colon?["name"] as? String)?.utf8.starts(with: (Self.name + "/\u{301}c/\u{301}d/e:\u{301}x:runQuery/").utf8) == true)
            try await Self.call(client, .delete, "/emulator/v1/projects/p1/databases/(default)/documents/\(mark)c")
            try await Self.call(client, .get, Self.base + "/\(mark)c/\(mark)d", expect: .notFound)
        }
    }

    /// Query parameters may be named by their proto fields too (`update_mask.field_paths`,
    /// `PageSize`), a time by its message's fields, and anything else below a mask makes the mask
    /// present but empty, as on the reference.
    @Test func parametersAreMatchedToFieldsAsTheReferenceMatchesThem() async throws {
        try await withServer { client in
            let doc = Self.base + "/params/a"
            _ = try await Self.call(client, .patch, doc, #"{"fields":{"x":{"integerValue":"1"},"y":{"integerValue":"2"}}}"#)
            _ = try await Self.call(client, .patch, Self.base + "/params/b", #"{"fields":{}}"#)
            let fields = { (json: Any?) in ((json as? [String: Any])?["fields"] as? [String: Any])?.keys.sorted() ?? [] }
            let merged = try await Self.call(client, .patch, doc + "?update_mask.field_paths=x", #"{"fields":{"x":{"integerValue":"3"}}}"#)
            #expect(fields(merged) == ["x", "y"])
            #expect(fields(try await Self.call(client, .get, doc + "?Mask.field_paths=y")) == ["y"])
            #expect(fields(try await Self.call(client, .get, doc + "?mask.fieldPaths[]=y")) == [])
            let unchanged = try await Self.call(client, .patch, doc + "?updateMask.fieldPath=x", #"{"fields":{"x":{"integerValue":"4"}}}"#)
            #expect(((unchanged as? [String: Any])?["fields"] as? [String: Any])?["x"] as? [String: String] == ["integerValue": "3"])
            let exists = try await Self.call(client, .patch, doc + "?current_document.exists=false", "{}", expect: .conflict)
            #expect(Self.error(exists)?.0 == "ALREADY_EXISTS")
            let stale = try await Self.call(client, .delete, doc + "?currentDocument.updateTime.seconds=1", expect: .badRequest)
            #expect(Self.error(stale)?.0 == "FAILED_PRECONDITION")
            #expect(fields(try await Self.call(client, .get, doc)) == ["x", "y"])
            let listed = { (query: String) async throws -> Int in
                ((try await Self.call(client, .get, Self.base + "/params?" + query) as? [String: Any])?["documents"] as? [Any])?.count ?? 0
            }
            #expect(try await listed("PageSize=1") == 1)
            #expect(try await listed("page_size=1") == 1)
            #expect(try await listed("pagesize=1") == 2)
            let twice = try await Self.call(client, .get, Self.base + "/params?page_size=1&pageSize=1", expect: .badRequest)
            #expect(Self.error(twice)?.1 == "Payload isn't valid for request.")
            let notANumber = try await Self.call(client, .get, doc + "?readTime.seconds=x", expect: .badRequest)
            #expect(Self.error(notANumber)?.1 == #"readTime.seconds must be an integer, not "x"."#)
        }
    }

    /// A JSON body may nest value maps 48 deep, as the reference's parser allows; one more is
    /// refused as too deep.
    @Test func valuesNestFortyEightMapsDeep() async throws {
        try await withServer { client in
            func nested(_ depth: Int) -> String {
                (0..<depth).reduce(#"{"integerValue": "1"}"#) { inner, _ in #"{"mapValue": {"fields": {"m": \#(inner)}}}"# }
            }
            func query(_ depth: Int) -> String {
                #"{"structuredQuery": {"from": [{"collectionId": "c"}], "where": {"fieldFilter": {"field": {"fieldPath": "a"}, "op": "EQUAL", "value": \#(nested(depth))}}}}"#
            }
            _ = try await Self.call(client, .post, Self.base + ":runQuery", query(48))
            let refused = try await Self.call(client, .post, Self.base + ":runQuery", query(49), expect: .badRequest)
            #expect(Self.error(refused)?.1.hasSuffix("It is nested too deeply.") == true)
            _ = try await Self.call(client, .patch, Self.base + "/c/deep?updateMask.fieldPaths=b", #"{"fields": {"a": \#(nested(48))}}"#)
        }
    }

    /// The mask of a create's or a patch's answer is read before anything is written: a bad one
    /// refuses the write, rather than writing and refusing the answer.
    @Test func aBadAnswerMaskRefusesTheWrite() async throws {
        try await withServer { client in
            let body = #"{"fields":{"a":{"integerValue":"1"}}}"#
            let refusals: [(HTTPRequest.Method, String, String)] = [
                (.patch, "/c/m1?mask.fieldPaths=__x__", "Invalid reserved name in field path __x__"),
                (.patch, "/c/m2?mask.fieldPaths=a.__name__", "the name __key__ is reserved"),
                (.post, "/c?documentId=m3&mask.fieldPaths=__x__", "Invalid reserved name in field path __x__"),
                // An update mask is read before the answer's, and the answer's before the precondition.
                (.patch, "/c/m4?mask.fieldPaths=__x__&updateMask.fieldPaths=__y__", "Invalid reserved name in field path __y__"),
                (.patch, "/c/m5?mask.fieldPaths=__x__&currentDocument.updateTime=2020-01-01T00:00:00.000000001Z",
                 "Invalid reserved name in field path __x__"),
            ]
            for (method, path, message) in refusals {
                let answer = try await Self.call(client, method, Self.base + path, body, expect: .badRequest)
                #expect(Self.error(answer)?.1 == message, "\(path)")
            }
            for id in ["m1", "m2", "m3", "m4", "m5"] {
                _ = try await Self.call(client, .get, Self.base + "/c/" + id, expect: .notFound)
            }
        }
    }

    @Test func badRequestsGetClearErrors() async throws {
        try await withServer { client in
            let cases: [(HTTPRequest.Method, String, String?, HTTPResponse.Status, String)] = [
                (.post, Self.base + ":commit", #"{"writes":[{"bogus":1}]}"#, .badRequest, "INVALID_ARGUMENT"),
                (.post, Self.base + ":commit", "{", .badRequest, "INVALID_ARGUMENT"),
                (.post, Self.base + ":commit", "{\"writes\":[{\"update\":{\"name\":\"\(Self.name)/c\",\"fields\":{}}}]}", .badRequest, "INVALID_ARGUMENT"),
                (.post, Self.base + ":commit", #"{"writes":[{"update":{"name":"projects/other/databases/(default)/documents/c/a","fields":{}}}]}"#, .badRequest, "INVALID_ARGUMENT"),
                (.get, "/v1/projects/p1/databases/%ZZ/documents/c/a", nil, .badRequest, "INVALID_ARGUMENT"),
                (.get, Self.base + "/c/__x__", nil, .badRequest, "INVALID_ARGUMENT"),
                (.post, Self.base + ":commit", #"{"transaction":"AAAA","writes":[]}"#, .badRequest, "INVALID_ARGUMENT"),
                (.get, "/v1/elsewhere", nil, .notFound, "NOT_FOUND"),
            ]
            let named = try await Self.call(client, .post, Self.base + "/c?documentId=n", #"{"name":"\#(Self.name)/c/n","fields":{}}"#, expect: .badRequest)
            #expect(Self.error(named)?.1 == "document.name must not be set")
            let dot = try await Self.call(client, .post, Self.base + "/c?documentId=..", #"{"fields":{}}"#, expect: .badRequest)
            #expect(Self.error(dot)?.1 == #"Resource id ".." is invalid because it is reserved."#)
            try await client.execute(uri: Self.base + "/c/a", method: .get, headers: [.authorization: "Bearer garbage"]) { response in
                #expect(response.status == .badRequest)
                #expect(Self.error(Self.json(response.body))?.1 == "invalid jwt")
            }
            for (method, uri, body, status, code) in cases {
                let answer = try await Self.call(client, method, uri, body, expect: status)
                #expect(Self.error(answer)?.0 == code, "\(method) \(uri)")
            }
            // Bodies that are not Firestore's JSON are refused in a sentence, not a library's case
            // name, and where the fault lies is said in production's form.
            let wrongForm = "A value has the wrong form for its field: an object, a list or a string where another is needed, or bytes not in base64."
            let refusals: [(String, String)] = [
                (#"{"writes":[{"bogus":1}]}"#, #"Unknown name "bogus" at 'writes[0]': Cannot find field."#),
                (#"{"bogus":1}"#, #"Unknown name "bogus": Cannot find field."#),
                (#"{"writes":[{"delete":"x"},{"update":{"name":"x","fields":{"a b":{"mapValue":{"fields":{"q":{"bogus":1}}}}}}}]}"#,
                 #"Unknown name "bogus" at 'writes[1].update.fields["a b"].mapValue.fields.q': Cannot find field."#),
                ("{", "The JSON ends too early."),
                (#"{"writes" []}"#, "The JSON is malformed: a ':' or ',' is missing, or a character is out of place."),
                (#"{"writes":"a"}"#, "Invalid value at 'writes'. " + wrongForm),
                (#"{"writes":[{"update":{"name":"x","fields":{"b":{"bytesValue":"A!"}}}}]}"#, "Invalid value at 'writes[0].update.fields.b.bytesValue'. " + wrongForm),
                (#"{"writes":[{"update":{"name":"x","fields":{"a":{"integerValue":"x"}}}}]}"#,
                 "Invalid value at 'writes[0].update.fields.a.integerValue'. A number is malformed, or a value that must be a number is not."),
                (#"{"writes":[{"update":{"name":"x","fields":{"a":{"integerValue":"1","stringValue":"a"}}}}]}"#,
                 "Invalid value at 'writes[0].update.fields.a'. Two fields of a oneof are set, such as two kinds of value in one value."),
                // The JSON library reports a double that overflows as text that is not UTF-8.
                (#"{"writes":[{"update":{"name":"x","fields":{"a":{"doubleValue":1e400}}}}]}"#,
                 "Invalid value at 'writes[0].update.fields.a.doubleValue'. A number is too large for a double, or a name is not UTF-8."),
                // Two faults refused in the same words: the search stops at the value holding both.
                (#"{"writes":[{"update":{"name":"x","fields":{"a":{"integerValue":"x"},"b":{"integerValue":"y"}}}}]}"#,
                 "Invalid value at 'writes[0].update.fields'. A number is malformed, or a value that must be a number is not."),
                ("[]", "The body must be a JSON object, such as {}."),
                (#" "writes""#, "The body must be a JSON object, such as {}."),
                ("null", "The body must be a JSON object, such as {}."),
            ]
            for (body, sentence) in refusals {
                let answer = try await Self.call(client, .post, Self.base + ":commit", body, expect: .badRequest)
                #expect(Self.error(answer)?.1 == "Invalid JSON payload received. " + sentence)
            }
            // A create's or patch's body is the request's document.
            let patched = try await Self.call(client, .patch, Self.base + "/c/a", #"{"structuredQuery":{}}"#, expect: .badRequest)
            #expect(Self.error(patched)?.1 == #"Invalid JSON payload received. Unknown name "structuredQuery" at 'document': Cannot find field."#)
            let created = try await Self.call(client, .post, Self.base + "/c", #"{"fields":{"n":{"integerValue":"1.5"}}}"#, expect: .badRequest)
            #expect(Self.error(created)?.1 == "Invalid JSON payload received. Invalid value at 'document.fields.n.integerValue'. A number is malformed, or a value that must be a number is not.")
            // Messages whose order follows the reference's: a repeated name before a malformed one,
            // a missing unary operand before a missing operator.
            let repeated = try await Self.call(client, .post, Self.base + ":batchWrite", #"{"writes":[{"delete":"x"},{"delete":"x"}]}"#, expect: .badRequest)
            #expect(Self.error(repeated)?.1 == "the same document cannot be written more than once in a single request")
            let unary = try await Self.call(
                client, .post, Self.base + ":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"unaryFilter":{}}}}"#, expect: .badRequest)
            #expect(Self.error(unary)?.1 == "Unsupported UnaryFilter operand type (non-FIELD).")
            let geo = try await Self.call(
                client, .patch, Self.base + "/c/geo", #"{"fields":{"g":{"geoPointValue":{"latitude":100,"longitude":0}}}}"#, expect: .badRequest)
            #expect(Self.error(geo)?.1 == "Geo point latitude '100.0' outside permitted range -90.0 to 90.0.")
            // A method Firestore does not have is not found, as on the reference emulator.
            let unknownVerb = try await Self.call(client, .post, Self.base + ":frobnicate", "{}", expect: .notFound)
            #expect(Self.error(unknownVerb)?.1.hasPrefix("Firestore has no method \"frobnicate\"") == true)
            let filler = String(repeating: "x", count: 10 * 1_048_576 + 10)
            let big = "{\"writes\":[{\"update\":{\"name\":\"\(Self.name)/c/big\",\"fields\":{\"s\":{\"stringValue\":\"\(filler)\"}}}}]}"
            let tooBig = try await Self.call(client, .post, Self.base + ":commit", big, expect: .badRequest)
            #expect(Self.error(tooBig)?.1 == "Request payload size exceeds the limit: 10485760 bytes.")
        }
    }
}

struct AdminAndCORSTests {
    @Test func clearingADatabaseOrASubtree() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        try await server.makeApplication().test(.live) { client in
            try await RESTTests.call(client, .post, RESTTests.base + ":commit", """
                {"writes":[{"update":{"name":"\(RESTTests.name)/a/1","fields":{}}},{"update":{"name":"\(RESTTests.name)/a/1/s/x","fields":{}}},
                {"update":{"name":"\(RESTTests.name)/b/1","fields":{}}}]}
                """)
            try await RESTTests.call(client, .delete, "/emulator/v1/projects/p1/databases/(default)/documents/a/1/")
            try await RESTTests.call(client, .get, RESTTests.base + "/a/1/s/x", expect: .notFound)
            try await RESTTests.call(client, .get, RESTTests.base + "/b/1")
            try await RESTTests.call(client, .delete, "/emulator/v1/projects/p1/databases/%28default%29/documents/")
            try await RESTTests.call(client, .get, RESTTests.base + "/b/1", expect: .notFound)
            // Only database roots and documents below them are routes; other shapes are not found.
            for other in ["p1/nope", "p1/databases/(default)", "p1/databases/(default)/documentsx", "a%2Fb/databases/(default)/documents"] {
                let missing = try await RESTTests.call(client, .delete, "/emulator/v1/projects/" + other, expect: .notFound)
                #expect(RESTTests.error(missing)?.1 == "No admin resource at /emulator/v1/projects/\(other).")
            }
            let bad = try await RESTTests.call(client, .delete, "/emulator/v1/projects//databases/(default)/documents", expect: .badRequest)
            #expect(RESTTests.error(bad)?.1 == #"Document parent name "projects//databases/(default)/documents" lacks a project id at index 9."#)
            // A collection may not end in `/`, as on the reference.
            let collection = try await RESTTests.call(client, .delete, "/emulator/v1/projects/p1/databases/(default)/documents/a/", expect: .badRequest)
            #expect(RESTTests.error(collection)?.1 == #"Document parent name "projects/p1/databases/(default)/documents/a/" has invalid trailing "/"."#)
            // A path of odd depth is a collection: its parent is told of by its own name, and an
            // id no collection can have clears nothing.
            try await RESTTests.call(client, .post, RESTTests.base + ":commit", """
                {"writes":[{"update":{"name":"\(RESTTests.name)/a/1","fields":{}}},{"update":{"name":"\(RESTTests.name)/a/1/s/x","fields":{}}}]}
                """)
            let parent = "/emulator/v1/projects/p1/databases/(default)/documents/a/1"
            for id in ["__x__", "__id7__"] {
                try await RESTTests.call(client, .delete, parent + "/" + id)
            }
            try await RESTTests.call(client, .get, RESTTests.base + "/a/1/s/x")
            let dotted = try await RESTTests.call(client, .delete, parent + "/b/./c", expect: .badRequest)
            #expect(RESTTests.error(dotted)?.1 == #"Document parent name "projects/p1/databases/(default)/documents/a/1/b/." contains a resource id "." at index 48."#)
            let emptyID = try await RESTTests.call(client, .delete, parent + "/b//c", expect: .badRequest)
            #expect(RESTTests.error(emptyID)?.1 == #"Document parent name "projects/p1/databases/(default)/documents/a/1/b/" has invalid trailing "/"."#)
            try await RESTTests.call(client, .delete, parent + "/s")
            try await RESTTests.call(client, .get, RESTTests.base + "/a/1/s/x", expect: .notFound)
            try await RESTTests.call(client, .get, RESTTests.base + "/a/1")
            // Below the documents, `:ruleCoverage` is part of an id, not the coverage reset.
            try await RESTTests.call(client, .patch, RESTTests.base + "/a/x:ruleCoverage", #"{"fields":{}}"#)
            try await RESTTests.call(client, .delete, "/emulator/v1/projects/p1/databases/(default)/documents/a/x:ruleCoverage")
            try await RESTTests.call(client, .get, RESTTests.base + "/a/x:ruleCoverage", expect: .notFound)
        }
    }

    @Test func bulkDeletingCollectionGroups() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        try await server.makeApplication().test(.live) { client in
            try await RESTTests.call(client, .post, RESTTests.base + ":commit", """
                {"writes":[{"update":{"name":"\(RESTTests.name)/a/1","fields":{}}},{"update":{"name":"\(RESTTests.name)/b/1/a/2","fields":{}}},
                {"update":{"name":"\(RESTTests.name)/a/1/s/x","fields":{}}},{"update":{"name":"\(RESTTests.name)/b/1","fields":{}}}]}
                """)
            let done = try await RESTTests.call(client, .post, "/emulator/v1/projects/p1:bulkDelete",
                                                #"{"database": "projects/p1/databases/(default)", "collection_ids": ["a"]}"#)
            #expect((done as? [String: Any])?.isEmpty == true)
            for (path, status) in [("a/1", HTTPResponse.Status.notFound), ("b/1/a/2", .notFound), ("a/1/s/x", .ok), ("b/1", .ok)] {
                try await RESTTests.call(client, .get, RESTTests.base + "/" + path, expect: status)
            }
            let shape = #"Expected {"database": "projects/…/databases/…", "collectionIds": ["…"], "namespaceIds": ["…"]}."#
            let refusals: [(String, String, String)] = [
                (#"{"collectionIds": ["b"]}"#, "INVALID_ARGUMENT", #"Database name "" lacks "projects" at index 0."#),
                (#"{"database": "projects/p1/databases/(default)"}"#, "FAILED_PRECONDITION", "collection_ids and namespace_ids cannot both be empty."),
                (#"{"database": "projects/p1/databases/(default)", "collectionIds": [1]}"#, "INVALID_ARGUMENT", #""collectionIds" must be a list of strings. "# + shape),
                (#"{"database": "projects/p1/databases/(default)", "collectionIDs": ["b"]}"#, "INVALID_ARGUMENT", #"Unknown field "collectionIDs" in the request. "# + shape),
                (#"["b"]"#, "INVALID_ARGUMENT", "The request must be a JSON object. " + shape),
            ]
            for (body, code, message) in refusals {
                let refused = try await RESTTests.call(client, .post, "/emulator/v1/projects/p1:bulkDelete", body, expect: .badRequest)
                #expect(RESTTests.error(refused)?.0 == code)
                #expect(RESTTests.error(refused)?.1 == message)
            }
            try await RESTTests.call(client, .get, RESTTests.base + "/b/1")
        }
    }

    @Test func theReferencesIndexUsageReportCountsQueries() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        try await server.makeApplication().test(.live) { client in
            let query = #"""
                {"structuredQuery": {"from": [{"collectionId": "books"}], "orderBy": [{"field": {"fieldPath": "tags"}}],
                 "where": {"fieldFilter": {"field": {"fieldPath": "owner"}, "op": "EQUAL", "value": {"stringValue": "u"}}}}}
                """#
            let usage = "/emulator/v1/projects/p1:indexUsage?database=projects/p1/databases/(default)"
            #expect((try await RESTTests.call(client, .get, usage) as? [String: Any])?.isEmpty == true)
            try await RESTTests.call(client, .post, RESTTests.base + ":runQuery", query)
            try await RESTTests.call(client, .post, RESTTests.base + ":runQuery", query)
            let report = try #require(try await RESTTests.call(client, .get, usage) as? [String: Any])
            let reports = try #require(report["reports"] as? [[String: Any]])
            #expect(reports.count == 1)
            #expect(reports.first?["numQueries"] as? String == "2")
            let index = try #require(reports.first?["index"] as? [String: Any])
            #expect(index["name"] as? String == "projects/p1/databases/(default)/collectionGroups/books/indexes/_")
            #expect(index["queryScope"] as? String == "COLLECTION")
            #expect(index["fields"] as? [[String: String]] == [
                ["fieldPath": "owner", "order": "ASCENDING"], ["fieldPath": "tags", "order": "ASCENDING"], ["fieldPath": "__name__", "order": "ASCENDING"],
            ])
            // Another database's report is its own; the database is required.
            let other = try await RESTTests.call(client, .get, "/emulator/v1/projects/p1:indexUsage?database=projects/p1/databases/other")
            #expect((other as? [String: Any])?.isEmpty == true)
            let refused = try await RESTTests.call(client, .get, "/emulator/v1/projects/p1:indexUsage", expect: .badRequest)
            #expect(RESTTests.error(refused)?.1 == #"Database name "" lacks "projects" at index 0."#)
        }
    }

    @Test func preflightAndCrossOriginAnswers() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        try await server.makeApplication().test(.live) { client in
            // A preflight grants whatever headers the page asks to send, the App Check token among them.
            let asked = "x-firebase-appcheck, x-goog-api-client,content-type"
            try await client.execute(
                uri: RESTTests.base + "/c/a", method: .options,
                headers: [.origin: "http://localhost:3000", .accessControlRequestMethod: "PATCH", .accessControlRequestHeaders: asked]
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.accessControlAllowOrigin] == "http://localhost:3000")
                #expect(response.headers[.accessControlAllowMethods] == "DELETE,GET,HEAD,PATCH,POST,PUT")
                #expect(response.headers[.accessControlAllowHeaders] == asked)
                #expect(response.headers[.accessControlAllowCredentials] == "true")
            }
            // Pages opened from file:// send the origin `null`.
            try await client.execute(uri: RESTTests.base + "/c/a", method: .options, headers: [.origin: "null"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == "null")
                #expect(response.headers[.accessControlAllowHeaders] == nil)
            }
            // A page on the internet may reach Flint on the developer's machine when the browser asks.
            try await client.execute(
                uri: RESTTests.base + "/c/a", method: .options,
                headers: [.origin: "https://app.example.com", HTTPField.Name("access-control-request-private-network")!: "true"]
            ) { response in
                #expect(response.headers[HTTPField.Name("access-control-allow-private-network")!] == "true")
            }
            // OPTIONS from something other than a browser is answered, and told nothing.
            try await client.execute(uri: "/anything", method: .options) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
            try await client.execute(uri: "/", method: .get, headers: [.origin: "http://localhost:3000"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == "http://localhost:3000")
                #expect(response.headers[values: .vary] == ["Origin"])
            }
            // Errors, the framework's own included, can be read by the page too.
            for uri in [RESTTests.base + "/c/missing", "/no/route"] {
                try await client.execute(uri: uri, method: .get, headers: [.origin: "http://localhost:3000"]) { response in
                    #expect(response.status == .notFound)
                    #expect(response.headers[.accessControlAllowOrigin] == "http://localhost:3000")
                    #expect(response.headers[.accessControlAllowCredentials] == "true")
                }
            }
        }
    }
}
