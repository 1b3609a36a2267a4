import FlintEngine
import FlintProto
import FlintServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import GRPCProtobuf
import Testing

/// Firestore's earlier API version on both servers. Over REST, each call under `/v1beta1/`
/// must end with the same status and answer the same JSON as on the reference (times,
/// transactions and page tokens aside), and leave the same documents behind for v1 to read.
/// Over gRPC, v1beta1 calls and calls to methods neither version has must end alike.
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

    /// A gRPC call's outcome: the code and message of its refusal, or what it found.
    static func grpcOutcomes(port: Int, project: String) async throws -> [String] {
        try await withGRPCClient(
            transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
        ) { client in
            let metadata: Metadata = ["authorization": "Bearer owner"]
            var commit = Google_Firestore_V1_CommitRequest()
            commit.database = "projects/\(project)/databases/(default)"
            var write = Google_Firestore_V1_Write()
            write.update.name = "projects/\(project)/databases/(default)/documents/g/a"
            write.update.fields["n"] = Google_Firestore_V1_Value.with { $0.integerValue = 9 }
            commit.writes = [write]
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = write.update.name
            var lines: [String] = []
            for (service, method, request) in [
                ("google.firestore.v1beta1.Firestore", "Commit", try commit.serializedBytes() as [UInt8]),
                ("google.firestore.v1beta1.Firestore", "GetDocument", try get.serializedBytes()),
                ("google.firestore.v1beta1.Firestore", "RunAggregationQuery", []),
                ("google.firestore.v1beta1.Firestore", "NoSuchMethod", []),
                ("google.firestore.v1.Firestore", "NoSuchMethod", []),
                ("no.Such", "Service", []),
            ] {
                do {
                    let answer = try await client.unary(
                        request: ClientRequest(message: request, metadata: metadata),
                        descriptor: MethodDescriptor(fullyQualifiedService: service, method: method),
                        serializer: Bytes(), deserializer: Bytes(), options: .defaults
                    ) { try $0.message }
                    let found = (try? Google_Firestore_V1_Document(serializedBytes: answer))?.fields["n"]?.integerValue
                    lines.append("\(service)/\(method): OK \(found.map(String.init) ?? "")")
                } catch let error as RPCError {
                    lines.append("\(service)/\(method): \(error.code) \(error.message)")
                }
            }
            return lines
        }
    }

    struct Bytes: MessageSerializer, MessageDeserializer {
        func serialize<Out: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Out { Out(message) }
        func deserialize<In: GRPCContiguousBytes>(_ bytes: In) throws -> [UInt8] { bytes.withUnsafeBytes { Array($0) } }
    }

    @Test func grpcCallsEndAsOnTheReference() async throws {
        guard let (reference, flintPort, stop) = try await RawHTTP.bothServerPorts(for: "v1beta1 gRPC") else { return }
        defer { stop() }
        let theirs = try await Self.grpcOutcomes(port: reference.port, project: "flint-v1beta1-grpc")
        let ours = try await Self.grpcOutcomes(port: flintPort, project: "flint-v1beta1-grpc")
        #expect(theirs.count == 6)
        #expect(theirs[1] == "google.firestore.v1beta1.Firestore/GetDocument: OK 9")
        for (a, b) in zip(theirs, ours) {
            #expect(b == a)
        }
    }
}
