import FlintModel
import HTTPTypes
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
    /// below it; the reference decodes the path before it routes it. Two slashes make a
    /// malformed name.
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
        let query = try RESTAPI.parse("/v1/projects/p/databases/(default)/documents/a/b:runQuery", method: .post)
        #expect(query.verb == "runQuery")
        #expect(query.path.canonical == "a/b")
    }

    /// As the reference routes them: the database's own methods live on the root alone, and
    /// only a POST has methods at all below it; elsewhere `:word` ends the last id.
    @Test func methodsBelowTheRootAreIDsUnlessAPostQueriesOrLists() throws {
        let root = "/v1/projects/p/databases/%28default%29/documents"
        for method in [HTTPRequest.Method.get, .patch, .delete] {
            let document = try RESTAPI.parse(root + "/a/b:runQuery", method: method)
            #expect(document.verb == nil)
            #expect(document.path.canonical == "a/b:runQuery")
            #expect(try RESTAPI.parse(root + ":commit", method: method).verb == "commit")
        }
        let created = try RESTAPI.parse(root + "/a/b/c:commit", method: .post)
        #expect(created.verb == nil)
        #expect(created.path.canonical == "a/b/c:commit")
        #expect(try RESTAPI.parse(root + "/a/b:listCollectionIds", method: .post).verb == "listCollectionIds")
        #expect(try RESTAPI.parse(root + ":batchWrite", method: .post).verb == "batchWrite")
        // The method is the word after the first colon of the last id.
        let firstColon = try RESTAPI.parse(root + "/a/b/c:x:runQuery", method: .post)
        #expect(firstColon.verb == nil)
        #expect(firstColon.path.canonical == "a/b/c:x:runQuery")
        // A create after a trailing `/` has an empty collection id, refused by the call; its
        // parent must be the root or a document, and a collection id `.` is told of first.
        let unnamed = try RESTAPI.parse(root + "/a/b/", method: .post)
        #expect(unnamed.createsInUnnamedCollection)
        #expect(unnamed.path.canonical == "a/b")
        let name = "projects/p/databases/(default)/documents"
        #expect(throws: FlintError.invalidArgument("Document parent name \"\(name)/a\" lacks \"/\" at index 42.")) {
            try RESTAPI.parse(root + "/a/", method: .post)
        }
        #expect(throws: FlintError.invalidArgument("Collection id \"..\" is invalid because it is reserved.")) {
            try RESTAPI.parse(root + "/%2E/..", method: .post)
        }
        // A POST to a document: a create, refused later for its parent, a collection.
        let posted = try RESTAPI.parse(root + "/a/b:commit", method: .post)
        #expect(posted.verb == nil)
        #expect(posted.path.isDocumentPath)
    }

    /// Paths that do not run through `projects/*/databases/*/documents` name nothing, before
    /// their ids are read.
    @Test(arguments: [
        "/v1/projects/p", "/v1/projects/p/databases/(default)", "/v1/projects/p/databases/(default):commit",
        "/v1/projects/p/databases/(default)/docs/a/b", "/v1/projects/p/dbs/(default)/documents/a/b",
        "/v1/projects/p/databases/(default)/documentsX/a", "/v1/project/p/databases/(default)/documents/a/b",
        "/v1/projects/p/databases/%28default%29/docs/a/b",
    ])
    func pathsOutsideTheDocumentsAreNotFound(path: String) {
        for method in [HTTPRequest.Method.get, .post, .patch, .delete] {
            #expect(throws: FlintError(.notFound, "No Firestore resource at \(path).")) { try RESTAPI.parse(path, method: method) }
        }
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

    /// A create's collection id (what follows the last `/`) is read before its parent, as the
    /// reference reads them: a reserved one is told of as a collection id, even below a parent
    /// with faults of its own.
    @Test(arguments: ["/v1/projects/p/databases/(default)/documents", "/v1/projects/p/databases/%28default%29/documents"])
    func aCreatesCollectionIDIsReadBeforeItsParent(root: String) {
        for (path, reserved) in [("/c/__x__", "__x__"), ("/c/d/e/__name__", "__name__"), ("/__x__/d/__y__", "__y__"),
                                 ("/__x__/d/e", "__x__"), ("/./d/__x__", "__x__"), ("/c//__x__", "__x__")] {
            #expect(throws: FlintError.invalidArgument("Collection id \"\(reserved)\" is invalid because it is reserved."), "\(path)") {
                try RESTAPI.parse(root + path, method: .post)
            }
        }
    }
}
