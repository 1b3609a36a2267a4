import Foundation
import Testing

/// Admin routes read their paths as the reference reads them. The route that empties a database
/// or a subtree takes a path of odd depth as a collection, whose parent is checked and named in
/// the error, while an id no collection can have clears nothing. The rules routes are
/// `projects/{p}` or `projects/{p}/databases/{d}` before their method, and no other shape.
struct AdminRoutesDifferentialTests {
    static let documents = "/emulator/v1/projects/flint-clearing/databases/(default)/documents"

    /// Paths below the documents root, answered alike, status and message.
    static let paths = [
        "/c//a", "/c/./a", "/c/../a", "/c/a/b//d", "/c/a/b/./d", "/./a/b", "/c/a/./b/d", "/c/a//b/d", "/c/./.", "/c//",
        "/c/a/.", "/%2E", "/%2E%2E", "/c/a/__x__", "/__x__",
        "//a", "/./a", "/c/a//b", "/c/.", "/c/a/b/.", "/c/", "/c/a/b/", "/c//a/b", "/c/.././a", "/c/__x__", "/__x__/a", "/c/a//",
        // Below the documents, a method's name is part of an id.
        "/c:ruleCoverage", "/c/a:ruleCoverage", ":ruleCoverage",
    ]

    @Test func clearingPathsAreReadAsTheReferenceReadsThem() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "admin clearing") else { return }
        defer { stop() }
        for path in Self.paths {
            try await Self.expectAlike("DELETE", Self.documents + path, nil, reference.base, flint)
        }
        // What each clears: nothing for an impossible id, one collection's documents and
        // everything below them for a collection.
        let name = "projects/flint-clearing/databases/(default)/documents"
        let stored = ["c/a", "c/a/s/x", "c/a/t/y", "c/b", "d/b"]
        let writes = stored.map { #"{"update": {"name": "\#(name)/\#($0)", "fields": {}}}"# }.joined(separator: ",")
        for base in [reference.base, flint] {
            #expect(try await RawHTTP.send("POST", base + "/v1/\(name):commit", #"{"writes": [\#(writes)]}"#).status == 200)
            var found: [Int] = []
            for path in ["/c/a/%2E", "/c/a/s", "/c"] {
                #expect(try await RawHTTP.send("DELETE", base + Self.documents + path, nil).status == 200, "\(base) \(path)")
                for document in stored {
                    found.append(try await RawHTTP.send("GET", base + "/v1/\(name)/\(document)", nil).status)
                }
            }
            #expect(found == [200, 200, 200, 200, 200] + [200, 404, 200, 200, 200] + [404, 404, 404, 404, 200], "\(base)")
        }
    }

    @Test func rulesRoutesOfAnotherShapeAreNotFound() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "admin rules routes") else { return }
        defer { stop() }
        let load = #"{"rules": {"files": [{"content": "service cloud.firestore { match /x { allow read; } }"}]}}"#
        for (method, verb, body) in [("GET", ":securityRules", nil), ("GET", ":ruleCoverage", nil), ("PUT", ":securityRules", load)] {
            for shape in ["sr/databases", "sr/databases/d/x", "sr/dbs/d", "sr/", "sr%2Fx", "sr/databases/a%2Fb", "sr/databases//", "sr/databases/", "/databases/d"] {
                try await Self.expectAlike(method, "/emulator/v1/projects/\(shape)\(verb)", body, reference.base, flint)
            }
        }
    }

    /// One request to both servers, answered with the same status and, but for a 404 (plain
    /// text on the reference, Flint's saying what it did not find), the same message.
    static func expectAlike(_ method: String, _ path: String, _ body: String?, _ reference: String, _ flint: String) async throws {
        let expected = try await RawHTTP.send(method, reference + path, body)
        let found = try await RawHTTP.send(method, flint + path, body)
        #expect(found.status == expected.status, "\(method) \(path): \(RawHTTP.message(found.json) ?? "")")
        if expected.status != 404 {
            #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(method) \(path)")
        }
    }
}
