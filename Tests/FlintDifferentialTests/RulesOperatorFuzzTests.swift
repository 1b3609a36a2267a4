import FlintEngine
import FlintModel
import FlintRules
import FlintTesting
import Testing

/// Operators over values of every type, and regular expressions over strings, combined at
/// random (a fixed seed, so a failure repeats): each expression `e` is asked as `e` and as
/// `!(e)`, so true, false and an error all show, on Flint's engine and on the reference
/// emulator. Skips when the reference is absent.
struct RulesOperatorFuzzTests {
    static let atoms = [
        "1", "2", "-3", "0", "2.5", "-0.5", "0.0", "'a'", "'b'", "''", "'10'", "true", "false", "null", "[1, 'a']", "[]", "[1, 2]",
        "{'a': 1}", "{}", "b'x'", "request.time", "duration.value(1, 's')", "timestamp.date(2020, 1, 1)", "latlng.value(1, 2)",
        "9223372036854775807", "[1.0]", "{'a': 1.0}", "[[1]]", "'A'", "1.5", "3",
    ]
    static let arithmetic = ["+", "-", "*", "/", "%"]
    static let relations = ["==", "!=", "<", "<=", ">", ">="]
    static let types = ["int", "float", "number", "string", "list", "map", "bool", "timestamp", "duration", "latlng", "bytes", "path"]

    struct Generator {
        var rng: SeededGenerator

        mutating func pick(_ options: [String]) -> String { options[Int(rng.next() % UInt64(options.count))] }
        mutating func chance(_ p: Double) -> Bool { Double(rng.next() % 1000) < p * 1000 }

        mutating func term(_ depth: Int) -> String {
            if depth == 0 || chance(0.4) { return pick(RulesOperatorFuzzTests.atoms) }
            if chance(0.6) { return "(\(term(depth - 1)) \(pick(RulesOperatorFuzzTests.arithmetic)) \(term(depth - 1)))" }
            if chance(0.3) { return "-(\(term(depth - 1)))" }
            if chance(0.5) { return "(\(pick(["true", "false"])) ? \(term(depth - 1)) : \(term(depth - 1)))" }
            return "[\(term(depth - 1)), \(term(depth - 1))][\(pick(["0", "1", "2", "-1"]))]"
        }

        mutating func expression() -> String {
            if chance(0.55) { return "\(term(2)) \(pick(RulesOperatorFuzzTests.relations)) \(term(2))" }
            if chance(0.45) { return "\(term(1)) in \(pick(["[1, 2, 2.5]", "['a', 1]", "{'a': 1}", "[]", "'abc'", term(1)]))" }
            if chance(0.6) { return "\(term(2)) is \(pick(RulesOperatorFuzzTests.types))" }
            return "(\(term(1)) \(pick(RulesOperatorFuzzTests.relations)) \(term(1))) && (\(term(1)) \(pick(RulesOperatorFuzzTests.relations)) \(term(1))) || \(pick(["true", "false", term(1) + " == 1"]))"
        }
    }

    static var expressions: [String] {
        var generator = Generator(rng: SeededGenerator(seed: 20261121))
        return (0..<200).flatMap { _ -> [String] in
            let e = generator.expression()
            return [e, "!(\(e))"]
        }
    }

    /// RE2 patterns against strings through `matches`, `replace` and `split`, as raw rules text.
    static let patterns = [
        #"a+"#, #"a*b"#, #"(a|b)+c"#, #"[a-c]{2,3}"#, #"[^a-c]+"#, #"\\d+"#, #"\\w+@\\w+\\.com"#, #"^a.*z$"#, #"."#, #"a?"#, #"(ab)*"#,
        #"[[:alpha:]]+"#, #"\\s*x\\s*"#, #"(?i)abc"#, #"x{0}"#, #"a{2}"#, #"a{2,}"#, #"\\bfoo\\b"#, #"[\\-a]"#, #"\\."#, #"[.]"#,
        #"(a)(b)?"#, #"\\pL+"#, #"\\p{Greek}"#, #"[^\\s]+"#, #"(?s).+"#, #"\\Aab"#, #"ab\\z"#, #"a|"#, #"|a"#, #"()"#, #"[\\]]"#,
        #"a.c"#, #"\\x41"#, #"[é]"#, #"é+"#, #"^\\+?[0-9]{7,15}$"#, #"(?i)^[a-z]+$"#, #"\\S+"#, #"\\D"#, #"\\W"#, #"(a+)+"#,
        #"x*?y"#, #"x+?"#, #"[a-]"#, #"\\Q.*\\E"#, #"(?:ab)+"#, #"(?P<n>a)"#, #"\\n"#, #"[\\d\\s]+"#, #"^$"#,
    ]
    static let subjects = [
        "", "a", "aa", "ab", "abc", "aaab", "b", "xyz", "a@b.com", "foo bar", "x foo", "é", "éé", "Ωμ", "123", "a1 b2", "ABC", "a.c",
        "a-c", " x ", "xxy", #"\n"#, "+123456789", "abz", "a]b", "A", "ab ab", "(a)", "foo", "aXbXc",
    ]

    static var regexExpressions: [String] {
        var g = Generator(rng: SeededGenerator(seed: 1121))
        return (0..<150).flatMap { _ -> [String] in
            let (p, s) = (g.pick(patterns), g.pick(subjects))
            let e: String
            if g.chance(0.6) {
                e = "'\(s)'.matches('\(p)')"
            } else if g.chance(0.5) {
                let r = g.pick(["-", "[$0]", ""])
                e = "'\(s)'.replace('\(p)', '\(r)') == '\(s)'"
            } else {
                e = "'\(s)'.split('\(p)').size() == \(g.pick(["0", "1", "2", "3", "4"]))"
            }
            return [e, "!(\(e))"]
        }
    }

    @Test func randomRegularExpressionsGetTheReferencesVerdict() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential regular expression fuzz skipped")
            return
        }
        defer { reference.stop() }
        let allowed = try await RulesDifferential.compareGets(Self.regexExpressions, prefix: "r", project: "flint-regex-fuzz", on: reference)
        #expect(allowed > 50)
    }

    @Test func randomOperatorExpressionsGetTheReferencesVerdict() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential operator fuzz skipped")
            return
        }
        defer { reference.stop() }
        let allowed = try await RulesDifferential.compareGets(Self.expressions, prefix: "f", project: "flint-operator-fuzz", on: reference)
        // Both truths and falsehoods occur, so the two verdicts are really compared.
        #expect(allowed > 20)
    }
}
