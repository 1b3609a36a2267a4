import Foundation
import Testing

/// Commits writing one document more than once, under rules, over REST on both servers: the
/// reference folds a document's writes into one mutation and judges it once, from the stored
/// document to the final one. The same commits must be allowed or refused alike, with the same
/// status (a precondition checked after an allowing rule fails with its own code).
struct RulesFoldDifferentialTests {
    /// One collection per rule.
    static let rules: [(collection: String, rule: String)] = [
        ("create", "allow create: if true;"),
        ("update", "allow update: if true;"),
        ("delete", "allow delete: if true;"),
        ("counted", "allow create: if request.resource.data.get('n', 0) == 1; allow update: if request.resource.data.get('n', 0) == 2;"),
        ("shaped", "allow create, update: if request.resource.data.get('a', 0) == 1 && !('b' in request.resource.data);"),
        ("stored", "allow create: if true; allow update: if resource.data.get('a', 0) == 1;"),
        ("named", "allow create, update: if request.writeFields == null || request.writeFields.hasOnly(['b', 'n']);"),
        ("unnamed", "allow create, update: if request.writeFields == null;"),
        ("oneNamed", "allow create, update: if request.writeFields.size() == 1;"),
        ("twoNamed", "allow create, update: if request.writeFields.size() == 2;"),
    ]

    /// Each write given the document's name.
    static let kinds: [String: @Sendable (String) -> String] = [
        "set": { #"{"update": {"name": "\#($0)", "fields": {"a": {"integerValue": "1"}}}}"# },
        "create": { #"{"update": {"name": "\#($0)", "fields": {"a": {"integerValue": "1"}}}, "currentDocument": {"exists": false}}"# },
        "update": { #"{"update": {"name": "\#($0)", "fields": {"a": {"integerValue": "1"}}}, "updateMask": {"fieldPaths": ["a"]}, "currentDocument": {"exists": true}}"# },
        "merge": { #"{"update": {"name": "\#($0)", "fields": {"a": {"integerValue": "1"}}}, "updateMask": {"fieldPaths": ["a"]}}"# },
        "increment": { #"{"transform": {"document": "\#($0)", "fieldTransforms": [{"fieldPath": "n", "increment": {"integerValue": "1"}}]}}"# },
        "delete": { #"{"delete": "\#($0)"}"# },
        "setN1": { #"{"update": {"name": "\#($0)", "fields": {"n": {"integerValue": "1"}}}}"# },
        "setN2": { #"{"update": {"name": "\#($0)", "fields": {"n": {"integerValue": "2"}}}}"# },
        "setB": { #"{"update": {"name": "\#($0)", "fields": {"b": {"integerValue": "1"}}}}"# },
        "mergeB": { #"{"update": {"name": "\#($0)", "fields": {"b": {"integerValue": "1"}}}, "updateMask": {"fieldPaths": ["b"]}}"# },
        "incrementTwice": { #"{"transform": {"document": "\#($0)", "fieldTransforms": [{"fieldPath": "n", "increment": {"integerValue": "1"}}, {"fieldPath": "n", "increment": {"integerValue": "1"}}]}}"# },
        "unsetB": { #"{"update": {"name": "\#($0)", "fields": {}}, "updateMask": {"fieldPaths": ["b"]}}"# },
    ]

    static var sequences: [[String]] {
        let plain = ["set", "create", "update", "merge", "increment", "delete"]
        return plain.flatMap { a in plain.map { [a, $0] } } + [
            ["setN1", "setN2"], ["setN2", "setN1"], ["setN1", "increment"], ["delete", "setN1"], ["setB", "set"], ["set", "setB"],
            ["mergeB", "unsetB"], ["set", "mergeB", "unsetB"], ["mergeB", "merge"], ["mergeB", "increment"], ["set", "mergeB", "increment"],
            ["incrementTwice"], ["mergeB", "mergeB"], ["increment", "set", "increment"], ["increment", "delete", "set"], ["mergeB", "set"],
        ]
    }

    @Test func aDocumentWrittenTwiceIsJudgedOnceAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "folded write rules") else { return }
        defer { stop() }
        let project = "flint-folded-rules"
        let documents = "projects/\(project)/databases/(default)/documents"
        let source = RulesDifferential.ruleset(Self.rules.map { "match /\($0.collection)/{doc} { \($0.rule) }" })
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.loadRules(source, project: project, on: base) == 200)
        }
        var verdicts: [Int: Int] = [:]
        for (collection, _) in Self.rules {
            for (n, sequence) in Self.sequences.enumerated() {
                for existing in [false, true] {
                    let name = "\(documents)/\(collection)/d\(n)\(existing ? "e" : "m")"
                    let body = #"{"writes": [\#(sequence.map { Self.kinds[$0]!(name) }.joined(separator: ", "))]}"#
                    var statuses: [Int] = []
                    for base in [reference.base, flint] {
                        if existing {
                            // Stored by the owner, whom rules do not judge.
                            _ = try await RawHTTP.send("PATCH", base + "/v1/" + name, #"{"fields": {"a": {"integerValue": "1"}}}"#)
                        }
                        statuses.append(try await RawHTTP.send("POST", base + "/v1/" + documents + ":commit", body, authorization: nil).status)
                    }
                    #expect(statuses[1] == statuses[0], "\(collection): \(sequence), existing: \(existing)")
                    verdicts[statuses[0], default: 0] += 1
                }
            }
        }
        // Enough of each outcome for the comparison to mean something.
        #expect(verdicts[200, default: 0] > 150)
        #expect(verdicts[403, default: 0] > 250)
        #expect(verdicts[400, default: 0] > 20)
        #expect(verdicts[409, default: 0] > 5)
    }
}
