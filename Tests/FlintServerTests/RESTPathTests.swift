import FlintModel
import Testing

@testable import FlintServer

/// REST paths name the same resource whether or not they are percent-encoded (the two take
/// different routes through the parser).
struct RESTPathTests {
    @Test(arguments: [
        ("/v1/projects/p/databases/(default)/documents/users/alice", "/v1/projects/p/databases/%28default%29/documents/users/alice"),
        ("/v1/projects/p/databases/(default)/documents:commit", "/v1/projects/p/databases/%28default%29/documents:commit"),
        ("/v1/projects/p/databases/db2/documents/rooms/r1:runQuery", "/v1/projects/p/databases/db2/documents/rooms/r%31:runQuery"),
        ("/v1/projects/p/databases/(default)/documents/a/b:c", "/v1/projects/p/databases/(default)/documents/a/b%3Ac"),
    ])
    func encodedAndPlainPathsAgree(plain: String, encoded: String) throws {
        let a = try RESTAPI.parse(plain)
        let b = try RESTAPI.parse(encoded)
        #expect(a.database == b.database)
        #expect(a.path == b.path)
        #expect(a.verb == b.verb)
        #expect(a.documentsName == b.documentsName)
        #expect(a.documentsName == ResourceName(database: a.database, path: a.path).text)
    }

    /// A `GET` of a document with a last `/`, written or encoded as `%2F`, lists every collection
    /// below it; the reference decodes the path before it routes it. Two are a malformed name.
    @Test(arguments: ["/", "%2F", "%2f"])
    func aTrailingSlashListsEveryCollectionHoweverWritten(slash: String) throws {
        let root = try RESTAPI.parse("/v1/projects/p/databases/(default)/documents" + slash)
        #expect(root.listsEveryCollection)
        #expect(root.path.isEmpty)
        let document = try RESTAPI.parse("/v1/projects/p/databases/%28default%29/documents/a/b" + slash)
        #expect(document.listsEveryCollection)
        #expect(document.path.canonical == "a/b")
        let name = "projects/p/databases/(default)/documents"
        #expect(throws: FlintError.invalidArgument("Document name \"\(name)/a/\" has invalid trailing \"/\".")) {
            try RESTAPI.parse("/v1/projects/p/databases/(default)/documents/a" + slash)
        }
        #expect(throws: FlintError.invalidArgument("Document name \"\(name)/a/b//\" lacks a collection id at index 45.")) {
            try RESTAPI.parse("/v1/projects/p/databases/(default)/documents/a/b" + slash + slash)
        }
        // Only a read lists; a delete names the document, so the slash is refused.
        #expect(throws: FlintError.self) { try RESTAPI.parse("/v1/projects/p/databases/(default)/documents/a/b" + slash, method: .delete) }
    }

    @Test func verbsAndIDsAreToldApart() throws {
        let commit = try RESTAPI.parse("/v1/projects/p/databases/(default)/documents:commit")
        #expect(commit.verb == "commit")
        #expect(commit.path.isEmpty)
        // An id may hold a colon; only Firestore's verbs are split off.
        let id = try RESTAPI.parse("/v1/projects/p/databases/(default)/documents/a/b:c")
        #expect(id.verb == nil)
        #expect(id.path.canonical == "a/b:c")
        let query = try RESTAPI.parse("/v1/projects/p/databases/(default)/documents/a/b:runQuery")
        #expect(query.verb == "runQuery")
        #expect(query.path.canonical == "a/b")
    }

    @Test func malformedPathsAreRefusedByBothRoutes() {
        #expect(throws: FlintError.self) { try RESTAPI.parse("/v1/projects/p/databases/(default)/documents/a//b") }
        #expect(throws: FlintError.self) { try RESTAPI.parse("/v1/projects/p/databases/%28default%29/documents/a//b") }
        #expect(throws: FlintError.self) { try RESTAPI.parse("/v1/projects/p/databases/(default)/docs/a") }
        #expect(throws: FlintError.self) { try RESTAPI.parse("/v1/projects/p/databases/(default)/documents/a/%zz") }
    }

    /// As the reference tells it: a POST names a parent (a create's is the path less its
    /// collection id), other methods a document or collection; both routes say the same.
    @Test(arguments: ["/v1/projects/p/databases/(default)/documents", "/v1/projects/p/databases/%28default%29/documents"])
    func pathProblemsNameWhatTheMethodReads(root: String) {
        let name = "projects/p/databases/(default)/documents"
        #expect(throws: FlintError.invalidArgument("Document name \"\(name)/c//d\" lacks a resource id at index 43.")) {
            try RESTAPI.parse(root + "/c//d", method: .get)
        }
        #expect(throws: FlintError.invalidArgument("Document parent name \"\(name)/c//d\" lacks a resource id at index 43.")) {
            try RESTAPI.parse(root + "/c//d/e", method: .post)
        }
        #expect(throws: FlintError.invalidArgument("Document parent name \"\(name)/c/\" has invalid trailing \"/\".")) {
            try RESTAPI.parse(root + "/c//d", method: .post)
        }
        #expect(throws: FlintError.invalidArgument("Document parent name \"\(name)/./d\" contains a collection id \".\" at index 41.")) {
            try RESTAPI.parse(root + "/./d:runQuery", method: .post)
        }
    }
}
