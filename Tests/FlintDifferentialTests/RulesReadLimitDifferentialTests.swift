import Foundation
import Testing

/// How many documents the rules of one request may read, over REST on both servers: 10 for
/// each document decided, 20 for a batch get or commit in all, a document read twice counting
/// once.
struct RulesReadLimitDifferentialTests {
    /// Rules under which `c/{n}` reads `k` documents of its own, `x/{n * k}` onwards.
    static func rules(reading k: Int) -> String {
        let reads = (0..<k).map { "get(/databases/$(database)/documents/x/$(string(int(n) * \(k) + \($0)))).data.v == 1" }
        let shared = (0..<10).map { "get(/databases/$(database)/documents/x/\($0)).data.v == 1" }
        return RulesDifferential.ruleset([
            "match /c/{n} { allow read, write: if \(reads.joined(separator: " && ")); }",
            "match /same/{n} { allow read, write: if \(shared.joined(separator: " && ")); }",
        ])
    }

    @Test func readsAreBoundedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "rules read limits") else { return }
        defer { stop() }
        var outcomes: [String] = []
        for (k, count) in [(10, 1), (11, 1), (6, 2), (10, 2), (7, 3), (5, 4), (5, 5), (4, 6)] {
            let project = "flint-read-limits-\(k)-\(count)"
            let documents = "/v1/projects/\(project)/databases/(default)/documents"
            let names = (0..<count).map { "projects/\(project)/databases/(default)/documents/c/\($0)" }
            let stored = (0..<30).map { #"{"update": {"name": "projects/\#(project)/databases/(default)/documents/x/\#($0)", "fields": {"v": {"integerValue": "1"}}}}"# }
            let commit = #"{"writes": [\#((names + ["projects/\(project)/databases/(default)/documents/same/a"]).map { #"{"update": {"name": "\#($0)", "fields": {}}}"# }.joined(separator: ", "))]}"#
            let batchGet = #"{"documents": [\#(names.map { "\"\($0)\"" }.joined(separator: ", "))]}"#
            var answers: [String] = []
            for base in [reference.base, flint] {
                #expect(try await RawHTTP.loadRules(Self.rules(reading: k), project: project, on: base) == 200)
                #expect(try await RawHTTP.send("POST", base + documents + ":commit", #"{"writes": [\#(stored.joined(separator: ", "))]}"#).status == 200)
                let written = try await RawHTTP.send("POST", base + documents + ":commit", commit, authorization: nil).status
                let read = try await RawHTTP.send("POST", base + documents + ":batchGet", batchGet, authorization: nil).status
                answers.append("\(k)x\(count): \(written) \(read)")
            }
            #expect(answers[1] == answers[0])
            outcomes.append(answers[0])
        }
        // Both limits are crossed somewhere, and requests up to them pass.
        #expect(outcomes == [
            "10x1: 200 200", "11x1: 403 403", "6x2: 200 200", "10x2: 200 200", "7x3: 403 403", "5x4: 200 200", "5x5: 403 403", "4x6: 403 403",
        ])
    }
}
