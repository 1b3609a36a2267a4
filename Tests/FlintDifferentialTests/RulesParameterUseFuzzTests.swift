import FlintEngine
import FlintModel
import FlintRules
import FlintTesting
import Foundation
import Testing

/// A function's parameter used one to three ways at random (compared, converted, indexed,
/// called, negated, as a key or a path segment; through a let or another function too), called
/// with an argument of each type, a wildcard's or the request's: the load's warnings on both,
/// which say what the argument may be, in the order the uses narrowed it, and where the uses
/// cannot all hold. `FLINT_RULES_PARAMETER_SEED` picks other functions. Skips when the
/// reference is absent.
struct RulesParameterUseFuzzTests {
    /// Uses of a parameter, `P` standing for it.
    static let uses = [
        "P == 1", "P != 'a'", "P < 1", "1 >= P", "P in [1]", "P is int", "debug(P) != null", "string(P) == 'x'", "int(P) == 1",
        "float(P) == 1.0", "P.size() > 0", "P[0] == 1", "P.x == 1", "!P", "-P == 1", "P + 1 == 2", "P - 1 == 0", "P * 2 == 2",
        "P % 2 == 0", "P.matches('a')", "P.lower() == 'a'", "P.keys().size() > 0", "P.hasAll([1])", "1 in P", "hashing.md5(P) == b''",
        "math.abs(P) == 1", "math.pow(P, 2) == 1.0", "timestamp.value(P) == request.time", "P.toMillis() == 1", "P.seconds() == 1",
        "P[1:2] == 'a'", "P.get('a', 1) == 1", "(P ? 1 : 2) == 1", "P == null", "P.toSet().size() > 0", "P.latitude() > 0",
        "P.bind({}) == /a", "P.concat([1]).size() > 0", "P.toUtf8() == b''", "path(P) == /a", "exists(P)", "P.hours() == 1",
        "{P: 1}.size() > 0", "exists(/databases/$(P)/documents)", "'abc'[P:2] == 'a'", "[1][P] == 1", "'a'.split(P).size() > 0",
        "timestamp.date(P, 1, 1) == request.time", "{'a': 1}.get(P, 0) == 0", "'a' + P == 'ab'", "request.time + P > request.time",
    ]
    static let arguments = [
        "[1]", "{'a': 1}", "true", "1.5", "b'x'", "null", "'a'", "duration.value(1, 's')", "1", "request.time", "/a/b", "[1].toSet()",
        "latlng.value(1, 2)", "x", "x.size()", "[x]", "request.auth.uid",
    ]

    struct Generator {
        var rng: SeededGenerator

        mutating func pick(_ options: [String]) -> String { options[Int(rng.next() % UInt64(options.count))] }

        /// Functions ending in `h(p)`: its uses joined by `&&`, one of them maybe of a let
        /// holding `p`, or a call of `g` that uses its own parameter.
        mutating func functions() -> String {
            var parts = (0..<Int(1 + rng.next() % 3)).map { _ in pick(RulesParameterUseFuzzTests.uses).replacing("P", with: "p") }
            switch rng.next() % 7 {
            case 0:
                let i = Int(rng.next() % UInt64(parts.count))
                parts[i] = parts[i].replacing("p", with: "a")
                return "function h(p) { let a = p; return \(parts.joined(separator: " && ")); }"
            case 1:
                let used = pick(RulesParameterUseFuzzTests.uses).replacing("P", with: "q")
                return "function g(q) { return \(used); } function h(p) { return \((["g(p)"] + parts).joined(separator: " && ")); }"
            default:
                return "function h(p) { return \(parts.joined(separator: " && ")); }"
            }
        }
    }

    @Test func parametersAreTypedAsOnTheReference() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential rules parameter fuzz skipped")
            return
        }
        defer { reference.stop() }
        // FLINT_RULES_PARAMETER_SEED explores other functions; the default is the one kept.
        let seed = ProcessInfo.processInfo.environment["FLINT_RULES_PARAMETER_SEED"].flatMap { UInt64($0) } ?? 20_261_134
        var generator = Generator(rng: SeededGenerator(seed: seed))
        let project = "flint-parameter-fuzz"
        var (warned, conflicted) = (0, 0)
        for _ in 0..<150 {
            let functions = generator.functions()
            let source = "rules_version = '2';\nservice cloud.firestore {\n \(functions)\n match /databases/{db}/documents {\n"
                + "  match /a/{x} { allow get: if h(\(generator.pick(Self.arguments))); }\n }\n}\n"
            let (status, answer) = try await reference.request(
                "PUT", "/emulator/v1/projects/\(project):securityRules", ["rules": ["files": [["content": source]]]])
            let problems = RulesRegistry().load(source, project: project)
            #expect(status == 200, "the reference refused it:\n\(source)")
            let expected = RulesDifferential.issues(answer)
            #expect(RulesDifferential.issues(problems) == expected, "\(source)")
            if expected.contains(where: { $0.contains("Expected one of") }) { warned += 1 }
            if expected.contains(where: { $0.contains("satisfies all clauses") }) { conflicted += 1 }
        }
        // Arguments of the wrong type, and uses that cannot all hold, both come up.
        #expect(warned >= 40 && conflicted >= 30, "\(warned) warned of a type, \(conflicted) of a conflict")
    }
}
