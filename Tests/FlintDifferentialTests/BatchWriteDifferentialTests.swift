import Foundation
import Testing

/// BatchWrite applies each write on its own: the same batches, mixing writes that succeed with
/// writes whose preconditions fail, must give the reference's per-write codes, transform
/// results and stored documents.
struct BatchWriteDifferentialTests {
    /// Each batch names a document once (a batch writing one twice is refused whole). `e1` and
    /// `e2` exist before the first.
    static let batches: [String] = [
        // Set a; create e1, which exists; update a missing b; delete a missing c that must exist.
        #"""
        {"writes": [{"update": {"name": "$D/c/a", "fields": {"n": {"integerValue": "1"}}}},
                    {"update": {"name": "$D/c/e1", "fields": {}}, "currentDocument": {"exists": false}},
                    {"update": {"name": "$D/c/b", "fields": {"n": {"integerValue": "2"}}}, "currentDocument": {"exists": true}},
                    {"delete": "$D/c/c", "currentDocument": {"exists": true}}]}
        """#,
        // Transforms beside a failing write: the successful ones still apply and report.
        #"""
        {"writes": [{"transform": {"document": "$D/c/a", "fieldTransforms": [{"fieldPath": "n", "increment": {"integerValue": "5"}},
                                                                         {"fieldPath": "t", "appendMissingElements": {"values": [{"stringValue": "x"}]}}]}},
                    {"transform": {"document": "$D/c/b", "fieldTransforms": [{"fieldPath": "n", "maximum": {"doubleValue": 2.5}}]},
                     "currentDocument": {"exists": true}},
                    {"update": {"name": "$D/c/e2", "fields": {"m": {"mapValue": {"fields": {"k": {"nullValue": null}}}}}},
                     "updateMask": {"fieldPaths": ["m.k", "gone"]},
                     "updateTransforms": [{"fieldPath": "n", "minimum": {"integerValue": "-1"}}]}]}
        """#,
        // Deletes: one that must exist and does, one that must not exist and does; a create.
        #"""
        {"writes": [{"delete": "$D/c/a", "currentDocument": {"exists": true}},
                    {"delete": "$D/c/e1", "currentDocument": {"exists": false}},
                    {"update": {"name": "$D/c/e3", "fields": {"back": {"booleanValue": true}}}, "currentDocument": {"exists": false}}]}
        """#,
    ]

    /// Each write's code, and its transform results with server times left out.
    static func outcomes(_ json: Any?) -> [String] {
        guard let answer = json as? [String: Any],
              let statuses = answer["status"] as? [[String: Any]],
              let results = answer["writeResults"] as? [[String: Any]] else { return ["not a batchWrite answer: \(String(describing: json))"] }
        return zip(statuses, results).map { status, result in
            let transforms = (result["transformResults"] as? [Any]).map { "\($0)" } ?? "none"
            return "code \(status["code"] as? Int ?? 0), results \(transforms)"
        }
    }

    static func fields(_ json: Any?) -> String {
        guard let doc = json as? [String: Any] else { return "no answer" }
        guard let fields = doc["fields"] else { return RawHTTP.message(json) ?? "no fields" }
        let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "unencodable"
    }

    @Test func eachWriteSucceedsOrFailsOnItsOwnAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "batchWrite") else { return }
        defer { stop() }
        let documents = "projects/flint-batch-write/databases/(default)/documents"
        let setup = #"{"writes": [{"update": {"name": "$D/c/e1", "fields": {"n": {"integerValue": "7"}}}}, {"update": {"name": "$D/c/e2", "fields": {"n": {"integerValue": "3"}, "gone": {"stringValue": "soon"}}}}]}"#
        var failures = 0
        for batch in [setup] + Self.batches {
            let body = batch.replacingOccurrences(of: "$D", with: documents)
            let expected = try await RawHTTP.send("POST", reference.base + "/v1/\(documents):batchWrite", body)
            let found = try await RawHTTP.send("POST", flint + "/v1/\(documents):batchWrite", body)
            #expect(found.status == 200 && expected.status == 200)
            let want = Self.outcomes(expected.json)
            #expect(Self.outcomes(found.json) == want, "\(batch)")
            failures += want.filter { !$0.hasPrefix("code 0,") }.count
            for id in ["a", "b", "c", "e1", "e2", "e3"] {
                let stored = try await RawHTTP.send("GET", reference.base + "/v1/\(documents)/c/\(id)", nil)
                let held = try await RawHTTP.send("GET", flint + "/v1/\(documents)/c/\(id)", nil)
                #expect(held.status == stored.status, "c/\(id) after \(batch)")
                if stored.status == 200 { #expect(Self.fields(held.json) == Self.fields(stored.json), "c/\(id) after \(batch)") }
            }
        }
        #expect(failures == 5, "the batches mix failing writes with successful ones")
    }
}
