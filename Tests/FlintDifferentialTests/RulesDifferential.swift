import FlintEngine
import FlintModel
import FlintRules
import Foundation
import Testing

/// What the rules differential suites share: one ruleset of many single-statement matches,
/// loaded on the reference and on a fresh Flint database, and a verdict compared per case.
enum RulesDifferential {
    /// A v2 ruleset whose matches are the given lines, inside the documents match.
    static func ruleset(_ matches: [String]) -> String {
        "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n"
            + matches.map { "    " + $0 + "\n" }.joined() + "  }\n}\n"
    }

    /// Loads `source` for `project` on the reference alone: whether it loaded, and the lines of
    /// its refusal ("Error compiling rules:\nL4:37 Missing 'match' keyword before path.\n…"
    /// gives `["L4:37 Missing 'match' keyword before path.", …]`).
    static func referenceRefusal(_ source: String, project: String, on reference: ReferenceEmulator) async throws -> (loaded: Bool, problems: [String]) {
        let (status, body) = try await reference.request(
            "PUT", "/emulator/v1/projects/\(project):securityRules", ["rules": ["files": [["content": source]]]])
        let message = ((body as? [String: Any])?["error"] as? [String: Any])?["message"] as? String ?? ""
        return (status == 200, message.split(separator: "\n").dropFirst().map(String.init))
    }

    /// Flint's problems with a ruleset, as `referenceRefusal` gives the reference's lines.
    static func refusalLines(_ problems: [Diagnostic]) -> [String] {
        problems.map { "L\($0.position.line):\($0.position.column) \($0.message)" }
    }

    /// Loads `source` for `project` on the reference and on a new Flint database, which it returns.
    static func load(_ source: String, project: String, on reference: ReferenceEmulator) async throws -> Database {
        let (loaded, problems) = try await reference.request("PUT", "/emulator/v1/projects/\(project):securityRules", ["rules": ["files": [["content": source]]]])
        try #require(loaded == 200, "the reference refused the rules: \(problems)")
        let registry = RulesRegistry()
        let flintProblems = registry.load(source, project: project).filter { $0.severity == .error }
        try #require(flintProblems.isEmpty, "Flint refused the rules: \(flintProblems)")
        return Database(id: DatabaseID(project: project), rules: registry)
    }

    /// Runs Flint's side of a case and expects its verdict to be the reference's: allowed, or
    /// denied with PERMISSION_DENIED, in the words of `referenceAnswer` when it is given.
    static func expectSameVerdict(
        _ description: String, referenceAllows: Bool, referenceAnswer: Any? = nil, flint: () async throws -> Void
    ) async {
        var flintAllows = true
        do { try await flint() } catch {
            #expect((error as? FlintError)?.code == .permissionDenied, "\(description): \(error)")
            flintAllows = false
            if !referenceAllows, let referenceAnswer {
                #expect((error as? FlintError).map { plain($0.message) } == message(referenceAnswer).map(plain), "\(description)")
            }
        }
        #expect(flintAllows == referenceAllows, "\(description): the reference \(referenceAllows ? "allows" : "denies") it")
    }

    /// The issues of the reference's answer to loading rules, each as `line:column[offset-end]
    /// description`.
    static func issues(_ answer: Any?) -> [String] {
        ((answer as? [String: Any])?["issues"] as? [[String: Any]] ?? []).map { issue in
            let p = issue["sourcePosition"] as? [String: Any] ?? [:]
            return "\(p["line"] ?? 0):\(p["column"] ?? 0)[\(p["currentOffset"] ?? 0)-\(p["endOffset"] ?? 0)] \(issue["description"] ?? "")"
        }
    }

    /// Flint's problems with a ruleset, written as `issues(_:)` writes the reference's.
    static func issues(_ problems: [Diagnostic]) -> [String] {
        problems.map { d in
            "\(d.position.line):\(d.position.column)[\(d.isLocated ? d.position.offset : 0)-\(d.isLocated ? d.endOffset ?? d.position.offset : 0)] \(d.message)"
        }
    }

    /// The message of a REST error answer, alone or first in a stream's array.
    static func message(_ answer: Any) -> String? {
        let error = ((answer as? [Any])?.first ?? answer) as? [String: Any]
        return (error?["error"] as? [String: Any])?["message"] as? String
    }

    /// Each expression guards `get` on a collection of its own (`prefix` and its index); a get
    /// of a missing document there is allowed (not found) or denied, and must be alike on both,
    /// denials in the same words.
    /// Answers how many the reference allowed.
    static func compareGets(
        _ expressions: [String], prefix: String, project: String, authorization: String? = nil, on reference: ReferenceEmulator
    ) async throws -> Int {
        let source = ruleset(expressions.enumerated().map { i, e in "match /\(prefix)\(i)/{doc} { allow get: if \(e); }" })
        let database = try await load(source, project: project, on: reference)
        let auth = try AuthContext(authorization: authorization)
        var allowed = 0
        for (i, expression) in expressions.enumerated() {
            let (status, body) = try await reference.request(
                "GET", "/v1/projects/\(project)/databases/(default)/documents/\(prefix)\(i)/x", authorization: authorization)
            #expect(status == 404 || status == 403, "\(expression): the reference answered \(status)")
            let key = try DocumentKey(parsing: "\(prefix)\(i)/x")
            await expectSameVerdict(expression, referenceAllows: status == 404, referenceAnswer: body) { _ = try await database.get(key, auth: auth) }
            if status == 404 { allowed += 1 }
        }
        return allowed
    }

    /// Which of `collections` each side lets an unauthenticated client get `collection/tail` in
    /// (a missing document: allowed is not found), and the reference's status for each. The
    /// path is percent-encoded segment by segment, so `tail` may hold any text but `/`.
    static func gets(
        in collections: [String], at tail: String, project: String, database: Database, on reference: ReferenceEmulator
    ) async throws -> (reference: [String], flint: [String], statuses: [Int]) {
        let encoded = tail.split(separator: "/").map { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }.joined(separator: "/")
        var answer: (reference: [String], flint: [String], statuses: [Int]) = ([], [], [])
        for collection in collections {
            let (status, _) = try await reference.request(
                "GET", "/v1/projects/\(project)/databases/(default)/documents/\(collection)/\(encoded)", authorization: nil)
            answer.statuses.append(status)
            if status == 404 { answer.reference.append(collection) }
            let key = try DocumentKey(parsing: "\(collection)/\(tail)")
            do {
                _ = try await database.get(key, auth: .unauthenticated)
                answer.flint.append(collection)
            } catch {}
        }
        return answer
    }

    /// A denial without the argument of a failed read, which Flint writes as a path and the
    /// reference in its internal form (a documented difference).
    static func plain(_ message: String) -> String {
        message.replacing(/Service call error\. Function: \[(\w+)\], Argument: (?s:.*?) for '/) { "Service call error. Function: [\($0.output.1)] for '" }
    }

    /// `Bearer <unsigned JWT>` carrying `claims`, as the client SDKs' mock tokens are.
    static func bearer(_ claims: String) -> String {
        let b64 = { (s: String) in
            Data(s.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        return "Bearer " + b64(#"{"alg":"none"}"#) + "." + b64(claims) + "."
    }
}
