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
        // The method is the word after the first colon of the last id.
        ("POST", "/c/d:x:runQuery", "{}"),
        ("POST", "/c/d:runQuery:x", "{}"),
        // A create's collection id is what follows the last `/`: empty after a trailing one.
        ("POST", "/c/a/", "{}"),
        ("POST", "/", "{}"),
        ("POST", "/c/", "{}"),
        ("POST", "/c/d/e:listCollectionIds/", "{}"),
        // A collection id of `.` or `..` is told of before its parent (encoded, so that the
        // client sends the dots as they are).
        ("POST", "/b/%2E", "{}"),
        ("POST", "/%2E/%2E%2E", "{}"),
        ("POST", "/c/%2E/e", "{}"),
        // A create's collection id is read before its parent.
        ("POST", "/c/__x__", "{}"), ("POST", "/c/d/e/__name__", "{}"), ("POST", "/__x__/d/__y__", "{}"), ("POST", "/__x__/d/e", "{}"),
        ("POST", "/./d/__x__", "{}"), ("POST", "/c//__x__", "{}"), ("POST", "/c/__x__/..", "{}"), ("POST", "/c/d/e/f?documentId=__y__", "{}"),
    ]

    /// Path below the documents root: creates, and the collection each lands in.
    static let creates = [
        ("/c/a/b:commit", "c/a/b:commit"), ("/c/d/e:x:runQuery", "c/d/e:x:runQuery"),
        ("/a:listCollectionIds:runAggregationQuery", "a:listCollectionIds:runAggregationQuery"),
    ]

    /// Paths below `/v1/` that name no Firestore resource, whatever the method.
    static let outside = [
        "projects/flint-routes", "projects/flint-routes/databases", "projects/flint-routes/databases/(default)",
        "projects/flint-routes/databases/(default):commit", "projects/flint-routes/databases/(default)/docs/c/a",
        "projects/flint-routes/dbs/(default)/documents/c/a", "projects/flint-routes/databases/(default)/documentsX/c",
        "projects/flint-routes/databases/(default)/documents:batchGet/",
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
        for (path, collection) in Self.creates {
            for base in [reference.base, flint] {
                let created = try await RawHTTP.send("POST", base + Self.documents + path, #"{"fields": {}}"#)
                #expect(created.status == 200, "\(base) \(path)")
                let name = Self.name(created.json) ?? ""
                #expect(name.hasPrefix("projects/flint-routes/databases/(default)/documents/\(collection)/"), "\(base) \(path)")
            }
        }
        // A bad body is told of before a bad name in the path (each server in its own words).
        for (method, path) in [("POST", "/%2E%2E:runQuery"), ("POST", "/%2E%2E/c"), ("PATCH", "/c/%2E%2E"), ("POST", "/c/d")] {
            let expected = try await RawHTTP.send(method, reference.base + Self.documents + path, #"{"bogus": 1}"#)
            let found = try await RawHTTP.send(method, flint + Self.documents + path, #"{"bogus": 1}"#)
            #expect(expected.status == 400 && RawHTTP.message(expected.json) == "Payload isn't valid for request.", "\(method) \(path)")
            #expect(found.status == 400 && RawHTTP.message(found.json)?.hasPrefix("Invalid JSON payload received.") == true, "\(method) \(path)")
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
