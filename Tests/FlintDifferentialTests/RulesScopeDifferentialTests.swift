import Foundation
import Testing

/// Which database loaded rules govern, on the reference and on a Flint server: a project's rules
/// are its `(default)` database's, a named database has only its own, and one without any is open.
struct RulesScopeDifferentialTests {
    static let shut = "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /{c}/{id} { allow read: if false; } } }"
    static let onlyB = "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /{c}/{id} { allow read: if id == 'b'; } } }"

    static func body(_ source: String, database: String? = nil) -> String {
        let rules = try! JSONSerialization.data(withJSONObject: ["files": [["content": source]]])
        return #"{"rules": \#(String(decoding: rules, as: UTF8.self))\#(database.map { #", "database": "\#($0)""# } ?? "")}"#
    }

    @Test func rulesGovernTheDatabaseTheyWereLoadedFor() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "rules scope") else { return }
        defer { stop() }
        let project = "flint-rules-scope"
        let loads: [(String, String)] = [
            ("/emulator/v1/projects/\(project):securityRules", Self.body(Self.shut)),
            ("/emulator/v1/projects/\(project)/databases/pathnamed:securityRules", Self.body(Self.onlyB)),
            ("/emulator/v1/projects/\(project):securityRules", Self.body(Self.onlyB, database: "projects/\(project)/databases/bodynamed")),
        ]
        for (path, body) in loads {
            #expect(try await RawHTTP.send("PUT", reference.base + path, body).status == 200, "\(path)")
            #expect(try await RawHTTP.send("PUT", flint + path, body).status == 200, "\(path)")
        }
        // Signed out, so the rules decide; a read allowed finds nothing (404), one denied is 403.
        var denied = 0
        for database in ["(default)", "pathnamed", "bodynamed", "unruled"] {
            for id in ["a", "b"] {
                let path = "/v1/projects/\(project)/databases/\(database)/documents/c/\(id)"
                let expected = try await RawHTTP.send("GET", reference.base + path, nil, authorization: nil)
                let found = try await RawHTTP.send("GET", flint + path, nil, authorization: nil)
                #expect(found.status == expected.status, "\(database) \(id)")
                if expected.status == 403 { denied += 1 }
            }
        }
        #expect(denied == 4)
        for database in ["pathnamed", "unruled"] {
            let path = "/emulator/v1/projects/\(project)/databases/\(database):securityRules"
            let expected = try await RawHTTP.send("GET", reference.base + path, nil)
            let found = try await RawHTTP.send("GET", flint + path, nil)
            #expect(Self.firstFile(found.json) == Self.firstFile(expected.json), "\(database)")
        }
    }

    /// The rules routes also take the database as a `database` parameter, of any project; a path
    /// that names one as well is refused, and so is a name that is not a database's.
    @Test func theDatabaseParameterNamesTheRulesDatabase() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "rules database parameter") else { return }
        defer { stop() }
        let project = "flint-rules-parameter"
        let named = "projects/\(project)/databases/named"
        let elsewhere = "projects/\(project)-elsewhere/databases/(default)"
        let calls: [(String, String, String?)] = [
            ("PUT", ":securityRules?database=\(named)", Self.body(Self.onlyB)),
            ("PUT", ":securityRules?database=\(elsewhere)", Self.body(Self.shut)),
            ("PUT", ":securityRules?database=\(named)", Self.body(Self.onlyB, database: named)),
            ("PUT", "/databases/other:securityRules?database=\(named)", Self.body(Self.shut)),
            ("PUT", ":securityRules?database=projects/\(project)", Self.body(Self.shut)),
            ("GET", ":securityRules?database=\(named)", nil),
            ("GET", ":securityRules?database=\(elsewhere)", nil),
            ("GET", ":securityRules?database=", nil),
            ("GET", ":securityRules?database=bogus", nil),
            ("GET", "/databases/(default):securityRules?database=\(named)", nil),
            ("GET", ":ruleCoverage?database=\(named)", nil),
            ("GET", ":ruleCoverage?database=projects/\(project)/databases/unruled", nil),
        ]
        for (method, path, body) in calls {
            let url = "/emulator/v1/projects/\(project)\(path)"
            let expected = try await RawHTTP.send(method, reference.base + url, body)
            let found = try await RawHTTP.send(method, flint + url, body)
            #expect(found.status == expected.status, "\(method) \(path)")
            if method == "GET", expected.status == 200 {
                let files = ((found.json as? [String: Any])?["rules"] as? [String: Any])?["files"] as? [[String: Any]]
                #expect(Self.firstFile(found.json) == Self.firstFile(expected.json), "\(method) \(path)")
                #expect(files?.isEmpty == false, "\(method) \(path)")
                let keys = { (json: Any?) in ((json as? [String: Any])?.keys).map { $0.sorted() } }
                #expect(keys(found.json) == keys(expected.json), "\(method) \(path)")
            }
            // The reference's own words are kept for a name that is not a database's.
            if expected.status == 400, path.hasSuffix("=bogus") || path.hasSuffix("=projects/\(project)") {
                #expect(RawHTTP.message(found.json) == RawHTTP.message(expected.json), "\(method) \(path)")
            }
        }
        // The rules loaded through the parameter govern that database: signed out, `b` may be read.
        for (database, id) in [("named", "a"), ("named", "b")] {
            let path = "/v1/projects/\(project)/databases/\(database)/documents/c/\(id)"
            let expected = try await RawHTTP.send("GET", reference.base + path, nil, authorization: nil)
            #expect(try await RawHTTP.send("GET", flint + path, nil, authorization: nil).status == expected.status, "\(database) \(id)")
        }
    }

    /// The content and name of the first rules file of a `:securityRules` answer.
    static func firstFile(_ json: Any?) -> [String]? {
        let file = (((json as? [String: Any])?["rules"] as? [String: Any])?["files"] as? [[String: Any]])?.first
        return file.map { [$0["content"] as? String ?? "", $0["name"] as? String ?? ""] }
    }
}
