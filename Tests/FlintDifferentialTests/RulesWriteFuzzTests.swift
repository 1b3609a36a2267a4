import FlintTesting
import Foundation
import Testing

/// What a write's rules see, drawn at random: a stored document (or none), a write with a mask,
/// transforms and a precondition (or a delete), now and then two such writes folded, and conditions on `request.resource.data`, its
/// diff with `resource.data` and `request.writeFields`. Each condition guards writes to a
/// collection of its own; the same signed-out commit goes to both servers, and the verdict, a
/// denial's message and the document left behind must agree. Skips when the reference is absent.
struct RulesWriteFuzzTests {
    struct Generator {
        var rng: SeededGenerator

        mutating func pick<T>(_ options: [T]) -> T { options[Int(rng.next() % UInt64(options.count))] }
        mutating func below(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        mutating func chance(_ p: Double) -> Bool { Double(rng.next() % 1000) < p * 1000 }
        mutating func sample(_ options: [String], _ count: Int) -> [String] {
            var left = options, out: [String] = []
            for _ in 0..<min(count, left.count) { out.append(left.remove(at: below(left.count))) }
            return out
        }

        mutating func value(_ depth: Int = 1) -> String {
            switch below(depth > 0 ? 8 : 6) {
            case 0: return #"{"integerValue": "\#(pick([0, 1, 2, 5, -3, 9_007_199_254_740_993]))"}"#
            case 1: return #"{"doubleValue": \#(pick(["0.5", "2.0", "-1.5", "1e300"]))}"#
            case 2: return #"{"stringValue": "\#(pick(["x", "y", ""]))"}"#
            case 3: return #"{"nullValue": null}"#
            case 4: return #"{"booleanValue": \#(chance(0.5))}"#
            case 5: return #"{"timestampValue": "2020-01-01T00:00:00Z"}"#
            case 6: return #"{"arrayValue": {"values": [\#((0..<below(3)).map { _ in value(0) }.joined(separator: ", "))]}}"#
            default:
                let names = sample(["x", "y", "z"], below(3))
                return #"{"mapValue": {"fields": {\#(names.map { #""\#($0)": \#(value(depth - 1))"# }.joined(separator: ", "))}}}"#
            }
        }

        mutating func fields() -> String {
            let names = sample(["a", "b", "m", "n", "l"], below(5))
            return "{" + names.map { #""\#($0)": \#(value())"# }.joined(separator: ", ") + "}"
        }

        mutating func path() -> String { pick(["a", "b", "m", "n", "l", "m.x", "m.y", "a.x", "m.x.z", "`m.x`"]) }

        mutating func transform(_ path: String) -> String {
            let kind: String
            switch below(6) {
            case 0: kind = #""setToServerValue": "REQUEST_TIME""#
            case 1: kind = #""increment": \#(pick([#"{"integerValue": "1"}"#, #"{"doubleValue": 0.5}"#, #"{"integerValue": "-2"}"#]))"#
            case 2: kind = #""maximum": \#(pick([#"{"integerValue": "3"}"#, #"{"doubleValue": 2.5}"#]))"#
            case 3: kind = #""minimum": \#(pick([#"{"integerValue": "0"}"#, #"{"doubleValue": -1.0}"#]))"#
            case 4: kind = #""appendMissingElements": {"values": [\#((0..<1 + below(2)).map { _ in value(0) }.joined(separator: ", "))]}"#
            default: kind = #""removeAllFromArray": {"values": [\#((0..<1 + below(2)).map { _ in value(0) }.joined(separator: ", "))]}"#
            }
            return #"{"fieldPath": "\#(path)", \#(kind)}"#
        }

        /// A write to `name`: now and then a delete, else an update with a mask (overlapping
        /// paths included), transforms on other paths and a precondition.
        mutating func write(_ name: String) -> String {
            if below(10) == 0 { return #"{"delete": "\#(name)"}"# }
            var parts = [#""update": {"name": "\#(name)", "fields": \#(fields())}"#]
            var named: [String] = []
            if chance(0.6) {
                named = Array(Set((0..<1 + below(3)).map { _ in path() })).sorted()
                parts.append(#""updateMask": {"fieldPaths": [\#(named.map { #""\#($0)""# }.joined(separator: ", "))]}"#)
            }
            if chance(0.5) {
                var transforms: [String] = []
                for _ in 0..<1 + below(2) {
                    let p = path()
                    let overlaps = named.contains { $0 == p || $0.hasPrefix(p + ".") || p.hasPrefix($0 + ".") }
                    if overlaps { continue }
                    named.append(p)
                    transforms.append(transform(p))
                }
                if !transforms.isEmpty { parts.append(#""updateTransforms": [\#(transforms.joined(separator: ", "))]"#) }
            }
            switch below(4) {
            case 0: parts.append(#""currentDocument": {"exists": true}"#)
            case 1: parts.append(#""currentDocument": {"exists": false}"#)
            default: break
            }
            return "{" + parts.joined(separator: ", ") + "}"
        }

        mutating func literal() -> String {
            pick([
                "1", "2", "3", "5", "0", "-3", "0.5", "2.0", "2.5", "1.5", "-1", "'x'", "'y'", "''", "null", "true", "false", "[]", "[1]",
                "{}", "{'x': 1}", "request.time", "timestamp.date(2020, 1, 1)", "9007199254740993",
            ])
        }

        mutating func keys() -> String { "[" + sample(["a", "b", "m", "n", "l"], below(4)).map { "'\($0)'" }.joined(separator: ", ") + "]" }

        mutating func condition() -> String {
            let data = "request.resource.data"
            let diff = "\(data).diff(resource == null ? {} : resource.data)"
            let p = path()
            let segments = "[" + (p == "`m.x`" ? ["m.x"] : p.split(separator: ".").map(String.init)).map { "'\($0)'" }.joined(separator: ", ") + "]"
            switch below(15) {
            case 0: return "\(data).get(\(segments), 'MISSING') == \(literal())"
            case 1: return "\(data).get(\(segments), 'MISSING') == 'MISSING'"
            case 2: return "\(data).get(\(segments), 'MISSING') is \(pick(["int", "float", "number", "string", "map", "list", "timestamp", "bool"]))"
            case 3: return "\(data).keys().hasOnly(\(keys()))"
            case 4: return "\(data).keys().hasAll(\(keys()))"
            case 5: return "\(diff).affectedKeys().hasOnly(\(keys()))"
            case 6: return "\(diff).changedKeys().hasOnly(\(keys()))"
            case 7: return "\(diff).removedKeys().hasAll(\(keys()))"
            case 8: return "request.writeFields.hasOnly(\(keys()))"
            case 9: return "\(data).get(\(segments), 0) \(pick(["<", ">", ">=", "=="])) \(pick(["0", "1", "2", "3", "2.5", "-1"]))"
            case 10: return "\(data).get(\(segments), []).size() == \(pick(["0", "1", "2", "3"]))"
            case 11: return "\(data).get(\(segments), null) == request.time"
            case 12: return "\(data).size() == \(below(6))"
            case 13: return "request.writeFields.size() > \(below(3)) && request.writeFields[\(below(2))] == '\(pick(["a", "m", "n", "m.x", "m.y", "m\\\\.x"]))'"
            default: return "request.resource == null"
            }
        }
    }

    @Test func randomWritesGetTheReferencesVerdict() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "random write rules") else { return }
        defer { stop() }
        // FLINT_RULES_WRITE_SEED explores other writes; the default is the one kept.
        let seed = ProcessInfo.processInfo.environment["FLINT_RULES_WRITE_SEED"].flatMap { UInt64($0) } ?? 20_261_129
        var g = Generator(rng: SeededGenerator(seed: seed))
        let project = "flint-write-fuzz"
        let documents = "projects/\(project)/databases/(default)/documents"
        var allowed = 0, denied = 0
        for _ in 0..<12 {
            let conditions = (0..<10).map { _ in g.condition() }
            let source = RulesDifferential.ruleset(
                ["match /{c}/{d} { allow read; }"] + conditions.enumerated().map { i, c in "match /w\(i)/{d} { allow write: if \(c); }" })
            for base in [reference.base, flint] {
                #expect(try await RawHTTP.loadRules(source, project: project, on: base) == 200, "seed \(seed): \(source)")
                _ = try await RawHTTP.send("DELETE", base + "/emulator/v1/projects/\(project)/databases/(default)/documents", nil)
            }
            let stored = g.chance(0.7) ? g.fields() : nil
            // Now and then two writes to the document in one commit, which the rules see folded.
            let write = g.chance(0.3) ? g.write("NAME") + ", " + g.write("NAME") : g.write("NAME")
            for (i, condition) in conditions.enumerated() {
                let name = "\(documents)/w\(i)/d"
                let commit = #"{"writes": [\#(write.replacingOccurrences(of: "NAME", with: name))]}"#
                var outcomes: [(status: Int, message: String, after: String)] = []
                for base in [reference.base, flint] {
                    if let stored { #expect(try await RawHTTP.send("PATCH", base + "/v1/" + name, #"{"fields": \#(stored)}"#).status == 200) }
                    let (status, json) = try await RawHTTP.send("POST", base + "/v1/\(documents):commit", commit, authorization: nil)
                    let after = try await RawHTTP.send("GET", base + "/v1/" + name, nil)
                    let fields = (after.json as? [String: Any])?["fields"]
                    // A server time differs between the servers; the rest must not.
                    let text = commit.contains("REQUEST_TIME") ? "" : fields.map { Self.sorted($0) } ?? "missing"
                    outcomes.append((status, RawHTTP.message(json) ?? "", text))
                }
                #expect(outcomes[1].status == outcomes[0].status, "seed \(seed): \(condition) on \(commit) over \(stored ?? "nothing")")
                // A denial's words too (precondition failures keep production's, data-model.md).
                if outcomes[0].status == 403 {
                    #expect(outcomes[1].message == outcomes[0].message, "seed \(seed): \(condition) on \(commit) over \(stored ?? "nothing")")
                }
                #expect(outcomes[1].after == outcomes[0].after, "seed \(seed): \(condition) on \(commit) over \(stored ?? "nothing")")
                if outcomes[0].status == 200 { allowed += 1 } else if outcomes[0].status == 403 { denied += 1 }
            }
        }
        #expect(allowed >= 5 && denied >= 40, "seed \(seed): both verdicts are compared (\(allowed) allowed, \(denied) denied)")
    }

    static func sorted(_ json: Any) -> String {
        (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .fragmentsAllowed])).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }
}
