import FlintEngine
import FlintModel
import FlintTesting
import Foundation
import Testing

/// String functions over random text taken from the document's path, on Flint's engine and on
/// the reference: whether `lower()`, `upper()` and `trim()` give each of a few candidates (the
/// Unicode answer, the ASCII-only one, the text unchanged), what `size()` and `toUtf8().size()`
/// are, and how texts order. Texts mix control characters, Unicode spaces, letters whose case
/// mappings change length, and characters beyond the Basic Multilingual Plane.
/// `FLINT_STRING_SEED` picks other texts. Skips when the reference is absent.
struct StringFunctionFuzzDifferentialTests {
    static let pieces = [
        "a", "B", "z", "1", "-", " ", "\t", "\n", "\u{0}", "\u{B}", "\u{1F}", "\u{7F}", "\u{85}", "\u{A0}", "\u{2003}", "\u{3000}",
        "\u{200B}", "é", "É", "ß", "ẞ", "İ", "ı", "Σ", "ς", "ǅ", "ﬀ", "ŉ", "\u{345}", "😀", "𝐀", "\u{FF61}", "٣", "一", "\u{301}", "Ω",
    ]

    static func text(_ rng: inout SeededGenerator) -> String {
        (0..<Int(rng.next() % 5)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
    }

    static func asciiMapped(_ s: String, upper: Bool) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { c in
            guard c.isASCII, let mapped = (upper ? String(c).uppercased() : String(c).lowercased()).unicodeScalars.first else { return c }
            return mapped
        }))
    }

    static func trimmed(_ s: String, _ drop: (Unicode.Scalar) -> Bool) -> String {
        var scalars = Substring(s).unicodeScalars[...]
        while let f = scalars.first, drop(f) { scalars = scalars.dropFirst() }
        while let l = scalars.last, drop(l) { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }

    /// Each question as a rule over `a` and `b`, and the values of `b` to ask it with.
    static func questions(_ a: String, _ other: String) -> [(name: String, rule: String, candidates: [String])] {
        [
            ("lo", "A.lower() == B", [a.lowercased(), asciiMapped(a, upper: false), a]),
            ("up", "A.upper() == B", [a.uppercased(), asciiMapped(a, upper: true), a]),
            ("tr", "A.trim() == B", [trimmed(a) { $0.properties.isWhitespace }, trimmed(a) { $0.value <= 0x20 }, trimmed(a) { $0 == " " }, a]),
            ("sz", "A.size() == int(B)", [String(a.utf16.count), String(a.unicodeScalars.count), String(a.count)]),
            ("u8", "A.toUtf8().size() == int(B)", [String(a.utf8.count)]),
            ("lt", "A < B", [other, a]),
        ]
    }

    @Test func randomTextGetsTheReferencesAnswers() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; random string function test skipped")
            return
        }
        defer { reference.stop() }
        let seed = ProcessInfo.processInfo.environment["FLINT_STRING_SEED"].flatMap { UInt64($0) } ?? 20_261_128
        var rng = SeededGenerator(seed: seed)
        let texts = (0..<60).map { _ in (Self.text(&rng), Self.text(&rng)) }
        let project = "flint-string-paths"
        let lines = Self.questions("", "").flatMap { question in
            let rule = question.rule.replacing("A", with: "a.split('~')[1]").replacing("B", with: "b.split('~')[1]")
            return [
                "match /\(question.name)t/{a}/m/{b} { allow get: if (\(rule)) == true; }",
                "match /\(question.name)f/{a}/m/{b} { allow get: if (\(rule)) == false; }",
            ]
        }
        let database = try await RulesDifferential.load(RulesDifferential.ruleset(lines), project: project, on: reference)
        var answers = 0
        for (a, other) in texts {
            for question in Self.questions(a, other) {
                for candidate in Set(question.candidates).sorted() {
                    let (referenceAllows, flintAllows, _) = try await RulesDifferential.gets(
                        in: [question.name + "t", question.name + "f"], at: "x~\(a)~y/m/x~\(candidate)~y",
                        project: project, database: database, on: reference)
                    #expect(flintAllows == referenceAllows, "\(question.rule) with A = \(a.debugDescription), B = \(candidate.debugDescription)")
                    if referenceAllows == [question.name + "t"] { answers += 1 }
                }
            }
        }
        // Each text matches at least one candidate of most questions, so true answers are many.
        #expect(answers > texts.count * 3)
    }
}
