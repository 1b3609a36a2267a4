import Foundation
import Testing

/// Which method a REST path reaches, on both servers: a `:word` after a document id is part of
/// the id unless a POST asks for a query or listing there, the database's own methods answer on
/// the root alone, and a path outside `projects/*/databases/*/documents` is not found.
struct RESTRoutesDifferentialTests {
    static let documents = "/v1/projects/flint-routes/databases/(default)/documents"

    /// Method, path below the documents root, body: answered alike, status and message.
    static let cases: [(String, String, String?)] = [
        ("PATCH", "/c/a:commit", #"{"fields": {"n": {"integerValue": "1"}}}"#),
        ("GET", "/c/a:commit", nil),
        ("GET", "/c/a:runQuery", nil),
        ("PATCH", "/c/a:runQuery?updateMask.fieldPaths=__x__", "{}"),
        ("DELETE", "/c/a:commit", nil),
        ("GET", "/c/a:commit", nil),
        // A POST below the root that is no query or listing is a create in a collection.
        ("POST", "/c/a:commit", "{}"),
        ("POST", "/c/a:beginTransaction", "{}"),
        ("POST", "/c/a:batchGet", "{}"),
        ("POST", "/c/a:batchWrite", "{}"),
        ("POST", "/c/a:rollback", "{}"),
        ("POST", "/c/a:listen", "{}"),
        ("POST", "/c/a:runQuery", "{}"),
        ("POST", "/c/a:listCollectionIds", #"{"pageSize": -1}"#),
        ("POST", "/c:runQuery", "{}"),
        ("POST", ":commit", #"{"writes": [{"delete": "nope"}]}"#),
    ]

    /// Paths below `/v1/` that name no Firestore resource, whatever the method.
    static let outside = [
        "projects/flint-routes", "projects/flint-routes/databases", "projects/flint-routes/databases/(default)",
        "projects/flint-routes/databases/(default):commit", "projects/flint-routes/databases/(default)/docs/c/a",
        "projects/flint-routes/dbs/(default)/documents/c/a", "projects/flint-routes/databases/(default)/documentsX/c",
    ]

    @Test func pathsReachTheReferencesMethods() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "REST routes") else { return }
        defer { stop() }
        for (method, path, body) in Self.cases {
            let expected = try await RawHTTP.send(method, reference.base + Self.documents + path, body)
            let found = try await RawHTTP.send(method, flint + Self.documents + path, body)
            #expect(found.status == expected.status, "\(method) \(path): \(RawHTTP.message(found.json) ?? "")")
            if expected.status == 200 {
                #expect(Self.name(found.json) == Self.name(expected.json), "\(method) \(path)")
            } else {
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(method) \(path)")
            }
        }
        // `b:commit` below a document is a collection; the create lands there.
        for base in [reference.base, flint] {
            let created = try await RawHTTP.send("POST", base + Self.documents + "/c/a/b:commit", #"{"fields": {}}"#)
            #expect(created.status == 200)
            let name = try #require(Self.name(created.json))
            #expect(name.hasPrefix("projects/flint-routes/databases/(default)/documents/c/a/b:commit/"), "\(base)")
        }
        for path in Self.outside {
            for method in ["GET", "POST", "PATCH", "DELETE"] {
                let body = method == "POST" || method == "PATCH" ? "{}" : nil
                #expect(try await RawHTTP.send(method, reference.base + "/v1/" + path, body).status == 404, "\(method) \(path)")
                #expect(try await RawHTTP.send(method, flint + "/v1/" + path, body).status == 404, "\(method) \(path)")
            }
        }
        // The root is no document to write or delete.
        for method in ["PATCH", "DELETE"] {
            let body = method == "PATCH" ? "{}" : nil
            #expect(try await RawHTTP.send(method, reference.base + Self.documents, body).status == 404)
            #expect(try await RawHTTP.send(method, flint + Self.documents, body).status == 404)
        }
    }

    static func name(_ json: Any?) -> String? { (json as? [String: Any])?["name"] as? String }
}
