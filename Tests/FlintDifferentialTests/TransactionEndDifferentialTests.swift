import Foundation
import Testing

/// A commit that fails: whether its transaction can still be used afterwards, over REST on
/// both servers. Refused from the request alone, it stays open; failed on the stored documents,
/// it is over.
struct TransactionEndDifferentialTests {
    /// Each a failing commit's writes, `DOC` standing for an existing document's name.
    static let failures: [(String, String)] = [
        ("a reserved field", #"[{"update": {"name": "DOC", "fields": {"__x__": {"integerValue": "1"}}}}]"#),
        ("an oversized document", #"[{"update": {"name": "DOC", "fields": {"s": {"stringValue": "\#(String(repeating: "x", count: 1_100_000))"}}}}]"#),
        ("a set then a create", #"[{"update": {"name": "DOC", "fields": {}}}, {"update": {"name": "DOC", "fields": {}}, "currentDocument": {"exists": false}}]"#),
        ("a malformed name", #"[{"update": {"name": "DOC/c", "fields": {}}}]"#),
        ("a create of an existing document", #"[{"update": {"name": "DOC", "fields": {}}, "currentDocument": {"exists": false}}]"#),
        ("an update of a missing document", #"[{"update": {"name": "DOC-missing", "fields": {}}, "currentDocument": {"exists": true}}]"#),
        ("a stale update time", #"[{"update": {"name": "DOC", "fields": {}}, "currentDocument": {"updateTime": "2001-01-01T00:00:00Z"}}]"#),
    ]

    @Test func aFailedCommitEndsItsTransactionOnlyWhereTheReferenceEndsIt() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "transaction end") else { return }
        defer { stop() }
        let root = "projects/flint-tx-end/databases/(default)/documents"
        var open = 0
        var ended = 0
        for (i, (what, writes)) in Self.failures.enumerated() {
            for readOnly in [false, true] where !readOnly || i == 0 {
                var answers: [[Int]] = []
                for base in [reference.base, flint] {
                    let url = base + "/v1/" + root
                    let doc = "\(root)/c/d\(i)"
                    _ = try await RawHTTP.send("PATCH", "\(url)/c/d\(i)", #"{"fields": {}}"#)
                    let options = readOnly ? #"{"options": {"readOnly": {}}}"# : "{}"
                    let begun = try await RawHTTP.send("POST", url + ":beginTransaction", options)
                    let tx = try #require((begun.json as? [String: Any])?["transaction"] as? String)
                    let commit = #"{"transaction": "\#(tx)", "writes": \#(writes.replacingOccurrences(of: "DOC", with: doc))}"#
                    let failed = try await RawHTTP.send("POST", url + ":commit", commit)
                    let read = try await RawHTTP.send("POST", url + ":batchGet", #"{"transaction": "\#(tx)", "documents": ["\#(doc)"]}"#)
                    let after = try await RawHTTP.send("POST", url + ":commit", #"{"transaction": "\#(tx)"}"#)
                    answers.append([failed.status, read.status, after.status])
                }
                #expect(answers[1] == answers[0], "\(what)\(readOnly ? " in a read-only transaction" : "")")
                #expect(answers[0][0] != 200, "\(what) did not fail on the reference")
                if answers[0][2] == 200 { open += 1 } else { ended += 1 }
            }
        }
        // Both outcomes are exercised.
        #expect(open >= 4)
        #expect(ended >= 3)
    }
}
