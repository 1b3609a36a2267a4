import FlintModel
import FlintRules

/// Compiles `source` and, when it loads, puts every kind of request to it: reads of stored and
/// missing documents, a list with a query, and writes with the document before and after.
public func compileAndDecide(_ source: String) {
    guard let ruleset = Ruleset.compile(source).ruleset else { return }
    for request in requests {
        _ = ruleset.decide(request, reader: documents, budget: RulesReadBudget(limit: 10), coverage: nil)
        _ = ruleset.firstPass(request, reader: documents)
    }
}

private let time = RulesTimestamp(seconds: 1_700_000_000, nanos: 123_456_000)

private let data: [UTF8Key: RulesValue] = [
    "owner": .string("u1"), "n": .int(3), "x": .float(-0.5), "tags": .list([.string("a"), .int(1)]),
    "nested": .map(["b": .bool(true), "at": .timestamp(time)]), "none": .null, "raw": .bytes([0, 255]),
    "where": .latlng(1, 2), "ref": .path(RulesPath(["databases", "(default)", "documents", "users", "u2"])),
]

private func stored(_ path: [String], _ fields: [UTF8Key: RulesValue]) -> RulesValue {
    .map([
        "data": .map(fields), "id": .string(path.last ?? ""),
        "__name__": .path(RulesPath(["databases", "(default)", "documents"] + path)),
    ])
}

private let user: RulesValue = .map([
    "uid": .string("u1"),
    "token": .map(["sub": .string("u1"), "email": .string("a@b.c"), "admin": .bool(true), "email_verified": .bool(false)]),
])

private let requests: [RulesRequest] = {
    var all: [RulesRequest] = []
    for auth in [RulesValue.null, user] {
        for path in [["users", "u1"], ["users", "u1", "posts", "p"], ["rooms", "r", "messages", "m"]] {
            all.append(RulesRequest(method: .get, database: "(default)", target: .document(path), auth: auth, time: time, resource: stored(path, data)))
            all.append(RulesRequest(method: .get, database: "(default)", target: .document(path), auth: auth, time: time))
            all.append(RulesRequest(
                method: .create, database: "(default)", target: .document(path), auth: auth, time: time,
                requestResource: stored(path, data)))
            var changed = data
            changed["n"] = .int(4)
            changed["extra"] = .string("e")
            all.append(RulesRequest(
                method: .update, database: "(default)", target: .document(path), auth: auth, time: time,
                resource: stored(path, data), requestResource: stored(path, changed)))
            all.append(RulesRequest(method: .delete, database: "(default)", target: .document(path), auth: auth, time: time, resource: stored(path, data)))
            let query: RulesValue = .map(["limit": .int(10), "offset": .int(0), "orderBy": .map(["n": .string("ASC")])])
            all.append(RulesRequest(
                method: .list, database: "(default)", target: .collection(Array(path.dropLast()), group: path.count > 2), auth: auth,
                time: time, resource: .map(["data": .map(["owner": .string("u1")])]), query: query))
        }
    }
    return all
}()

private struct Documents: DocumentReader {
    func document(at path: RulesPath, afterWrites: Bool) -> RulesValue? {
        let relative = Array(path.segments.dropFirst(3))
        return relative.first == "users" && relative.count == 2 ? stored(relative, data) : nil
    }
}

private let documents = Documents()
