import FlintEngine
import FlintTesting
import Foundation
import Testing

/// Conditions composed at random from literals, wildcards, request data, library functions
/// and methods (sometimes with the wrong number of arguments), operators, ternaries and `is`,
/// two levels deep, each loaded alone on Flint and on the reference: the issues a load reports
/// (text, place and offsets) must agree. Skips when the reference is absent.
struct RulesWarningFuzzTests {
    struct Generator {
        var rng: SeededGenerator

        mutating func pick<T>(_ options: [T]) -> T { options[Int(rng.next() % UInt64(options.count))] }
        mutating func chance(_ p: Double) -> Bool { Double(rng.next() % 1000) < p * 1000 }

        static let leaves = [
            "1", "2.5", "'a'", "true", "null", "[1]", "{'a': 1}", "b'x'", "d", "request.x", "request.time", "resource.data.v",
            "duration.value(1, 's')", "/databases/$(database)/documents/a/b", "latlng.value(1, 2)", "request.time.date()", "-1",
        ]
        static let functions: [(String, Int)] = [
            ("int", 1), ("float", 1), ("string", 1), ("path", 1), ("math.abs", 1), ("math.ceil", 1), ("math.round", 1), ("math.pow", 2),
            ("math.isNaN", 1), ("hashing.md5", 1), ("timestamp.date", 3), ("timestamp.value", 1), ("duration.value", 2),
            ("duration.abs", 1), ("latlng.value", 2), ("exists", 1), ("get", 1), ("debug", 1),
        ]
        static let methods: [(String, Int)] = [
            ("size", 0), ("lower", 0), ("matches", 1), ("replace", 2), ("split", 1), ("hasAll", 1), ("hasOnly", 1), ("concat", 1),
            ("join", 1), ("toSet", 0), ("union", 1), ("intersection", 1), ("keys", 0), ("get", 2), ("diff", 1), ("affectedKeys", 0),
            ("toBase64", 0), ("year", 0), ("nanos", 0), ("date", 0), ("latitude", 0), ("distance", 1), ("bind", 1), ("frob", 1),
        ]
        static let operators = ["==", "!=", "<", ">=", "&&", "||", "+", "-", "*", "/", "%", "in"]

        /// A count that is sometimes one off, to draw the count warnings.
        mutating func count(_ n: Int) -> Int { chance(0.15) ? max(n + pick([-1, 1]), 0) : n }

        mutating func expression(_ depth: Int) -> String {
            if depth == 0 || chance(0.25) { return pick(Self.leaves) }
            let roll = rng.next() % 100
            switch roll {
            case ..<30:
                let (left, op) = (expression(depth - 1), pick(Self.operators))
                // The reference's parser may take a `/` after a path as the path going on (see
                // security-rules.md), a difference of syntax, not of types: such a path is
                // parenthesized.
                let divides = op == "/" && left.hasSuffix("/a/b")
                return "\(divides ? "(\(left))" : left) \(op) \(expression(depth - 1))"
            case ..<45:
                let (name, arity) = pick(Self.functions)
                return "\(name)(\((0..<count(arity)).map { _ in expression(depth - 1) }.joined(separator: ", ")))"
            case ..<60:
                if chance(0.15) { return "\(expression(depth - 1)).\(pick(["x", "data"]))" }
                let (name, arity) = pick(Self.methods)
                return "(\(expression(depth - 1))).\(name)(\((0..<count(arity)).map { _ in expression(depth - 1) }.joined(separator: ", ")))"
            case ..<70: return "(\(expression(depth - 1)) ? \(expression(depth - 1)) : \(expression(depth - 1)))"
            case ..<78: return "\(pick(["!", "-"]))\(expression(depth - 1))"
            case ..<86: return "(\(expression(depth - 1)))"
            case ..<92: return "\(expression(depth - 1)) is \(pick(["int", "string", "bool", "list", "map", "number", "path"]))"
            case ..<96: return "\(expression(depth - 1))[\(pick(["0", "'a'", "0:1"]))]"
            default: return "[\(expression(depth - 1)), \(expression(depth - 1))]"
            }
        }
    }

    @Test func randomConditionsWarnAsOnTheReference() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential rules warning fuzz skipped")
            return
        }
        defer { reference.stop() }
        // FLINT_RULES_WARNING_SEED explores other conditions; the default is the one kept.
        let seed = ProcessInfo.processInfo.environment["FLINT_RULES_WARNING_SEED"].flatMap { UInt64($0) } ?? 20_261_128
        var generator = Generator(rng: SeededGenerator(seed: seed))
        var warned = 0
        for _ in 0..<150 {
            let condition = generator.expression(generator.pick([1, 2]))
            let source = RulesDifferential.ruleset(["match /c/{d} { allow read: if \(condition); }"])
            let (status, answer) = try await reference.request(
                "PUT", "/emulator/v1/projects/flint-warning-fuzz:securityRules", ["rules": ["files": [["content": source]]]])
            let problems = RulesRegistry().load(source, project: "flint-warning-fuzz")
            guard status == 200 else {
                #expect(problems.contains { $0.severity == .error }, "\(condition): the reference refused it")
                continue
            }
            let expected = RulesDifferential.issues(answer)
            #expect(RulesDifferential.issues(problems) == expected, "\(condition)")
            if !expected.isEmpty { warned += 1 }
        }
        // Most random conditions draw a warning; the cases are not all quiet.
        #expect(warned > 75)
    }
}
