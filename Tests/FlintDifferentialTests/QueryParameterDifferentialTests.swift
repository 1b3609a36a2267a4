import Foundation
import Testing

/// Query parameters named other than in lowerCamelCase, over REST on both servers: the
/// reference matches them to the request's fields through their proto names (and a time
/// through its message's fields), and makes a mask present but empty for anything else below
/// it. Each call must end with the same status, answer the same fields (or number of
/// documents) and leave the document as the reference leaves it.
struct QueryParameterDifferentialTests {
    /// Method, path below the test's `params` collection with its query, body.
    static let calls: [(String, String, String?)] = [
        ("PATCH", "/DOC?update_mask.field_paths=x", #"{"fields": {"x": {"integerValue": "3"}}}"#),
        ("PATCH", "/DOC?updateMask.field_paths=x", #"{"fields": {"x": {"integerValue": "3"}}}"#),
        ("PATCH", "/DOC?UpdateMask.fieldPaths=x", #"{"fields": {"x": {"integerValue": "3"}}}"#),
        ("PATCH", "/DOC?updateMask.fieldPath=x", #"{"fields": {"x": {"integerValue": "3"}}}"#),
        ("PATCH", "/DOC?current_document.exists=false", #"{"fields": {}}"#),
        ("PATCH", "/DOC?updatemask.fieldpaths=x", #"{"fields": {"x": {"integerValue": "3"}}}"#),
        ("DELETE", "/DOC?current_document.update_time=2020-01-01T00:00:00Z", nil),
        ("DELETE", "/DOC?currentDocument.updateTime.seconds=1", nil),
        ("DELETE", "/DOC?currentDocument.bogus=1", nil),
        ("GET", "/DOC?Mask.fieldPaths=y", nil),
        ("GET", "/DOC?mask.fieldPaths%5B%5D=y", nil),
        ("GET", "/DOC?mask.bogus=1&mask=y", nil),
        ("GET", "/DOC?mask.field_paths=x&mask.fieldPaths=y", nil),
        ("GET", "?PageSize=1", nil),
        ("GET", "?page_size=1&order_by=x%20desc", nil),
        ("GET", "?pagesize=1", nil),
        ("GET", "?page_size=1&pageSize=1", nil),
        ("POST", "?document_id=named", #"{"fields": {}}"#),
    ]

    @Test func parametersNameFieldsAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "query parameter names") else { return }
        defer { stop() }
        let collection = "projects/flint-parameters/databases/(default)/documents/params"
        for (n, (method, path, body)) in Self.calls.enumerated() {
            var answers: [[String]] = []
            for base in [reference.base, flint] {
                let document = "\(base)/v1/\(collection)/d\(n)"
                _ = try await RawHTTP.send("PATCH", document, #"{"fields": {"x": {"integerValue": "1"}, "y": {"integerValue": "2"}}}"#)
                let target = "\(base)/v1/\(collection)" + path.replacingOccurrences(of: "/DOC", with: "/d\(n)")
                let (status, json) = try await RawHTTP.send(method, target, body)
                let after = try await RawHTTP.send("GET", document, nil)
                answers.append(["\(status)", Self.summary(json), Self.fields(after.json)])
            }
            #expect(answers[1] == answers[0], "\(method) \(path)")
        }
    }

    /// A listing's number of documents, a document's field names, or a created document's id.
    static func summary(_ json: Any?) -> String {
        let object = json as? [String: Any]
        if let documents = object?["documents"] as? [Any] { return "\(documents.count) documents" }
        if let fields = object?["fields"] as? [String: Any] { return fields.keys.sorted().joined(separator: ",") }
        if let name = object?["name"] as? String { return String(name.split(separator: "/").last ?? "") }
        return ""
    }

    /// A stored document's fields as sorted JSON, or "missing".
    static func fields(_ json: Any?) -> String {
        guard let fields = (json as? [String: Any])?["fields"] else { return "missing" }
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
