import FlintRulesTesting
import Foundation
import Testing

/// The seed apps' own rules (rules-samples/), each with a table of requests and the verdicts
/// they should get: every match block and method, allowed and denied. Run by the same runner
/// as `flint rules test`.
struct RulesSamplesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("rules-samples")

    static let specs = ["seed-000-bookstore/tests.json", "seed-001-music-social/tests.json", "seed-001-music-social/tests.friends-only.json", "seed-003-elder-care/tests.json"]

    @Test(arguments: specs) func everyCaseGetsItsVerdict(_ file: String) async throws {
        let result = await RulesTestRunner.run(Self.root.appendingPathComponent(file))
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.cases.count >= 5)
        for c in result.cases where !c.passed {
            Issue.record("\(c.name): \(c.outcome)\n\(c.explanation.joined(separator: "\n"))")
        }
    }
}
