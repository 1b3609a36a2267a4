import FlintFixtures
import FlintRulesTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The verdicts and denial messages written in rules-samples/*/tests*.json, asked of the
/// reference emulator: the tables Flint is tested against say what the reference says. Skips
/// when it is absent.
struct RulesSamplesDifferentialTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("rules-samples")

    static func rest(_ v: SpecValue) -> [String: Any] { DocumentJSON.restValue(v.value) }

    static func fields(_ v: SpecValue?) -> [String: Any] {
        if case .map(let m)? = v?.value { return DocumentJSON.restFields(m) }
        return [:]
    }

    static func token(_ auth: SpecAuth?) -> String? {
        guard let auth else { return nil }
        guard case .user(let uid, _) = auth else { return "Bearer owner" }
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
            let spec = try RulesSpec.load(url)
            let source = try String(contentsOf: url.deletingLastPathComponent().appendingPathComponent(spec.rules), encoding: .utf8)
            let project = "samples\(n)"
            let root = "projects/\(project)/databases/(default)/documents"
            let (loaded, _) = try await reference.request("PUT", "/emulator/v1/projects/\(project):securityRules", ["rules": ["files": [["content": source]]]])
            #expect(loaded == 200, "\(file) rules")
            for test in spec.tests {
                _ = try await reference.request("DELETE", "/emulator/v1/projects/\(project)/databases/(default)/documents")
                let seed = (spec.data ?? [:]).map { path, doc in ["update": ["name": "\(root)/\(path)", "fields": Self.fields(doc)]] }
                _ = try await reference.request("POST", "/v1/\(root):commit", ["writes": seed])
                let auth = Self.token(test.auth)
                let status: Int
                let answer: Any
                let fields = Self.fields(test.data)
                switch test.op {
                case "get":
                    (status, answer) = try await reference.request("GET", "/v1/\(root)/\(test.path ?? "")", authorization: auth)
                case "list":
                    let parts = (test.path ?? "").split(separator: "/").map(String.init)
                    let parent = parts.dropLast().isEmpty ? root : root + "/" + parts.dropLast().joined(separator: "/")
                    var query: [String: Any] = ["from": [["collectionId": parts.last ?? ""]]]
                    let ops = ["==": "EQUAL", "!=": "NOT_EQUAL", "<": "LESS_THAN", ">": "GREATER_THAN", "in": "IN"]
                    let filters: [[String: Any]] = (test.where ?? []).compactMap { clause in
                        guard clause.count == 3, case .string(let f) = clause[0], case .string(let op) = clause[1], let o = ops[op] else { return nil }
                        return ["fieldFilter": ["field": ["fieldPath": f], "op": o, "value": Self.rest(clause[2])]]
                    }
                    if filters.count == 1 { query["where"] = filters[0] }
                    if filters.count > 1 { query["where"] = ["compositeFilter": ["op": "AND", "filters": filters]] }
                    if let limit = test.limit { query["limit"] = limit }
                    (status, answer) = try await reference.request("POST", "/v1/\(parent):runQuery", ["structuredQuery": query], authorization: auth)
                default:
                    var write: [String: Any]
                    let name = "\(root)/\(test.path ?? "")"
                    switch test.op {
                    case "delete": write = ["delete": name]
                    case "create": write = ["update": ["name": name, "fields": fields], "currentDocument": ["exists": false]]
                    case "update":
                        write = ["update": ["name": name, "fields": fields], "updateMask": ["fieldPaths": Array(fields.keys)], "currentDocument": ["exists": true]]
                    default: write = ["update": ["name": name, "fields": fields]]
                    }
                    (status, answer) = try await reference.request("POST", "/v1/\(root):commit", ["writes": [write]], authorization: auth)
                }
                let denied = status == 403
                #expect(denied == (test.expect == "deny"), "\(file): \(test.name): the reference answered \(status)")
                if let denial = test.denial {
                    // A streaming method's error comes as the one element of an array.
                    let error = ((answer as? [Any])?.first ?? answer) as? [String: Any]
                    #expect((error?["error"] as? [String: Any])?["message"] as? String == denial, "\(file): \(test.name)")
                }
            }
        }
    }
}
