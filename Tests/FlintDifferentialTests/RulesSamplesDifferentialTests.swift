import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The verdicts written in rules-samples/*/tests*.json, asked of the reference emulator: the
/// tables Flint is tested against say what the reference says. Skips when it is absent.
struct RulesSamplesDifferentialTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("rules-samples")

    indirect enum JSON: Decodable {
        case null, bool(Bool), int(Int64), double(Double), string(String), array([JSON]), object([String: JSON])

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null } else if let b = try? c.decode(Bool.self) { self = .bool(b) } else if let i = try? c.decode(Int64.self) {
                self = .int(i)
            } else if let d = try? c.decode(Double.self) { self = .double(d) } else if let s = try? c.decode(String.self) { self = .string(s) } else if let a = try? c.decode([JSON].self) {
                self = .array(a)
            } else { self = .object(try c.decode([String: JSON].self)) }
        }

        /// Firestore's REST value.
        var rest: [String: Any] {
            switch self {
            case .null: ["nullValue": NSNull()]
            case .bool(let b): ["booleanValue": b]
            case .int(let i): ["integerValue": String(i)]
            case .double(let d): ["doubleValue": d]
            case .string(let s): ["stringValue": s]
            case .array(let a): ["arrayValue": ["values": a.map(\.rest)]]
            case .object(let o): ["mapValue": ["fields": o.mapValues(\.rest)]]
            }
        }

        var fields: [String: Any] { if case .object(let o) = self { o.mapValues(\.rest) } else { [:] } }
    }

    struct Spec: Decodable {
        var rules: String
        var data: [String: JSON]
        var tests: [Case]
    }

    struct Case: Decodable {
        var name: String
        var auth: JSON?
        var op: String
        var path: String
        var data: JSON?
        var `where`: [[JSON]]?
        var limit: Int?
        var expect: String
    }

    static func token(_ auth: JSON?) -> String? {
        guard let auth else { return nil }
        if case .string("owner") = auth { return "Bearer owner" }
        guard case .object(let o) = auth, case .string(let uid)? = o["uid"] else { return nil }
        let b64 = { (s: String) in
            Data(s.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        return "Bearer " + b64(#"{"alg":"none"}"#) + "." + b64(#"{"sub":"\#(uid)","user_id":"\#(uid)"}"#) + "."
    }

    @Test func theReferenceAgreesWithEveryWrittenVerdict() async throws {
        guard let reference = await ReferenceEmulator.start() else { return }
        defer { reference.stop() }
        let files = ["seed-000-bookstore/tests.json", "seed-001-music-social/tests.json", "seed-001-music-social/tests.friends-only.json", "seed-003-elder-care/tests.json"]
        for (n, file) in files.enumerated() {
            let url = Self.samples.appendingPathComponent(file)
            let spec = try JSONDecoder().decode(Spec.self, from: Data(contentsOf: url))
            let source = try String(contentsOf: url.deletingLastPathComponent().appendingPathComponent(spec.rules), encoding: .utf8)
            let project = "samples\(n)"
            let root = "projects/\(project)/databases/(default)/documents"
            let (loaded, _) = try await reference.request("PUT", "/emulator/v1/projects/\(project):securityRules", ["rules": ["files": [["content": source]]]])
            #expect(loaded == 200, "\(file) rules")
            for test in spec.tests {
                _ = try await reference.request("DELETE", "/emulator/v1/projects/\(project)/databases/(default)/documents")
                let seed = spec.data.map { path, doc in ["update": ["name": "\(root)/\(path)", "fields": doc.fields]] }
                _ = try await reference.request("POST", "/v1/\(root):commit", ["writes": seed])
                let auth = Self.token(test.auth)
                let status: Int
                let fields = test.data?.fields ?? [:]
                switch test.op {
                case "get":
                    status = try await reference.request("GET", "/v1/\(root)/\(test.path)", authorization: auth).0
                case "list":
                    let parts = test.path.split(separator: "/").map(String.init)
                    let parent = parts.dropLast().isEmpty ? root : root + "/" + parts.dropLast().joined(separator: "/")
                    var query: [String: Any] = ["from": [["collectionId": parts.last ?? ""]]]
                    let ops = ["==": "EQUAL", "!=": "NOT_EQUAL", "<": "LESS_THAN", ">": "GREATER_THAN", "in": "IN"]
                    let filters: [[String: Any]] = (test.where ?? []).compactMap { clause in
                        guard clause.count == 3, case .string(let f) = clause[0], case .string(let op) = clause[1], let o = ops[op] else { return nil }
                        return ["fieldFilter": ["field": ["fieldPath": f], "op": o, "value": clause[2].rest]]
                    }
                    if filters.count == 1 { query["where"] = filters[0] }
                    if filters.count > 1 { query["where"] = ["compositeFilter": ["op": "AND", "filters": filters]] }
                    if let limit = test.limit { query["limit"] = limit }
                    status = try await reference.request("POST", "/v1/\(parent):runQuery", ["structuredQuery": query], authorization: auth).0
                default:
                    var write: [String: Any]
                    switch test.op {
                    case "delete": write = ["delete": "\(root)/\(test.path)"]
                    case "create": write = ["update": ["name": "\(root)/\(test.path)", "fields": fields], "currentDocument": ["exists": false]]
                    case "update":
                        write = ["update": ["name": "\(root)/\(test.path)", "fields": fields], "updateMask": ["fieldPaths": Array(fields.keys)],
                            "currentDocument": ["exists": true]]
                    default: write = ["update": ["name": "\(root)/\(test.path)", "fields": fields]]
                    }
                    status = try await reference.request("POST", "/v1/\(root):commit", ["writes": [write]], authorization: auth).0
                }
                let denied = status == 403
                #expect(denied == (test.expect == "deny"), "\(file): \(test.name): the reference answered \(status)")
            }
        }
    }
}
