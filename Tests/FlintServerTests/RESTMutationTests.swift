import FlintEngine
import FlintServer
import FlintTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Valid REST bodies for every kind of request, mutated at random (a fixed seed, so a failure
/// repeats): a value swapped for another of any type, a character dropped or doubled, the text
/// cut short. Whatever arrives, Flint answers with a status below 500 and a JSON body, and keeps
/// serving.
struct RESTMutationTests {
    static let base = "/v1/projects/mutations/databases/(default)/documents"
    static let name = "projects/mutations/databases/(default)/documents"

    static let requests: [(HTTPRequest.Method, String, String)] = [
        (.post, base + ":commit", #"{"writes": [{"update": {"name": "\#(name)/c/a", "fields": {"i": {"integerValue": "1"}, "d": {"doubleValue": 1.5}, "s": {"stringValue": "x"}, "t": {"timestampValue": "2020-01-01T00:00:00Z"}, "m": {"mapValue": {"fields": {"k": {"arrayValue": {"values": [{"booleanValue": true}, {"nullValue": null}]}}}}}, "v": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1}, {"doubleValue": 2}]}}}}}}}, "updateMask": {"fieldPaths": ["i", "m.k", "v"]}, "updateTransforms": [{"fieldPath": "n", "increment": {"integerValue": "1"}}, {"fieldPath": "ts", "setToServerValue": "REQUEST_TIME"}], "currentDocument": {"exists": true}}]}"#),
        (.post, base + ":commit", #"{"writes": [{"delete": "\#(name)/c/b", "currentDocument": {"updateTime": "2020-01-01T00:00:00Z"}}, {"transform": {"document": "\#(name)/c/a", "fieldTransforms": [{"fieldPath": "arr", "appendMissingElements": {"values": [{"integerValue": "2"}]}}]}}]}"#),
        (.post, base + ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], "where": {"compositeFilter": {"op": "AND", "filters": [{"fieldFilter": {"field": {"fieldPath": "i"}, "op": "GREATER_THAN", "value": {"integerValue": "0"}}}, {"unaryFilter": {"field": {"fieldPath": "s"}, "op": "IS_NOT_NULL"}}]}}, "orderBy": [{"field": {"fieldPath": "i"}, "direction": "DESCENDING"}], "startAt": {"values": [{"integerValue": "9"}], "before": true}, "offset": 1, "limit": 5, "select": {"fields": [{"fieldPath": "i"}]}}}"#),
        (.post, base + ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c", "allDescendants": true}], "findNearest": {"vectorField": {"fieldPath": "v"}, "queryVector": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1}, {"doubleValue": 2}]}}}}}, "distanceMeasure": "COSINE", "limit": 3, "distanceResultField": "d"}}, "newTransaction": {"readOnly": {}}}"#),
        (.post, base + ":runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]}, "aggregations": [{"alias": "n", "count": {"upTo": "5"}}, {"alias": "s", "sum": {"field": {"fieldPath": "i"}}}, {"avg": {"field": {"fieldPath": "d"}}}]}, "explainOptions": {"analyze": true}}"#),
        (.post, base + ":batchGet", #"{"documents": ["\#(name)/c/a", "\#(name)/c/missing"], "mask": {"fieldPaths": ["i"]}}"#),
        (.post, base + ":beginTransaction", #"{"options": {"readWrite": {}}}"#),
        (.post, base + ":listCollectionIds", #"{"pageSize": 2}"#),
        (.post, base + ":partitionQuery", #"{"structuredQuery": {"from": [{"collectionId": "c", "allDescendants": true}], "orderBy": [{"field": {"fieldPath": "__name__"}}]}, "partitionCount": "3"}"#),
        (.post, base + ":batchWrite", #"{"writes": [{"update": {"name": "\#(name)/c/z", "fields": {"b": {"bytesValue": "AAE="}, "g": {"geoPointValue": {"latitude": 1, "longitude": 2}}, "r": {"referenceValue": "\#(name)/c/a"}}}}]}"#),
        (.post, base + "/c?documentId=made", #"{"fields": {"i": {"integerValue": "3"}}}"#),
        (.patch, base + "/c/a?updateMask.fieldPaths=i", #"{"fields": {"i": {"integerValue": "4"}}}"#),
    ]

    /// One random change to `text`.
    static func mutate(_ text: String, _ rng: inout SeededGenerator) -> String {
        var chars = Array(text)
        let replacements = [#""x""#, "1", "-1", "1e999", "true", "null", "[]", "{}", #"{"a": 1}"#, #""""#, "9223372036854775808", #""\u0000""#, "[[[]]]"]
        switch Int.random(in: 0..<5, using: &rng) {
        case 0, 1:
            // A value after a colon, up to the next comma or closing brace, becomes another.
            let colons = chars.indices.filter { chars[$0] == ":" }
            guard let colon = colons.randomElement(using: &rng) else { return text }
            var end = colon + 1
            var depth = 0
            while end < chars.count {
                let c = chars[end]
                if c == "{" || c == "[" { depth += 1 }
                if c == "}" || c == "]" { if depth == 0 { break }; depth -= 1 }
                if c == "," && depth == 0 { break }
                end += 1
            }
            chars.replaceSubrange(colon + 1..<end, with: " " + replacements.randomElement(using: &rng)!)
        case 2: chars.remove(at: Int.random(in: 0..<chars.count, using: &rng))
        case 3:
            let i = Int.random(in: 0..<chars.count, using: &rng)
            chars.insert(chars[i], at: i)
        default: chars.removeLast(Int.random(in: 1..<chars.count, using: &rng))
        }
        return String(chars)
    }

    @Test func mutatedBodiesGetClearAnswersAndTheServerKeepsServing() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        try await server.makeApplication().test(.live) { client in
            var rng = SeededGenerator(seed: 20261126)
            var refused = 0
            for n in 0..<600 {
                let (method, uri, body) = Self.requests[n % Self.requests.count]
                let sent = n < Self.requests.count ? body : Self.mutate(Self.mutate(body, &rng), &rng)
                let status = try await client.execute(uri: uri, method: method, headers: [.contentType: "application/json", .authorization: "Bearer owner"],
                                                      body: ByteBuffer(string: sent)) { response in
                    #expect(response.status.code < 500, "\(uri) \(sent): \(String(buffer: response.body))")
                    #expect((try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) != nil, "\(uri) \(sent)")
                    return response.status.code
                }
                if status >= 400 { refused += 1 }
            }
            #expect(refused > 100 && refused < 590, "mutations both pass and fail: \(refused) refused")
            try await client.execute(uri: "/", method: .get) { response in #expect(String(buffer: response.body) == "Ok\n") }
        }
    }
}
