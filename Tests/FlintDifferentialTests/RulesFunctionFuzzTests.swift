import FlintEngine
import FlintModel
import FlintTesting
import Foundation
import Testing

/// Rulesets whose functions are declared at random at every level (file, service, and three
/// matches), with names that shadow each other, parameters, lets, and bodies that call each
/// other and use their parameters and the wildcards around them in typed places. Each is
/// loaded on Flint and on the reference: whether it loads, every issue (text, place and
/// offsets), and the verdict on a get under each match, with a denial's message, must agree.
/// This is what checks scope resolution and the types a function's parameters must have.
/// Skips when the reference is absent.
struct RulesFunctionFuzzTests {
    struct Generator {
        var rng: SeededGenerator

        mutating func pick<T>(_ options: [T]) -> T { options[Int(rng.next() % UInt64(options.count))] }
        mutating func chance(_ p: Double) -> Bool { Double(rng.next() % 1000) < p * 1000 }

        static let names = ["f", "g", "h"]
        /// Only a list's last element may fail: a failing earlier one upsets the expression
        /// around it on the reference, a documented difference (security-rules.md).
        static let leaves = [
            "true", "false", "1", "'s'", "request.auth == null", "x", "y", "p", "q", "p.size() > 0", "p + 1 == 2", "p.a == 1",
            "p[0] == 1", "!p", "(p ? 1 : 2) == 1", "math.abs(p) == 1", "p.matches('a')", "p - 1 > 0", "1 in p", "(p)",
            "q.lower() == 'a'", "[p].size() == 1", "[1, q].size() == 2", "p.keys().hasAny([q])", "x + p == 'a'", "{'k': p}.k == 1",
            "p is string && p.size() > 1", "(p ? q : 1) == 1", "p.get('a', 1) == 1", "q[p] == 1", "p[1:2] == 'a'", "-p == 1",
            "p.toSet().size() > 0", "p.hasOnly([q])", "duration.value(p, 's') == duration.value(1, 's')",
            "timestamp.date(p, 1, q) == request.time", "string(p) == q", "p == 1", "'a' != p", "p < q", "1 >= p",
            "timestamp.value(p) == request.time",
        ]
        /// Places a call's result is used in, `%` standing for the call.
        static let typedCalls = ["%.size() > 0", "% + 1 == 2", "!%", "(% ? 1 : 'a') == 1", "%.a == 1", "% in [1]", "[%][0] == 1", "% is int"]
        static let arguments = ["", "1", "p", "'a'", "q", "x", "true", "[1]", "p, q", "1, 'a'", "{'a': 1}"]

        mutating func body(_ depth: Int = 0) -> String {
            let roll = rng.next() % 100
            if roll < 35, depth < 2 { return "\(pick(Self.names))(\(pick(Self.arguments)))" }
            if roll < 42, depth < 2 {
                let call = "\(pick(Self.names))(\(pick(["", "1", "p", "'a'", "q", "x"])))"
                return pick(Self.typedCalls).replacingOccurrences(of: "%", with: call)
            }
            if roll < 50, depth < 2 { return "\(body(depth + 1)) \(pick(["&&", "||", "=="])) \(body(depth + 1))" }
            return pick(Self.leaves)
        }

        mutating func function() -> String {
            let parameters = pick(["", "p", "p", "p, q", "q"])
            let lets = chance(0.5) ? "" : ["q", "r"].filter { !parameters.contains($0) }.prefix(1).map { "let \($0) = \(body(1)); " }.joined()
            return "function \(pick(Self.names))(\(parameters)) { \(lets)return \(body()); }"
        }

        mutating func functions(_ most: Int) -> String {
            (0..<Int(rng.next() % UInt64(most + 1))).map { _ in function() + "\n" }.joined()
        }

        /// A condition; some end in `|| true`, so that gets are allowed too.
        mutating func condition() -> String { body() + (chance(0.3) ? " || true" : "") }

        mutating func ruleset() -> String {
            "rules_version = '2';\n\(functions(2))service cloud.firestore {\n\(functions(2)) match /databases/{db}/documents {\n\(functions(2))"
                + "  match /a/{x} {\n\(functions(2))  allow get: if \(condition());\n"
                + "   match /b/{y} {\n\(functions(1))   allow get: if \(condition());\n   }\n  }\n"
                + "  match /c/{x} { allow get: if \(condition()); }\n }\n}\n"
        }
    }

    static let paths = ["a/1", "a/1/b/2", "c/1"]

    @Test func randomFunctionsLoadWarnAndDecideAsOnTheReference() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential rules function fuzz skipped")
            return
        }
        defer { reference.stop() }
        // FLINT_RULES_FUNCTION_SEED explores other rulesets; the default is the one kept.
        let seed = ProcessInfo.processInfo.environment["FLINT_RULES_FUNCTION_SEED"].flatMap { UInt64($0) } ?? 20_261_129
        var generator = Generator(rng: SeededGenerator(seed: seed))
        let project = "flint-function-fuzz"
        var (loaded, warned, allowed, denied) = (0, 0, 0, 0)
        for _ in 0..<120 {
            let source = generator.ruleset()
            let (status, answer) = try await reference.request(
                "PUT", "/emulator/v1/projects/\(project):securityRules", ["rules": ["files": [["content": source]]]])
            let registry = RulesRegistry()
            let problems = registry.load(source, project: project)
            guard status == 200 else {
                #expect(problems.contains { $0.severity == .error }, "the reference refused it:\n\(source)")
                continue
            }
            loaded += 1
            let expected = RulesDifferential.issues(answer)
            #expect(RulesDifferential.issues(problems) == expected, "\(source)")
            if !expected.isEmpty { warned += 1 }
            let database = Database(id: DatabaseID(project: project), rules: registry)
            for path in Self.paths {
                let (answered, answer) = try await reference.request("GET", "/v1/projects/\(project)/databases/(default)/documents/\(path)", authorization: nil)
                await RulesDifferential.expectSameVerdict("\(path) under\n\(source)", referenceAllows: answered == 404, referenceAnswer: answer) {
                    _ = try await database.get(try DocumentKey(parsing: path), auth: .unauthenticated)
                }
                if answered == 404 { allowed += 1 } else { denied += 1 }
            }
        }
        // Enough rulesets load and warn, and gets are allowed and denied, for the comparison to
        // mean something.
        #expect(loaded >= 15 && warned >= 15 && allowed >= 10 && denied >= 30, "\(loaded) loaded, \(warned) warned, \(allowed) allowed, \(denied) denied")
    }
}
