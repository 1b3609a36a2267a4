import Foundation
import Testing

/// `POST /emulator/v1/projects/{p}:bulkDelete` on both servers: after each call, the same
/// status and the same documents left in two databases. Where the reference has words of its
/// own for a refusal (a database name, both lists empty), Flint's are the same; for a body
/// of the wrong shape Flint names the faulty field where the reference says only that the
/// payload is not valid, so there the status alone is compared.
struct BulkDeleteDifferentialTests {
    static let documents = ["c/a", "d/a", "d/a/e/f", "c/a/d/b", "c/a/d/b/g/h", "x/y"]

    /// Path below `/emulator/v1/`, body (`P` stands for the project), whether the message is compared.
    static let calls: [(String, String, Bool)] = [
        ("projects/P:bulkDelete", #"{"database": "projects/P/databases/(default)", "collectionIds": ["d"]}"#, true),
        ("projects/P:bulkDelete", #"{"collectionIds": ["x"]}"#, true),
        ("projects/P/databases/other:bulkDelete", #"{"database": "projects/P/databases/(default)", "collectionIds": ["x"]}"#, true),
        ("projects/P:bulkDelete", #"{"database": "projects/P/databases/other", "collectionIds": ["d"], "namespaceIds": ["ns"]}"#, true),
        ("projects/P:bulkDelete", #"{"database": "projects/P/databases/other"}"#, true),
        ("projects/P:bulkDelete", #"{"database": "projects/P/databases/other", "collection_ids": ["c", "nothing"]}"#, true),
        ("projects/P:bulkDelete", #"{"database": "projects/P", "collectionIds": ["d"]}"#, true),
        ("projects/P:bulkDelete", #"{"database": "projects/P/databases/", "collectionIds": ["d"]}"#, true),
        ("projects/P:bulkDelete", #"{"database": "projects/P/databases/other/documents", "collectionIds": ["d"]}"#, true),
        ("projects/P:bulkDelete", "", true),
        ("projects/P:bulkDelete", #"{"database": "projects/P/databases/other", "collectionIds": "d"}"#, false),
        ("projects/P:bulkDelete", #"{"database": "projects/P/databases/other", "bogus": 1}"#, false),
        ("projects/P:bulkDelete", "not json", false),
        // The path's ids may be empty: the body decides.
        ("projects/:bulkDelete", #"{"database": "projects/P/databases/other", "collectionIds": ["x"]}"#, true),
        ("projects//databases/:bulkDelete", #"{"database": "projects/P/databases/(default)", "collectionIds": ["nothing"]}"#, true),
        ("projects/P:bulkDelete", #"{"database": "projects/P/databases/other", "namespace_ids": [""]}"#, true),
    ]

    @Test func bulkDeletesLeaveTheSameDocumentsAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "bulk delete") else { return }
        defer { stop() }
        let project = "flint-bulk-delete-\(UInt32.random(in: 0...UInt32.max))"
        var answers: [[String]] = [[], []]
        for (side, base) in [reference.base, flint].enumerated() {
            for database in ["(default)", "other"] {
                for path in Self.documents {
                    let url = "\(base)/v1/projects/\(project)/databases/\(database)/documents/\(path)"
                    #expect(try await RawHTTP.send("PATCH", url, #"{"fields": {"n": {"integerValue": "1"}}}"#).status == 200)
                }
            }
            for (path, body, comparesMessage) in Self.calls {
                let (status, json) = try await RawHTTP.send(
                    "POST", "\(base)/emulator/v1/\(path.replacingOccurrences(of: "P", with: project))",
                    body.replacingOccurrences(of: "projects/P", with: "projects/\(project)"))
                let error = (json as? [String: Any])?["error"] as? [String: Any]
                var answer = "\(path) \(body): \(status) \(error?["status"] as? String ?? "")"
                if comparesMessage { answer += " \(RawHTTP.message(json)?.replacingOccurrences(of: project, with: "P") ?? "")" }
                if status == 200 { answer += " \((json as? [String: Any]).map { $0.isEmpty ? "{}" : "\($0)" } ?? "not an object")" }
                for database in ["(default)", "other"] {
                    answer += " | \(database): " + (try await Self.names(base, project, database)).joined(separator: " ")
                }
                answers[side].append(answer)
            }
        }
        #expect(answers[0].count == Self.calls.count)
        for (expected, found) in zip(answers[0], answers[1]) { #expect(found == expected) }
        // The calls did delete: the last one empties `other`, and `(default)` keeps what no call named.
        #expect(answers[1].last?.hasSuffix("| (default): c/a c/a/d/b/g/h d/a/e/f | other: ") == true, "\(answers[1].last ?? "")")
    }

    /// Every document of a database, by path below `documents/`.
    static func names(_ base: String, _ project: String, _ database: String) async throws -> [String] {
        let (status, json) = try await RawHTTP.send(
            "POST", "\(base)/v1/projects/\(project)/databases/\(database)/documents:runQuery",
            #"{"structuredQuery": {"from": [{"allDescendants": true}]}}"#)
        #expect(status == 200)
        return ((json as? [[String: Any]]) ?? []).compactMap { (($0["document"] as? [String: Any])?["name"] as? String)?.components(separatedBy: "/documents/").last }
    }
}
