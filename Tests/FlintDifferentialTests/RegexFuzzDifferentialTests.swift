import FlintEngine
import FlintModel
import FlintTesting
import Foundation
import Testing

/// Random regular expressions against random text, on Flint's engine and on the reference: the
/// pattern and the text come from the document's path, so patterns the reference would refuse
/// on loading reach evaluation. For each pair, whether `matches` holds, fails or errs, and how
/// many pieces `split` gives and how long `replace` leaves the text must agree. Texts stay in
/// the Basic Multilingual Plane: after an empty match the reference steps one UTF-16 unit on,
/// splitting a surrogate pair, which Flint does not copy (security-rules.md).
/// `FLINT_REGEX_SEED` picks other pairs. Skips when the reference is absent.
struct RegexFuzzDifferentialTests {
    static let atoms = [
        "a", "b", "1", ".", #"\d"#, #"\w"#, #"\s"#, #"\W"#, "[ab]", "[^a]", "[a-c1]", "é", " ", "-", "_", #"\."#, #"\b"#, #"\B"#,
        "^", "$", "[[:alpha:]]", "[[:^alpha:]]", "[[:punct:]]", #"\pL"#, #"\p{Lu}"#, #"\p{Greek}"#, #"\p{Cyrillic}"#, #"\p{Sc}"#,
        #"\p{Ps}"#, #"\p{Mn}"#, #"\p{Nl}"#, #"\p{^L}"#, #"\P{N}"#, #"\p{Any}"#, #"\p{Zzzz}"#, #"\x61"#, #"\x{3A3}"#, #"\x6"#, #"\A"#,
        #"\z"#, "(?i:A)", "(?i)", "(?-i)", "(?U)", "(?s).", "(?m)$", "(?-)", "[a-]", "[]a]", #"\Q.\E"#, "(?:a|b)", "(?P<n>a)",
        #"\1"#, "(?=a)", "{", "{2}", #"\é"#, "Σ", "ς", "ſ", "\u{212A}", "K", "k", "S", "ı", "I", "я", "ア", "[😀]", "(", "[",
        // A `[:` runs to the next `:]` anywhere, or is no named class at all.
        "[[:a]", ":]", "[x[:]",
        // Parentheses are counted in brackets and quotes too.
        "[(]", "[)]", #"\Q(\E"#,
    ]
    static let quantifiers = ["", "", "", "", "*", "+", "?", "*?", "+?", "??", "{2}", "{1,}", "{0,2}", "{2,1}", "**", "{+"]
    static let letters = [
        "a", "b", "1", " ", "é", "_", "-", "A", ".", "\n", "{", "Σ", "σ", "ς", "ſ", "\u{212A}", "k", "S", "s", "ı", "i", "I", "я",
        "ア", "一", "٣", "Ⅻ", "$", "(", "\u{301}", "\u{A0}",
    ]

    struct Generator {
        var rng: SeededGenerator
        mutating func pick(_ options: [String]) -> String { options[Int(rng.next() % UInt64(options.count))] }

        mutating func pattern(_ depth: Int = 0) -> String {
            (0..<(1 + Int(rng.next() % 3))).map { _ in
                let roll = rng.next() % 100
                let atom =
                    if depth < 2, roll < 12 { "(" + pattern(depth + 1) + ")" }
                    else if depth < 2, roll < 18 { "(" + pattern(depth + 1) + "|" + pattern(depth + 1) + ")" }
                    else { pick(RegexFuzzDifferentialTests.atoms) }
                return atom + pick(RegexFuzzDifferentialTests.quantifiers)
            }.joined()
        }

        /// Text made mostly of the pattern's own letters, so that matches are not all failures.
        mutating func text(for pattern: String) -> String {
            let own = pattern.unicodeScalars.filter { !#"\[](){}*+?|^$.-:~"#.unicodeScalars.contains($0) && $0.value < 0x10000 }
                .map { String($0) }
            let pool = own + RegexFuzzDifferentialTests.letters
            return (0..<Int(rng.next() % 5)).map { _ in pick(pool) }.joined()
        }
    }

    /// What is asked of each pair: `matches` true, `matches` false, and sizes after `split` and `replace`.
    static let sizes = 0..<4
    static var matches: [String] {
        let text = "txt.split('~')[1]", pattern = "re.split('~')[1]"
        var lines = [
            "match /t/{txt}/m/{re} { allow get: if \(text).matches(\(pattern)) == true; }",
            "match /f/{txt}/m/{re} { allow get: if \(text).matches(\(pattern)) == false; }",
        ]
        for n in sizes {
            lines.append("match /s\(n)/{txt}/m/{re} { allow get: if \(text).split(\(pattern)).size() == \(n); }")
            lines.append("match /r\(n)/{txt}/m/{re} { allow get: if \(text).replace(\(pattern), '<$0>').size() == \(n + 1); }")
        }
        return lines
    }

    static var collections: [String] { ["t", "f"] + sizes.flatMap { ["s\($0)", "r\($0)"] } }

    @Test func randomPatternsGetTheReferencesAnswers() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; random regular expression test skipped")
            return
        }
        defer { reference.stop() }
        let seed = ProcessInfo.processInfo.environment["FLINT_REGEX_SEED"].flatMap { UInt64($0) } ?? 20_261_128
        var generator = Generator(rng: SeededGenerator(seed: seed))
        let pairs = (0..<150).map { _ in
            let pattern = generator.pattern()
            return (pattern: pattern, text: generator.text(for: pattern))
        }
        let project = "flint-regex-paths"
        let database = try await RulesDifferential.load(RulesDifferential.ruleset(Self.matches), project: project, on: reference)
        var answered = 0
        for (pattern, text) in pairs {
            let (referenceAllows, flintAllows, statuses) = try await RulesDifferential.gets(
                in: Self.collections, at: "x~\(text)~y/m/x~\(pattern)~y", project: project, database: database, on: reference)
            for status in statuses {
                #expect(status == 404 || status == 403, "\(pattern) on \(text.debugDescription): the reference answered \(status)")
            }
            #expect(flintAllows == referenceAllows, "\(pattern) on \(text.debugDescription)")
            if referenceAllows.contains("t") || referenceAllows.contains("f") { answered += 1 }
        }
        // Most pairs are valid patterns, so the comparison is not between two walls of errors.
        #expect(answered > pairs.count / 4)
    }
}
