import FlintRules
import FlintTesting
import Foundation
import Testing

/// The rules samples, broken at random a token or two at a time (a token deleted, inserted,
/// replaced or swapped with another) and a character or two at a time, loaded on Flint and on
/// the reference emulator: each mutant must load on both or be refused by both. Skips when the
/// reference is absent.
struct RulesSyntaxFuzzDifferentialTests {
    static let samplesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("rules-samples")

    /// What may be inserted: punctuation, keywords, reserved words, names, literals, path pieces
    /// and comment markers.
    static let vocabulary = [
        "(", ")", "{", "}", "[", "]", ";", ",", ".", ":", "?", "!", "-", "+", "*", "/", "%", "<", ">", "=", "==", "&&", "||",
        "in", "is", "if", "allow", "match", "function", "return", "let", "true", "null", "x", "1", "1.5", "'s'", "b'x'", "$(",
        "/x", "/{y}", "{z=**}", "@", "~", "&", "'", "\"", "#", "read", "write", "get", "request", "resource", "rules_version",
        "service", "each", "default", "deny", " ", "\n", "/*", "*/", "//",
    ]

    /// The source cut into tokens, spaces and comments included, so that joining them gives
    /// it back.
    static func tokens(_ source: String) -> [String] {
        let s = Array(source)
        var out: [String] = []
        var i = 0
        func run(_ from: Int, while keep: (Character) -> Bool) -> Int {
            var j = from
            while j < s.count, keep(s[j]) { j += 1 }
            return j
        }
        while i < s.count {
            let c = s[i]
            var end = i + 1
            if c.isWhitespace {
                end = run(i) { $0.isWhitespace }
            } else if c == "/", i + 1 < s.count, s[i + 1] == "/" {
                end = run(i) { $0 != "\n" }
            } else if c == "'" || c == "\"" {
                end = run(i + 1) { $0 != c && $0 != "\n" }
                end = min(end + 1, s.count)
            } else if c.isLetter || c == "_" {
                end = run(i) { $0.isLetter || $0.isNumber || $0 == "_" }
            } else if c.isNumber {
                end = run(i) { $0.isNumber || $0 == "." }
            } else if i + 1 < s.count, ["==", "!=", "<=", ">=", "&&", "||", "$("].contains(String(s[i...i + 1])) {
                end = i + 2
            }
            out.append(String(s[i..<end]))
            i = end
        }
        return out
    }

    /// Characters a character-level mutant may gain.
    static let characters = Array("(){}[];,.:?!-+*/%<>=&|'\"$@~#\\ \n\tabz019_\u{A0}é")

    /// Mutants of single characters: deleted, inserted or replaced, once or twice each.
    static func characterMutants(of sources: [String], seed: UInt64, count: Int) -> [String] {
        var rng = SeededGenerator(seed: seed)
        func below(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        return (0..<count).map { _ in
            var text = Array(sources[below(sources.count)])
            for _ in 0..<(below(3) == 0 ? 2 : 1) {
                let i = below(text.count)
                switch below(5) {
                case 0, 1: text.remove(at: i)
                case 2, 3: text.insert(characters[below(characters.count)], at: i)
                default: text[i] = characters[below(characters.count)]
                }
            }
            return String(text)
        }
    }

    static func mutants(of sources: [String], seed: UInt64, count: Int) -> [String] {
        var rng = SeededGenerator(seed: seed)
        func below(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        return (0..<count).map { _ in
            var tokens = Self.tokens(sources[below(sources.count)])
            for _ in 0..<(below(3) == 0 ? 2 : 1) {
                let i = below(tokens.count)
                switch below(10) {
                case 0..<3: tokens.remove(at: i)
                case 3..<6: tokens.insert(vocabulary[below(vocabulary.count)], at: i)
                case 6..<8: tokens[i] = vocabulary[below(vocabulary.count)]
                default: tokens.swapAt(i, below(tokens.count))
                }
            }
            return tokens.joined()
        }
    }

    @Test func brokenRulesLoadOrAreRefusedAsOnTheReference() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential syntax fuzz skipped")
            return
        }
        defer { reference.stop() }
        let files = try FileManager.default.subpathsOfDirectory(atPath: Self.samplesFolder.path)
            .filter { $0.hasSuffix(".rules") && $0.contains("firestore") }.sorted()
        let samples = try files.map { try String(contentsOf: Self.samplesFolder.appendingPathComponent($0), encoding: .utf8) }
        try #require(samples.count >= 3)
        // FLINT_SYNTAX_SEED explores other mutants; the default is the one kept.
        let seed = ProcessInfo.processInfo.environment["FLINT_SYNTAX_SEED"].flatMap { UInt64($0) } ?? 20_261_129
        var loaded = 0
        var refused = 0
        let mutants = Self.mutants(of: samples, seed: seed, count: 150) + Self.characterMutants(of: samples, seed: seed &+ 1, count: 100)
        for mutant in mutants {
            let errors = Ruleset.compile(mutant).diagnostics.filter { $0.severity == .error }
            let (referenceLoaded, problems) = try await RulesDifferential.referenceRefusal(mutant, project: "flint-syntax-fuzz", on: reference)
            #expect(
                errors.isEmpty == referenceLoaded,
                "the reference \(referenceLoaded ? "loads" : "refuses (\(problems.prefix(2)))") this; Flint \(errors.isEmpty ? "loads" : "refuses (\(RulesDifferential.refusalLines(errors).prefix(2)))") it:\n\(mutant)")
            if referenceLoaded { loaded += 1 } else { refused += 1 }
        }
        // Both verdicts occur often enough to mean something.
        #expect(loaded >= 40 && refused >= 100, "\(loaded) loaded, \(refused) refused")
    }

    /// Method names after `allow` in any case: which of them grant a get, on both.
    @Test func methodNamesGrantTheSameOnBoth() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential method-name check skipped")
            return
        }
        defer { reference.stop() }
        let methods = ["Read", "READ", "GeT", "wRite", "List", "get", "Gets"]
        let project = "flint-method-names"
        let source = RulesDifferential.ruleset(methods.enumerated().map { i, m in "match /m\(i)/{d} { allow \(m): if true; }" })
        let database = try await RulesDifferential.load(source, project: project, on: reference)
        let collections = methods.indices.map { "m\($0)" }
        let answer = try await RulesDifferential.gets(in: collections, at: "x", project: project, database: database, on: reference)
        #expect(answer.flint == answer.reference)
        #expect(answer.reference == ["m0", "m1", "m2", "m5"])
    }
}
