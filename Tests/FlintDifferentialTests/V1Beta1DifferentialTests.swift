import Foundation
import Testing

/// Firestore's earlier API version over REST on both servers: each call under `/v1beta1/`
/// must end with the same status and answer the same JSON as on the reference (times,
/// transactions and page tokens aside), and leave the same documents behind for v1 to read.
struct V1Beta1DifferentialTests {
    static let project = "flint-v1beta1"
    static let name = "projects/\(project)/databases/(default)/documents"

    /// Method, path below `/v1beta1/{name}`, body.
    static let calls: [(String, String, String?)] = [
        ("PATCH", "/c/a", #"{"fields": {"n": {"integerValue": "1"}, "s": {"stringValue": "x"}}}"#),
        ("POST", "/c?documentId=b", #"{"fields": {"n": {"integerValue": "2"}}}"#),
        ("POST", "/c?documentId=b", #"{"fields": {}}"#),
        ("GET", "/c/a?mask.fieldPaths=n", nil),
        ("GET", "/c/zz", nil),
        ("GET", "/c?orderBy=n%20desc", nil),
        ("GET", "/c?pageSize=1", nil),
        ("PATCH", "/c/a?updateMask.fieldPaths=s&currentDocument.exists=true", #"{"fields": {"s": {"stringValue": "y"}}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], "where": {"fieldFilter": {"field": {"fieldPath": "n"}, "op": "GREATER_THAN", "value": {"integerValue": "1"}}}}}"#),
        ("POST", ":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "c"}], "orderBy": [{"field": {"fieldPath": "n"}}], "limit": 1}}"#),
        ("POST", "/c/a:runQuery", #"{"structuredQuery": {"from": [{"collectionId": "sub"}]}}"#),
        ("POST", ":runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]}, "aggregations": [{"count": {}}]}}"#),
        ("POST", "/c/a:runAggregationQuery", #"{"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "c"}]}, "aggregations": [{"count": {}}]}}"#),
        ("POST", ":batchGet", #"{"documents": ["NAME/c/a", "NAME/c/zz"]}"#),
        ("POST", ":commit", #"{"writes": [{"update": {"name": "NAME/c/d", "fields": {}}, "updateTransforms": [{"fieldPath": "t", "increment": {"integerValue": "5"}}]}]}"#),
        ("POST", ":commit", #"{"writes": [{"delete": "NAME/c/d", "currentDocument": {"exists": false}}]}"#),
        ("POST", ":batchWrite", #"{"writes": [{"delete": "NAME/c/b"}, {"update": {"name": "NAME/c/e", "fields": {}}, "currentDocument": {"exists": true}}]}"#),
        ("POST", ":listCollectionIds", "{}"),
        ("POST", "/c/a:listCollectionIds", "{}"),
        ("POST", ":beginTransaction", #"{"options": {"readOnly": {}}}"#),
        ("POST", ":rollback", #"{"transaction": "bm90IG9uZQ=="}"#),
        ("DELETE", "/c/a?currentDocument.exists=false", nil),
        ("DELETE", "/c/zz", nil),
    ]

    @Test func v1beta1AnswersAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "v1beta1") else { return }
        defer { stop() }
        var answers: [[String]] = [[], []]
        for (side, base) in [reference.base, flint].enumerated() {
            _ = try await RawHTTP.send("DELETE", "\(base)/emulator/v1/projects/\(Self.project)/databases/(default)/documents", nil)
            for (method, path, body) in Self.calls {
                let (status, json) = try await RawHTTP.send(
                    method, "\(base)/v1beta1/\(Self.name)\(path)", body?.replacingOccurrences(of: "NAME", with: Self.name))
                answers[side].append("\(method) \(path): \(status) \(Self.canonical(json))")
            }
            for document in ["a", "b", "d", "e"] {
                let (status, json) = try await RawHTTP.send("GET", "\(base)/v1/\(Self.name)/c/\(document)", nil)
                answers[side].append("v1 GET \(document): \(status) \(Self.canonical(json))")
            }
        }
        #expect(answers[0].count == Self.calls.count + 4)
        for (theirs, ours) in zip(answers[0], answers[1]) {
            #expect(ours == theirs)
        }
    }

    /// The answer as sorted JSON without what differs from run to run: times, transaction ids
    /// and page tokens (whose presence is kept). An error keeps only its status, as the
    /// wording of the v1 errors is compared elsewhere.
    static func canonical(_ json: Any?) -> String {
        func strip(_ value: Any) -> Any {
            if let object = value as? [String: Any] {
                if let error = object["error"] as? [String: Any] { return ["error": error["status"] ?? ""] }
                var kept: [String: Any] = [:]
                for (key, inner) in object {
                    switch key {
                    // A batch write's statuses keep their codes; some wordings are production's.
                    case "createTime", "updateTime", "readTime", "commitTime", "message": continue
                    case "transaction", "nextPageToken": kept[key] = "…"
                    default: kept[key] = strip(inner)
                    }
                }
                return kept
            }
            if let array = value as? [Any] { return array.map(strip) }
            return value
        }
        guard let json, let data = try? JSONSerialization.data(withJSONObject: strip(json), options: [.sortedKeys, .fragmentsAllowed]) else {
            return "nothing"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
