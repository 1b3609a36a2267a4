import FlintTesting
import Foundation
import Testing

/// Random rulesets whose matches overlap (`/d/{id}` beside `/d/{x}`, `/{c}/{id}`, `/{p=**}`),
/// each statement guarded by a condition that is true, false, needs the stored document, or
/// needs a read, then batch gets and queries of several ways (`__name__ in [...]`, an `OR`
/// beside a name) asked of both servers: the status and a denial's whole message must be the
/// reference's, so both name the same passes of the same statements in the same order.
/// Commits are left out: the reference takes their second passes in an order of its own
/// hashing (security-rules.md). `FLINT_RULES_OVERLAP_SEED` picks other rulesets.
struct RulesOverlappingMatchFuzzTests {
    static let paths = ["/d/{id}", "/d/{x}", "/{c}/{id}", "/{p=**}", "/e/{id}", "/{p=**}/d/{id}"]
    static let conditions = [
        "true", "false", "resource.data.a == 1", "resource == null", "exists(/databases/$(database)/documents/d/y)",
        "request.auth != null", "resource.data.a > 0", "get(/databases/$(database)/documents/e/x).data.a == 2", "request.query.limit == 5",
    ]
    static let methods = ["read", "get", "list", "write", "create, update"]
    static let documents = ["d/y", "d/z", "e/x", "f/w"]
    /// What is stored before each ruleset's requests; d/z is missing.
    static let stored = [("d/y", 1), ("e/x", 2), ("f/w", 1)]

    static func pick<T>(_ items: [T], _ rng: inout SeededGenerator) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }

    static func ruleset(_ rng: inout SeededGenerator) -> String {
        let matches = (0..<Int.random(in: 1...4, using: &rng)).map { _ in
            let path = pick(paths, &rng)
            let statements = (0..<Int.random(in: 1...3, using: &rng)).map { _ in "allow \(pick(methods, &rng)): if \(pick(conditions, &rng));" }
            return "    match \(path) { " + statements.joined(separator: "\n      ") + " }"
        }
        return "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n" + matches.joined(separator: "\n")
            + "\n  }\n}\n"
    }

    @Test func overlappingMatchesAreNamedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "overlapping matches") else { return }
        defer { stop() }
        let seed = ProcessInfo.processInfo.environment["FLINT_RULES_OVERLAP_SEED"].flatMap { UInt64($0) } ?? 20_261_130
        var rng = SeededGenerator(seed: seed)
        var outcomes: [Int: Int] = [:]
        for step in 0..<40 {
            let project = "flint-overlap-\(step)"
            let root = "projects/\(project)/databases/(default)/documents"
            let rules = Self.ruleset(&rng)
            for base in [reference.base, flint] {
                #expect(try await RawHTTP.loadRules(rules, project: project, on: base) == 200)
                for (path, a) in Self.stored {
                    _ = try await RawHTTP.send("PATCH", "\(base)/v1/\(root)/\(path)", #"{"fields": {"a": {"integerValue": "\#(a)"}}}"#)
                }
            }
            let authorization = Bool.random(using: &rng) ? nil : RulesDifferential.bearer(#"{"sub":"alice"}"#)
            func name(_ path: String) -> String { #"{"referenceValue": "\#(root)/\#(path)"}"# }
            let gets = (0..<Int.random(in: 2...3, using: &rng)).map { _ in "\"\(root)/\(Self.pick(Self.documents, &rng))\"" }
            let names = (0..<Int.random(in: 1...3, using: &rng)).map { _ in name(Self.pick(Self.documents, &rng)) }
            let collection = Self.pick(["d", "e"], &rng)
            let limit = Bool.random(using: &rng) ? #", "limit": 5"# : ""
            let requests = [
                (":batchGet", #"{"documents": [\#(gets.joined(separator: ", "))]}"#),
                (":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "\#(collection)"}], "where": {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "IN", "value": {"arrayValue": {"values": [\#(names.joined(separator: ", "))]}}}}\#(limit)}}"#),
                (":runQuery", #"{"structuredQuery": {"from": [{"collectionId": "\#(collection)"}], "where": {"compositeFilter": {"op": "OR", "filters": [{"fieldFilter": {"field": {"fieldPath": "a"}, "op": "EQUAL", "value": {"integerValue": "\#(Int.random(in: 1...2, using: &rng))"}}}, {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "EQUAL", "value": \#(names[0])}}]}}\#(limit)}}"#),
            ]
            for (verb, body) in requests {
                let target = "/v1/\(root)\(verb)"
                let expected = try await RawHTTP.send("POST", reference.base + target, body, authorization: authorization)
                let found = try await RawHTTP.send("POST", flint + target, body, authorization: authorization)
                #expect(found.status == expected.status, "step \(step) \(verb): \(rules)\n\(body)")
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "step \(step) \(verb): \(rules)\n\(body)")
                outcomes[expected.status, default: 0] += 1
            }
        }
        // Both allowed and denied requests come up, or the test compares little.
        #expect(outcomes[200, default: 0] > 10 && outcomes[403, default: 0] > 40, "\(outcomes)")
    }
}
