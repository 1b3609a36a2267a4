import FlintTesting
import Foundation
import Testing

/// Random conditions over values of every type, the request, the stored document and reads
/// of other documents, each guarding gets on a collection of its own, asked over REST of both
/// servers: a denial's whole message (which evaluation failed, where, and in what words) must
/// be the reference's. `get()` of a missing document is left out: Flint names its path where
/// the reference prints its internal form (security-rules.md). `FLINT_RULES_MESSAGE_SEED`
/// picks other conditions. Skips when the reference is absent.
struct RulesErrorMessageFuzzTests {
    static let atoms = [
        "1", "'a'", "true", "null", "[1, 2]", "{'a': 1}", "request.auth", "request.auth.uid", "resource.data", "resource.data.x",
        "resource.data.missing", "request.time", "x", "request.resource", "request.query", "resource", "resource.id", "resource.data.m.k",
        "request.auth.token.email", "b'x'", "duration.value(1, 's')", "get(/databases/$(db)/documents/c/d)",
        "exists(/databases/$(db)/documents/c/none)", "[1][5]", "{'a': 1}.b", "'abc'[9]", "int('z')", "1 / 0", "1.0 / 0",
        "math.sqrt(-1)", "debug(1)", "request.resource.data.x", "resource.data.l[0]", "resource.data.l[7]", "'a'.split(1)",
        "[1].toSet()", "{'a': 1}.diff(1)", "timestamp.date(2020, 13, 1)", "duration.value(1, 'x')", "'a'.replace(1, 2)", "math.abs('a')",
        "math.floor(null)", "'a'.matches(1)", "path('a')", "/a/b[5]", "latlng.value(100, 0)", "float(null)", "string([1])",
        "[1].hasAny(1)", "{'a': 1}.keys()[3]", "hashing.sha256(1)", "request.time.toMillis() + 'a'", "[1, 2][1:5]", "'abc'[1:'a']",
        "{'a': 1}.get(1, 2)", "{'a': 1}.get(['a', 'b'], 0)", "1 in 'a'", "'a' in null", "[1].removeAll(1)", "['a'].join(1)",
        "9223372036854775807 + 1", "1 % 0", "5.0 % 0", "'a' * 2", "{'a': 1} + {'b': 2}", "null + 1", "request.auth.token.get('x', 1).y",
    ]
    static let operators = ["==", "!=", "<", ">", "+", "-", "&&", "||", "in"]
    static let members = ["x", "keys()", "lower()", "data", "get('a', 1)", "size()"]

    struct Generator {
        var rng: SeededGenerator

        mutating func pick(_ options: [String]) -> String { options[Int(rng.next() % UInt64(options.count))] }
        mutating func chance(_ p: Double) -> Bool { Double(rng.next() % 1000) < p * 1000 }

        mutating func term(_ depth: Int) -> String {
            if depth == 0 || chance(0.4) { return pick(RulesErrorMessageFuzzTests.atoms) }
            if chance(0.5) { return "(\(term(depth - 1)) \(pick(RulesErrorMessageFuzzTests.operators)) \(term(depth - 1)))" }
            if chance(0.3) { return "!\(term(depth - 1))" }
            if chance(0.5) { return "(\(term(depth - 1)) ? \(term(depth - 1)) : \(term(depth - 1)))" }
            return "(\(term(depth - 1))).\(pick(RulesErrorMessageFuzzTests.members))"
        }
    }

    @Test func denialsAreWordedAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "rules error message fuzz") else { return }
        defer { stop() }
        // FLINT_RULES_MESSAGE_SEED explores other conditions; the default is the one kept.
        let seed = ProcessInfo.processInfo.environment["FLINT_RULES_MESSAGE_SEED"].flatMap { UInt64($0) } ?? 20_261_130
        var generator = Generator(rng: SeededGenerator(seed: seed))
        let conditions = (0..<100).map { _ in generator.term(3) }
        let project = "flint-rules-message-fuzz"
        let source = "rules_version = '2';\nservice cloud.firestore {\n match /databases/{db}/documents {\n"
            + conditions.enumerated().map { "  match /q\($0.offset)/{x} { allow get: if \($0.element); }\n" }.joined() + " }\n}\n"
        let documents = "projects/\(project)/databases/(default)/documents"
        let fields = #"{"x": {"integerValue": "1"}, "l": {"arrayValue": {"values": [{"integerValue": "1"}]}}, "m": {"mapValue": {"fields": {"k": {"stringValue": "v"}}}}}"#
        let writes = (["c/d"] + conditions.indices.map { "q\($0)/x" }).map { #"{"update": {"name": "\#(documents)/\#($0)", "fields": \#(fields)}}"# }
        var answers: [[String]] = [[], []]
        for (side, base) in [reference.base, flint].enumerated() {
            #expect(try await RawHTTP.loadRules(source, project: project, on: base) == 200)
            #expect(try await RawHTTP.send("POST", "\(base)/v1/\(documents):commit", #"{"writes": [\#(writes.joined(separator: ", "))]}"#).status == 200)
            for i in conditions.indices {
                let (status, json) = try await RawHTTP.send("GET", "\(base)/v1/\(documents)/q\(i)/x", nil, authorization: nil)
                answers[side].append(status == 200 ? "200" : "\(status) \(RawHTTP.message(json) ?? "")")
            }
        }
        for (i, condition) in conditions.enumerated() { #expect(answers[1][i] == answers[0][i], "\(condition)") }
        // Random conditions seldom hold: denials of several kinds come up, or the comparison says little.
        let denials = answers[0].filter { $0.hasPrefix("403") }
        #expect(denials.count >= 80, "\(denials.count) denied")
        #expect(denials.contains { $0.contains("Type error") } && denials.contains { $0.contains("Unsupported operation error") })
    }
}
