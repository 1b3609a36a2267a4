import HTTPTypes
import Testing

/// Ids over 1,500 bytes: refused where a name is stored or matched against stored names, and
/// let be where it is only looked up or deleted, where it names no document. The reference
/// emulator answers each of these so (checked by `IDLengthDifferentialTests`).
struct IDLengthTests {
    static let base = RESTTests.base
    static let name = RESTTests.name
    static let long = String(repeating: "x", count: 1501)

    static func query(_ parts: String) -> String { #"{"structuredQuery": {"from": [{"collectionId": "c"}], \#(parts)}}"# }

    @Test func lookupsAndDeletesFindNothing() async throws {
        try await RESTTests().withServer { client in
            let missing = try await RESTTests.call(client, .get, Self.base + "/c/" + Self.long, expect: .notFound)
            #expect(RESTTests.error(missing)?.1 == "Document (\(Self.name)/c/\(Self.long)) not found.")
            _ = try await RESTTests.call(client, .get, Self.base + "/\(Self.long)/d", expect: .notFound)
            try await RESTTests.call(client, .delete, Self.base + "/c/" + Self.long)
            let batch = try await RESTTests.call(client, .post, Self.base + ":batchGet", #"{"documents": ["\#(Self.name)/c/\#(Self.long)"]}"#)
            #expect((batch as? [[String: Any]])?.first?["missing"] as? String == "\(Self.name)/c/\(Self.long)")
            let commit = try await RESTTests.call(
                client, .post, Self.base + ":commit", #"{"writes": [{"delete": "\#(Self.name)/\#(Self.long)/d"}]}"#) as? [String: Any]
            #expect((commit?["writeResults"] as? [Any])?.count == 1)
            let ids = try await RESTTests.call(
                client, .post, Self.base + "/c/\(Self.long):listCollectionIds", "{}", auth: "Bearer owner") as? [String: Any]
            #expect(ids?.isEmpty == true)
            // A cursor only compares; it may name any document.
            try await RESTTests.call(client, .post, Self.base + ":commit", #"{"writes": [{"update": {"name": "\#(Self.name)/c/a", "fields": {}}}]}"#)
            let after = try await RESTTests.call(
                client, .post, Self.base + ":runQuery",
                Self.query(#""orderBy": [{"field": {"fieldPath": "__name__"}}], "startAt": {"values": [{"referenceValue": "\#(Self.name)/c/\#(Self.long)"}]}"#))
            #expect((after as? [[String: Any]])?.contains { $0["document"] != nil } == false)
            let before = try await RESTTests.call(
                client, .post, Self.base + ":runQuery",
                Self.query(#""orderBy": [{"field": {"fieldPath": "__name__"}}], "endAt": {"values": [{"referenceValue": "\#(Self.name)/\#(Self.long)/d"}]}"#))
            #expect((before as? [[String: Any]])?.compactMap { ($0["document"] as? [String: Any])?["name"] as? String } == ["\(Self.name)/c/a"])
        }
    }

    @Test func storedAndMatchedNamesAreRefused() async throws {
        try await RESTTests().withServer { client in
            let kind = "The key path element kind is longer than 1500 bytes."
            let name = "The key path element name is longer than 1500 bytes."
            let refused: [(HTTPRequest.Method, String, String?, String)] = [
                (.patch, "/\(Self.long)/d", #"{"fields": {}}"#, kind),
                (.patch, "/c/\(Self.long)", #"{"fields": {}}"#, name),
                (.post, "/c/d/\(Self.long)?documentId=e", #"{"fields": {}}"#, kind),
                (.post, ":commit", #"{"writes": [{"update": {"name": "\#(Self.name)/c/a", "fields": {"r": {"referenceValue": "\#(Self.name)/\#(Self.long)/d"}}}}]}"#, kind),
                (.post, ":commit", #"{"writes": [{"transform": {"document": "\#(Self.name)/c/\#(Self.long)", "fieldTransforms": [{"fieldPath": "n", "increment": {"integerValue": "1"}}]}}]}"#, name),
                (.post, "/c/\(Self.long):runQuery", #"{"structuredQuery": {"from": [{"collectionId": "s"}]}}"#, name),
                (.get, "/\(Self.long)/d/s", nil, kind),
                (.post, ":runQuery", Self.query(#""where": {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "EQUAL", "value": {"referenceValue": "\#(Self.name)/\#(Self.long)/d"}}}"#), kind),
                // On other fields the query value's own size limit speaks instead.
                (.post, ":runQuery", Self.query(#""where": {"fieldFilter": {"field": {"fieldPath": "r"}, "op": "EQUAL", "value": {"referenceValue": "\#(Self.name)/c/\#(Self.long)"}}}"#),
                 "value for r is too large to be used in a query"),
            ]
            for (method, path, body, message) in refused {
                let answer = try await RESTTests.call(client, method, Self.base + path, body, expect: .badRequest)
                #expect(RESTTests.error(answer)?.1 == message, "\(method) \(path.prefix(40))")
            }
        }
    }

    /// A stored document's ids are measured when the reference comes to store the write: after
    /// every write of the request was read, before what the write itself stores.
    @Test func storedIDsAreMeasuredWithWhatTheWriteStores() async throws {
        try await RESTTests().withServer { client in
            let name = "The key path element name is longer than 1500 bytes."
            let long = "\(Self.name)/c/\(Self.long)"
            let longField = #"{"\#(Self.long)": {"integerValue": "1"}}"#
            let cases: [(HTTPRequest.Method, String, String, String)] = [
                // A later write's reserved field, an earlier write's stored field, are told first.
                (.post, ":commit", #"{"writes": [{"update": {"name": "\#(long)", "fields": {}}}, {"update": {"name": "\#(Self.name)/c/a", "fields": {"__x__": {"integerValue": "1"}}}}]}"#,
                 "field name __x__ is reserved"),
                (.post, ":commit", #"{"writes": [{"update": {"name": "\#(Self.name)/c/a", "fields": \#(longField)}}, {"update": {"name": "\#(long)", "fields": {}}}]}"#,
                 "The property.name is longer than 1500 bytes."),
                (.post, ":commit", #"{"writes": [{"update": {"name": "\#(long)", "fields": \#(longField)}}]}"#, name),
                (.post, ":commit", #"{"writes": [{"transform": {"document": "\#(long)", "fieldTransforms": [{"fieldPath": "n", "increment": {"stringValue": "1"}}]}}]}"#,
                 "Input must be int64 or double."),
                (.patch, "/c/\(Self.long)?updateMask.fieldPaths=__x__", #"{"fields": {}}"#, "Invalid reserved name in field path __x__"),
                (.post, "/c?documentId=\(Self.long)&mask.fieldPaths=__x__", #"{"fields": {}}"#, "Invalid reserved name in field path __x__"),
                (.post, "/c?documentId=\(Self.long)", #"{"fields": {}}"#, name),
            ]
            for (method, path, body, message) in cases {
                let answer = try await RESTTests.call(client, method, Self.base + path, body, expect: .badRequest)
                #expect(RESTTests.error(answer)?.1 == message, "\(method) \(path.prefix(40)) \(body.prefix(60))")
            }
        }
    }
}
