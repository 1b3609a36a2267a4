import FlintEngine
import FlintServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import CompressNIO
import NIOCore
import Testing

/// Loading rules through the emulator's admin endpoint and their effect on REST requests made
/// with the tokens the SDKs send, checked against the reference emulator's answers.
struct RulesAPITests {
    static let base = "/v1/projects/rp/databases/(default)/documents"

    /// A fresh Flint's HTTP side over a real loopback connection.
    static func withServer(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        try await server.makeApplication().test(.live) { client in try await body(client) }
    }

    static func jwt(_ claims: String) -> String {
        let b64 = { (s: String) in
            Data(s.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        return "Bearer " + b64(#"{"alg":"none"}"#) + "." + b64(claims) + "."
    }

    static func call(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, auth: String? = nil
    ) async throws -> (HTTPResponse.Status, Any?) {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let auth { headers[.authorization] = auth }
        return try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }) { response in
            (response.status, try? JSONSerialization.jsonObject(with: Data(buffer: response.body), options: [.fragmentsAllowed]))
        }
    }

    static func message(_ body: Any?) -> String? {
        ((body as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
    }

    /// The issues a successful load answers, for rules sent as `firestore.rules`.
    static func issues(_ client: any TestClientProtocol, _ source: String) async throws -> NSArray? {
        let body = try JSONSerialization.data(withJSONObject: ["rules": ["files": [["name": "firestore.rules", "content": source]]]])
        let (status, answer) = try await call(client, .put, "/emulator/v1/projects/warn:securityRules", String(decoding: body, as: UTF8.self))
        #expect(status == .ok)
        return (answer as? [String: Any])?["issues"] as? NSArray
    }

    static func issue(_ description: String, line: Int, column: Int, offsets: ClosedRange<Int>) -> [String: Any] {
        let position: [String: Any] = [
            "fileName": "firestore.rules", "line": line, "column": column, "currentOffset": offsets.lowerBound, "endOffset": offsets.upperBound,
        ]
        return ["sourcePosition": position, "description": description, "severity": "WARNING"]
    }

    static func rulesBody(_ source: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: ["rules": ["files": [["content": source]]]])
        return String(decoding: data, as: UTF8.self)
    }

    @Test func invalidRulesAreRefusedWithEveryProblem() async throws {
        try await Self.withServer { client in
            let bad = """
                rules_version = '2';
                service cloud.firestore {
                  match /databases/{database}/documents {
                    match /a/{b} {
                      allow read: request.auth != null;
                      allow write: if 1 is bogus;
                    }
                  }
                }
                """
            let (status, body) = try await Self.call(client, .put, "/emulator/v1/projects/rp:securityRules", Self.rulesBody(bad))
            #expect(status == .badRequest)
            #expect(Self.message(body) == """
                Error compiling rules:
                L5:19 Missing 'if' before conditional expression.
                L6:33 An unsupported type identifier was used with the 'is' operator. Received bogus. Expected one of bool,bytes,constraint,duration,float,int,latlng,list,vector,set,number,map,string,timestamp,path,map_diff
                """)
            // The reference's issues for these rules, as it answered them.
            let unused = "rules_version = '2';\nservice cloud.firestore {\n match /databases/{d}/documents {\n function f() { return true; }\n match /a/{b} { allow read: if true; }\n }\n}"
            #expect(try await Self.issues(client, unused) == [
                Self.issue("Unused function: f.", line: 4, column: 11, offsets: 91...91),
            ])
            let names = "service cloud.firestore { match /databases/{d}/documents { function f(x, y) { return true; } match /a/{b} { allow read: if f(1) && g() && database == 1; allow readd: if true; } } }"
            #expect(try await Self.issues(client, names) == [
                ["sourcePosition": ["fileName": "firestore.rules"], "description": "Ruleset uses old version (version [1]). Please update to the latest version (version [2]).", "severity": "WARNING"],
                Self.issue("Unused variable: x.", line: 1, column: 71, offsets: 70...70),
                Self.issue("Unused variable: y.", line: 1, column: 74, offsets: 73...73),
                Self.issue("Incorrect number of arguments supplied to function: f.", line: 1, column: 124, offsets: 123...123),
                Self.issue("Invalid function name: g.", line: 1, column: 132, offsets: 131...131),
                Self.issue("Invalid variable name: database.", line: 1, column: 139, offsets: 138...145),
                Self.issue("Invalid method name: readd.", line: 1, column: 160, offsets: 159...163),
            ])
            let (malformed, _) = try await Self.call(client, .put, "/emulator/v1/projects/rp:securityRules", #"{"rules": 3}"#)
            #expect(malformed == .badRequest)
            // Nothing was loaded: the project is still open.
            let (open, _) = try await Self.call(client, .get, Self.base + "/a/b")
            #expect(open == .notFound)
        }
    }

    @Test func rulesTooDeepForTheStackAreRefusedAndTheServerGoesOn() async throws {
        try await Self.withServer { client in
            // 60,000 additions: Flint's checker once walked them recursively and took the
            // whole server down with a stack overflow.
            let sum = "1" + String(repeating: " + 1", count: 60_000)
            let source = "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /a/{b} {\n"
                + "allow read: if \(sum) > 0;\n} } }"
            let (status, body) = try await Self.call(client, .put, "/emulator/v1/projects/rp:securityRules", Self.rulesBody(source))
            #expect(status == .badRequest)
            #expect(Self.message(body) == "Error compiling rules:\nL3:16 Expression is too complex to evaluate safely.")
            let (open, _) = try await Self.call(client, .get, Self.base + "/a/b")
            #expect(open == .notFound)
        }
    }

    /// A denial carries what `debug()` printed as DebugInfo details of the error, with the
    /// envelope's keys and escaping as the reference writes them.
    @Test func denialsCarryDebugOutputAsDetails() async throws {
        try await Self.withServer { client in
            let rules = "service cloud.firestore { match /databases/{d}/documents/a/{b} { allow read: if debug(request.auth.uid) == 'nobody'; } }"
            let (loaded, _) = try await Self.call(client, .put, "/emulator/v1/projects/rp:securityRules", Self.rulesBody(rules))
            #expect(loaded == .ok)
            let raw = try await client.execute(
                uri: Self.base + "/a/b", method: .get, headers: [.authorization: Self.jwt(#"{"sub":"al\"ice"}"#)]
            ) { response in
                #expect(response.status == .forbidden)
                return String(buffer: response.body)
            }
            #expect(raw.hasPrefix(#"{"error":{"code":403,"details":[{"@type":"type.googleapis.com/google.rpc.DebugInfo","detail":"debug: "#))
            let error = try #require((try JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any])?["error"] as? [String: Any])
            #expect(error["status"] as? String == "PERMISSION_DENIED")
            let details = try #require(error["details"] as? [[String: String]])
            #expect(details.count == 1)
            #expect(details.first?["detail"] == #"debug: string_value: "al\"ice""#)
        }
    }

    @Test func loadedRulesDecideEveryRequestAsTheReferenceDoes() async throws {
        try await Self.withServer { client in
            let rules = """
                rules_version = '2';
                service cloud.firestore {
                  match /databases/{database}/documents {
                    match /a/{b} {
                      allow get: if request.auth.uid == 'x';
                      allow create: if false;
                    }
                  }
                }
                """
            let (loaded, body) = try await Self.call(client, .put, "/emulator/v1/projects/rp:securityRules", Self.rulesBody(rules))
            #expect(loaded == .ok, "\(String(describing: body))")
            let (_, current) = try await Self.call(client, .get, "/emulator/v1/projects/rp:securityRules")
            #expect((((current as? [String: Any])?["rules"] as? [String: Any])?["files"] as? [[String: String]])?.first?["content"] == rules)

            var (status, answer) = try await Self.call(client, .get, Self.base + "/a/b")
            #expect(status == .forbidden)
            #expect(Self.message(answer) == "\nNull value error. for 'get' @ L5, Null value error. for 'get' @ L5")
            (status, answer) = try await Self.call(client, .get, Self.base + "/zz/b")
            #expect(status == .forbidden && Self.message(answer) == "No matching allow statements")
            (status, answer) = try await Self.call(client, .patch, Self.base + "/a/b", #"{"fields":{}}"#)
            #expect(status == .forbidden && Self.message(answer) == "\nfalse for 'create' @ L6")
            (status, _) = try await Self.call(client, .patch, Self.base + "/a/b", #"{"fields":{}}"#, auth: "Bearer owner")
            #expect(status == .ok)
            (status, _) = try await Self.call(client, .get, Self.base + "/a/b", auth: Self.jwt(#"{"sub":"x"}"#))
            #expect(status == .ok)
            (status, answer) = try await Self.call(client, .get, Self.base + "/a/b", auth: Self.jwt(#"{"sub":"y"}"#))
            #expect(status == .forbidden && Self.message(answer) == "\nfalse for 'get' @ L5")
            // Other projects keep their own (here: none, so open).
            (status, _) = try await Self.call(client, .get, "/v1/projects/other/databases/(default)/documents/a/b")
            #expect(status == .notFound)
        }
    }
}

extension RulesAPITests {
    /// Only the first file decides; the others must compile, and their warnings are not told.
    @Test func everyFileMustCompileButTheFirstDecides() async throws {
        try await Self.withServer { client in
            func load(_ sources: [String]) async throws -> (HTTPResponse.Status, Any?) {
                let files = sources.map { ["content": $0] }
                let body = String(decoding: try JSONSerialization.data(withJSONObject: ["rules": ["files": files]]), as: UTF8.self)
                return try await Self.call(client, .put, "/emulator/v1/projects/files:securityRules", body)
            }
            let open = "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /a/{x} { allow read; } } }"
            let warned = "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /b/{x} { allow read: if x == 1; } } }"
            let broken = "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /b/{x} { allow read: if ; } } }"
            var (status, answer) = try await load([open, warned])
            #expect(status == .ok && (answer as? [String: Any])?.isEmpty == true)
            (status, _) = try await Self.call(client, .get, "/v1/projects/files/databases/(default)/documents/a/x")
            #expect(status == .notFound)
            (status, _) = try await Self.call(client, .get, "/v1/projects/files/databases/(default)/documents/b/x")
            #expect(status == .forbidden)
            (status, answer) = try await load([broken, open])
            #expect(status == .badRequest && Self.message(answer) == "Error compiling rules:\nL2:90 Missing conditional expression after 'if'.")
            (status, answer) = try await load([warned, broken])
            #expect(status == .badRequest && Self.message(answer) == "Error compiling rules:\nL2:90 Missing conditional expression after 'if'.")
            // The refused loads changed nothing.
            (status, _) = try await Self.call(client, .get, "/v1/projects/files/databases/(default)/documents/a/x")
            #expect(status == .notFound)
        }
    }

    @Test func coverageReportsAndResets() async throws {
        try await Self.withServer { client in
            // Without rules, the open rules the reference shows, with nothing counted.
            var (status, open) = try await Self.call(client, .get, "/emulator/v1/projects/cv:ruleCoverage")
            #expect(status == .ok)
            let openFile = (((open as? [String: Any])?["rules"] as? [String: Any])?["files"] as? [[String: String]])?.first
            #expect(openFile?["name"] == "OPEN_RULES" && openFile?["content"]?.contains("allow read, write: if true;") == true)
            #expect((open as? [String: Any])?["report"] == nil)
            let (_, shown) = try await Self.call(client, .get, "/emulator/v1/projects/cv:securityRules")
            #expect((((shown as? [String: Any])?["rules"] as? [String: Any])?["files"] as? [[String: String]])?.first == openFile)
            let openHTML = try await client.execute(uri: "/emulator/v1/projects/cv:ruleCoverage.html", method: .get) { response in
                (response.status, String(buffer: response.body))
            }
            #expect(openHTML.0 == .ok && openHTML.1.contains("allow read, write: if true;") && !openHTML.1.contains(#"<span class="false""#))
            #expect(try await Self.call(client, .delete, "/emulator/v1/projects/cv:ruleCoverage").0 == .notFound)
            // Slashes are not escaped, as the reference writes them, so the rules read as written.
            let raw = try await client.execute(uri: "/emulator/v1/projects/cv:securityRules", method: .get) { String(buffer: $0.body) }
            #expect(raw.contains("match /databases/{database}/documents"))
            let rules = "service cloud.firestore { match /databases/{d}/documents/a/{b} { allow read: if request.auth != null; } }"
            (status, _) = try await Self.call(client, .put, "/emulator/v1/projects/cv:securityRules", Self.rulesBody(rules))
            #expect(status == .ok)
            _ = try await Self.call(client, .get, "/v1/projects/cv/databases/(default)/documents/a/x")
            var (_, report) = try await Self.call(client, .get, "/emulator/v1/projects/cv:ruleCoverage")
            var root = ((report as? [String: Any])?["report"] as? [[String: Any]])?.first
            #expect((root?["values"] as? [[String: Any]])?.first?["value"] as? [String: Bool] == ["boolValue": false])
            let html = try await client.execute(uri: "/emulator/v1/projects/cv:ruleCoverage.html", method: .get) { response in
                (response.headers[.contentType], String(buffer: response.body))
            }
            #expect(html.0 == "text/html; charset=utf-8")
            #expect(html.1.contains(#"<span class="false""#))
            (status, _) = try await Self.call(client, .delete, "/emulator/v1/projects/cv:ruleCoverage")
            #expect(status == .ok)
            (_, report) = try await Self.call(client, .get, "/emulator/v1/projects/cv:ruleCoverage")
            root = ((report as? [String: Any])?["report"] as? [[String: Any]])?.first
            #expect(root?["values"] == nil)
        }
    }
}

extension RulesAPITests {
    /// The routes test suites call between tests take any user, or none, but not a malformed
    /// token; clearing, as a delete, takes an id of any length.
    @Test func adminRoutesReadTheAuthorizationHeader() async throws {
        try await Self.withServer { client in
            let clear = "/emulator/v1/projects/au/databases/(default)/documents"
            let user = "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1MSJ9."
            for (auth, expected) in [(nil, HTTPResponse.Status.ok), (user, .ok), ("Bearer owner", .ok), ("Bearer xyz", .badRequest), ("Basic abc", .unauthorized)] {
                for (method, path) in [(HTTPRequest.Method.delete, clear), (.get, "/emulator/v1/projects/au:securityRules"), (.get, "/emulator/v1/projects/au:ruleCoverage")] {
                    let (status, answer) = try await Self.call(client, method, path, auth: auth)
                    #expect(status == expected, "\(method) \(path) with \(auth ?? "none")")
                    if expected == .badRequest { #expect(RESTTests.error(answer)?.1 == "invalid jwt") }
                }
            }
            let (status, _) = try await Self.call(client, .delete, clear + "/c/" + String(repeating: "x", count: 1501))
            #expect(status == .ok)
        }
    }

    @Test func exportAndImportThroughTheAdminEndpoints() async throws {
        let engine = Engine()
        let server = FlintServer(engine: engine, configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flint-admin-export-\(UUID().uuidString)").path
        try await server.makeApplication().test(.live) { client in
            var (status, _) = try await Self.call(client, .patch, "/v1/projects/ex/databases/(default)/documents/c/a", #"{"fields":{"n":{"integerValue":"1"}}}"#)
            #expect(status == .ok)
            var answer: Any?
            (status, answer) = try await Self.call(client, .post, "/emulator/v1/projects/ex:export", #"{"database":"projects/ex/databases/(default)","export_directory":"\#(dir)"}"#)
            #expect(status == .ok)
            #expect((answer as? [String: Any])?["documents"] as? Int == 1)
            (status, _) = try await Self.call(client, .delete, "/emulator/v1/projects/ex/databases/(default)/documents")
            (status, _) = try await Self.call(client, .get, "/v1/projects/ex/databases/(default)/documents/c/a")
            #expect(status == .notFound)
            (status, answer) = try await Self.call(client, .post, "/emulator/v1:import", #"{"directory":"\#(dir)"}"#)
            #expect(status == .ok)
            #expect((answer as? [String: Any])?["documents"] as? Int == 1)
            (status, _) = try await Self.call(client, .get, "/v1/projects/ex/databases/(default)/documents/c/a")
            #expect(status == .ok)
            (status, answer) = try await Self.call(client, .post, "/emulator/v1:export", #"{}"#)
            #expect(status == .badRequest)
            (status, _) = try await Self.call(client, .post, "/emulator/v1:import", #"{"directory":"/nonexistent/flint"}"#)
            #expect(status == .badRequest)
        }
    }
}

extension RulesAPITests {
    /// The calls firebase-tools and Google's emulator make: `export_name` asks for a managed
    /// export of one database; an import may name the overview file and a target database.
    @Test func managedExportsThroughTheAdminEndpoints() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flint-admin-managed-\(UUID().uuidString)").path
        try await Self.withServer { client in
            var (status, answer) = try await Self.call(client, .patch, "/v1/projects/mx/databases/named/documents/c/a", #"{"fields":{"n":{"integerValue":"1"}}}"#)
            #expect(status == .ok)
            (status, answer) = try await Self.call(
                client, .post, "/emulator/v1/projects/mx:export",
                #"{"database":"projects/mx/databases/named","export_directory":"\#(dir)","export_name":"snap"}"#)
            #expect(status == .ok)
            #expect((answer as? [String: Any])?["documents"] as? Int == 1)
            let overview = dir + "/snap/snap.overall_export_metadata"
            #expect(FileManager.default.fileExists(atPath: overview))
            (status, _) = try await Self.call(
                client, .post, "/emulator/v1/projects/copy:import", #"{"database":"projects/copy/databases/(default)","export_directory":"\#(overview)"}"#)
            #expect(status == .ok)
            (status, answer) = try await Self.call(client, .get, "/v1/projects/copy/databases/(default)/documents/c/a")
            #expect(status == .ok)
            #expect(((answer as? [String: Any])?["fields"] as? [String: Any])?["n"] as? [String: String] == ["integerValue": "1"])
            // Without a database in the body, the export's own database id is kept.
            (status, _) = try await Self.call(client, .post, "/emulator/v1/projects/copy:import", #"{"export_directory":"\#(dir)"}"#)
            (status, _) = try await Self.call(client, .get, "/v1/projects/copy/databases/named/documents/c/a")
            #expect(status == .ok)
            (status, answer) = try await Self.call(
                client, .post, "/emulator/v1/projects/mx:export", #"{"database":"projects/other/databases/named","export_directory":"\#(dir)","export_name":"x"}"#)
            #expect(status == .badRequest)
            #expect(((answer as? [String: Any])?["error"] as? [String: Any])?["message"] as? String == "Database projects/other/databases/named is not in project mx.")
            (status, _) = try await Self.call(
                client, .post, "/emulator/v1/projects/mx:export", #"{"export_directory":"\#(dir)","export_name":"../up"}"#)
            #expect(status == .badRequest)
            // Fields as proto3's JSON reads them: lowerCamelCase names, nulls left out. An unknown
            // field, or one given twice, is refused before anything is written.
            let camel = dir + "-camel"
            (status, answer) = try await Self.call(
                client, .post, "/emulator/v1/projects/mx:export",
                #"{"database":"projects/mx/databases/named","exportDirectory":"\#(camel)","exportName":"snap","bogus":null}"#)
            #expect(status == .ok && (answer as? [String: Any])?["documents"] as? Int == 1)
            #expect(FileManager.default.fileExists(atPath: camel + "/snap/snap.overall_export_metadata"))
            let refused: [(String, String, String)] = [
                (":export", #"{"export_directory":"\#(dir)-no","export_name":"x","collection_ids":["c"]}"#, #"Unknown field "collection_ids" in the request."#),
                (":export", #"{"export_directory":"\#(dir)-no","exportDirectory":"\#(dir)-no"}"#, #""export_directory" is given twice."#),
                (":export", #"{"export_directory":"\#(dir)-no","export_name":7}"#, #""export_name" must be a string."#),
                (":import", #"{"export_directory":"\#(dir)","export_name":"snap"}"#, #"Unknown field "export_name" in the request."#),
                (":import", #"{"export_directory":null}"#, #"Expected {"export_directory": "/path"}"#),
                (":import", "[]", "The request must be a JSON object."),
            ]
            for (verb, body, message) in refused {
                (status, answer) = try await Self.call(client, .post, "/emulator/v1/projects/mx" + verb, body)
                #expect(status == .badRequest && (Self.message(answer) ?? "").hasPrefix(message), "\(body): \(String(describing: answer))")
            }
            #expect(!FileManager.default.fileExists(atPath: dir + "-no"))
        }
    }

    @Test func responsesAreGzippedWhenAsked() async throws {
        try await Self.withServer { client in
            _ = try await Self.call(client, .patch, "/v1/projects/gz/databases/(default)/documents/c/a", #"{"fields":{"s":{"stringValue":"\#(String(repeating: "z", count: 2000))"}}}"#)
            let (encoding, body) = try await client.execute(
                uri: "/v1/projects/gz/databases/(default)/documents/c/a", method: .get, headers: [.acceptEncoding: "gzip, deflate"]
            ) { response in (response.headers[.contentEncoding], response.body) }
            #expect(encoding == "gzip")
            var compressed = body
            #expect(compressed.readableBytes < 500)
            let plain = try compressed.decompress(with: .gzip())
            let json = try JSONSerialization.jsonObject(with: Data(buffer: plain)) as? [String: Any]
            #expect(json?["name"] as? String == "projects/gz/databases/(default)/documents/c/a")
            let (plainEncoding, _) = try await client.execute(uri: "/v1/projects/gz/databases/(default)/documents/c/a", method: .get) { response in
                (response.headers[.contentEncoding], response.body)
            }
            #expect(plainEncoding == nil)
        }
    }
}

extension RulesAPITests {
    /// `$alt=json;enum-encoding=int`, as some clients send: enums as numbers in requests and answers.
    @Test func enumsAsNumbers() async throws {
        try await Self.withServer { client in
            _ = try await Self.call(client, .patch, "/v1/projects/en/databases/(default)/documents/c/a", #"{"fields":{"n":{"integerValue":"3"},"z":{"nullValue":null}}}"#)
            _ = try await Self.call(client, .patch, "/v1/projects/en/databases/(default)/documents/c/b", #"{"fields":{"n":{"integerValue":"1"}}}"#)
            // op 4 is GREATER_THAN_OR_EQUAL, direction 2 is DESCENDING.
            let query = #"{"structuredQuery":{"from":[{"collectionId":"c"}],"where":{"fieldFilter":{"field":{"fieldPath":"n"},"op":4,"value":{"integerValue":"1"}}},"orderBy":[{"field":{"fieldPath":"n"},"direction":2}]}}"#
            let (status, answer) = try await Self.call(client, .post, "/v1/projects/en/databases/(default)/documents:runQuery?$alt=json;enum-encoding=int", query)
            #expect(status == .ok)
            let names = (answer as? [[String: Any]])?.compactMap { ($0["document"] as? [String: Any])?["name"] as? String }
            #expect(names == ["projects/en/databases/(default)/documents/c/a", "projects/en/databases/(default)/documents/c/b"])
            let (_, doc) = try await Self.call(client, .get, "/v1/projects/en/databases/(default)/documents/c/a?$alt=json;enum-encoding=int")
            #expect(((doc as? [String: Any])?["fields"] as? [String: Any])?["z"] != nil)
        }
    }
}

extension RulesAPITests {
    @Test func rulesAreEvaluatedDirectlyWithTheirTrace() async throws {
        try await Self.withServer { client in
            let rules = """
                rules_version = '2';
                service cloud.firestore {
                  match /databases/{database}/documents {
                    function isPublic() { return resource.data.public == true; }
                    match /posts/{post} {
                      allow update: if request.resource.data.title is string
                        && request.auth.uid == resource.data.author;
                      allow list: if isPublic();
                    }
                  }
                }
                """
            _ = try await Self.call(client, .put, "/emulator/v1/projects/ev:securityRules", Self.rulesBody(rules))
            _ = try await Self.call(client, .patch, "/v1/projects/ev/databases/(default)/documents/posts/p", #"{"fields":{"author":{"stringValue":"ann"}}}"#, auth: "Bearer owner")
            var (status, answer) = try await Self.call(client, .post, "/emulator/v1/projects/ev:evaluateRules",
                #"{"method":"update","path":"posts/p","auth":{"uid":"bob"},"data":{"title":{"stringValue":"T"}}}"#)
            #expect(status == .ok)
            var report = try #require(answer as? [String: Any])
            #expect(report["allowed"] as? Bool == false)
            #expect(report["message"] as? String == "\nevaluation error at L6:24 for 'update' @ L6, false for 'update' @ L6")
            let line = try #require((report["lines"] as? [[String: Any]])?.first)
            #expect(line["line"] as? Int == 6)
            // The condition is quoted whole, its second line too.
            #expect(line["text"] as? String == "allow update: if request.resource.data.title is string && request.auth.uid == resource.data.author;")
            let expressions = (line["expressions"] as? [[String: String]]) ?? []
            #expect(expressions.contains(["expression": "request.resource.data.title is string", "values": "true"]), "\(expressions)")
            #expect(expressions.contains(["expression": "request.auth.uid", "values": "\"bob\""]))
            #expect(expressions.contains(["expression": "resource.data.author", "values": "\"ann\""]))
            (status, answer) = try await Self.call(client, .post, "/emulator/v1/projects/ev:evaluateRules",
                #"{"method":"update","path":"posts/p","auth":{"uid":"ann"},"data":{"title":{"stringValue":"T"}}}"#)
            report = try #require(answer as? [String: Any])
            #expect(report["allowed"] as? Bool == true)
            // An allowed request is explained by the condition that held.
            let granting = (report["lines"] as? [[String: Any]])?.first
            #expect(granting?["line"] as? Int == 6 && (granting?["expressions"] as? [[String: String]])?.first?["values"] == "true", "\(report)")
            (_, answer) = try await Self.call(client, .post, "/emulator/v1/projects/ev:evaluateRules",
                #"{"method":"list","path":"posts","data":{"public":{"booleanValue":true}}}"#)
            #expect((answer as? [String: Any])?["allowed"] as? Bool == true)
            // The functions a denial called follow the statements it names.
            (_, answer) = try await Self.call(client, .post, "/emulator/v1/projects/ev:evaluateRules",
                #"{"method":"list","path":"posts","data":{"public":{"booleanValue":false}}}"#)
            let lines = ((answer as? [String: Any])?["lines"] as? [[String: Any]]) ?? []
            #expect(lines.map { $0["line"] as? Int } == [8, 4] && lines.map { $0["function"] as? String } == [nil, "isPublic"], "\(lines)")
            let function = try #require(lines.last)
            #expect(function["text"] as? String == "function isPublic() { return resource.data.public == true; }")
            let values = function["expressions"] as? [[String: String]] ?? []
            #expect(values.contains(["expression": "resource.data.public == true", "values": "false"]), "\(values)")
            (status, _) = try await Self.call(client, .post, "/emulator/v1/projects/ev:evaluateRules", #"{"method":"peek"}"#)
            #expect(status == .badRequest)
            (status, _) = try await Self.call(client, .post, "/emulator/v1/projects/none:evaluateRules", #"{"method":"get","path":"a/b"}"#)
            #expect(status == .badRequest)
        }
    }
}

extension RulesAPITests {
    /// A question is read strictly: a misspelt key, a path of the wrong kind or an `auth`
    /// without a `uid` is refused, naming the problem, instead of being answered as a signed-out
    /// request or one at a path no rule matches.
    @Test func aQuestionForTheRulesIsReadStrictly() async throws {
        try await Self.withServer { client in
            let rules = """
                rules_version = '2';
                service cloud.firestore {
                  match /databases/{database}/documents {
                    match /u/{id} {
                      allow get: if request.auth.uid == id && database == 'named';
                      allow create: if request.auth.token.admin == true;
                    }
                  }
                }
                """
            let body = String(Self.rulesBody(rules).dropLast()) + #","database":"projects/eq/databases/named"}"#
            #expect(try await Self.call(client, .put, "/emulator/v1/projects/eq:securityRules", body).0 == .ok)
            let ask = { (question: String) async throws -> (HTTPResponse.Status, Any?) in
                try await Self.call(client, .post, "/emulator/v1/projects/eq:evaluateRules", question)
            }
            // The same document named four ways is allowed four times.
            for question in [
                #"{"method":"get","path":"u/a","database":"named","auth":{"uid":"a"}}"#,
                #"{"method":"get","path":"/u/a","database":"projects/eq/databases/named","auth":{"uid":"a"}}"#,
                #"{"method":"get","path":"/databases/named/documents/u/a","auth":{"uid":"a"}}"#,
                #"{"method":"get","path":"projects/eq/databases/named/documents/u/a","auth":{"uid":"a"}}"#,
            ] {
                let (status, answer) = try await ask(question)
                #expect(status == .ok, "\(question)")
                #expect((answer as? [String: Any])?["allowed"] as? Bool == true, "\(question)")
            }
            var (status, answer) = try await ask(#"{"method":"create","path":"u/b","database":"named","auth":{"uid":"b","claims":{"admin":true}},"data":{}}"#)
            #expect((answer as? [String: Any])?["allowed"] as? Bool == true)
            (status, answer) = try await ask(#"{"method":"create","path":"u/b","database":"named","auth":{"uid":"b"},"data":{}}"#)
            #expect((answer as? [String: Any])?["allowed"] as? Bool == false)
            (status, answer) = try await ask(#"{"method":"get","path":"u/a","auth":{"uid":"a"}}"#)
            #expect(status == .badRequest)
            #expect(Self.message(answer) == "No rules are loaded for projects/eq/databases/(default).")

            let refused: [(String, String)] = [
                (#"[]"#, #"The body must be a JSON object: {"method": "get|list|create|update|delete", "path": "users/alice", "auth": {"uid": "alice", "claims": {…}} | null, "data": {REST fields}, "database": "(default)"}."#),
                (#"{"method":"get","path":"u/a","Auth":{"uid":"a"}}"#, #"Unknown key "Auth"; a question holds auth, data, database, method, path."#),
                (#"{"method":"read","path":"u/a"}"#, #"method must be one of get, list, create, update, delete, not "read"."#),
                (#"{"path":"u/a"}"#, "method must be one of get, list, create, update, delete."),
                (#"{"method":"get","path":7}"#, #"path must be a string, such as "users/alice"."#),
                (#"{"method":"get","path":"u"}"#, #"get takes a document path, such as "users/alice"; "u" is not one."#),
                (#"{"method":"list","path":"u/a"}"#, #"list takes a collection path, such as "users"; "u/a" is not one."#),
                (#"{"method":"get","path":"u//a"}"#, #"path "u//a": Resource id must not be empty."#),
                (#"{"method":"get","path":"u/__x__"}"#, #"path "u/__x__": Resource id "__x__" is invalid because it is reserved."#),
                (#"{"method":"get","path":"projects/other/databases/named/documents/u/a"}"#, #"path "projects/other/databases/named/documents/u/a" is not in project "eq"."#),
                (#"{"method":"get","path":"/databases/named/documents/u/a","database":"(default)"}"#, #"path "/databases/named/documents/u/a" is in projects/eq/databases/named, not in projects/eq/databases/(default) as database says."#),
                (#"{"method":"get","path":"u/a","database":"projects/other/databases/named"}"#, #"database "projects/other/databases/named" is not in project "eq"."#),
                (#"{"method":"get","path":"u/a","database":1}"#, #"database must be a string, such as "(default)"."#),
                (#"{"method":"get","path":"u/a","auth":"a"}"#, #"auth must be null or an object, such as {"uid": "alice"}."#),
                (#"{"method":"get","path":"u/a","auth":{"uid":5}}"#, #"auth.uid must be a non-empty string; give "auth": null for a signed-out request."#),
                (#"{"method":"get","path":"u/a","auth":{"uid":"a","token":{}}}"#, #"Unknown key "auth.token"; auth holds uid and claims."#),
                (#"{"method":"get","path":"u/a","auth":{"uid":"a","claims":[]}}"#, #"auth.claims must be an object, such as {"admin": true}."#),
                (#"{"method":"get","path":"u/a","data":{}}"#, "data is only for create, update and list; get reads the stored document."),
                (#"{"method":"create","path":"u/a","data":{"n":3}}"#, #"data.n must be an object with exactly one value type, such as {"stringValue": "x"}."#),
            ]
            for (question, message) in refused {
                let (status, answer) = try await ask(question)
                #expect(status == .badRequest, "\(question)")
                #expect(Self.message(answer) == message, "\(question)")
            }
        }
    }
}

extension RulesAPITests {
    @Test func rulesCanBeScopedToOneDatabase() async throws {
        try await Self.withServer { client in
            let shut = "service cloud.firestore { match /databases/{d}/documents/{c}/{id} { allow read: if false; } }"
            let body = String(Self.rulesBody(shut).dropLast()) + #","database":"projects/pd/databases/other"}"#
            var (status, _) = try await Self.call(client, .put, "/emulator/v1/projects/pd:securityRules", body)
            #expect(status == .ok)
            (status, _) = try await Self.call(client, .get, "/v1/projects/pd/databases/other/documents/a/b")
            #expect(status == .forbidden)
            (status, _) = try await Self.call(client, .get, "/v1/projects/pd/databases/(default)/documents/a/b")
            #expect(status == .notFound)  // no rules for the default database: open
            // The database's project decides, whatever project the path names.
            let elsewhere = String(Self.rulesBody(shut).dropLast()) + #","database":"projects/pe/databases/(default)"}"#
            (status, _) = try await Self.call(client, .put, "/emulator/v1/projects/pd:securityRules", elsewhere)
            #expect(status == .ok)
            (status, _) = try await Self.call(client, .get, "/v1/projects/pe/databases/(default)/documents/a/b")
            #expect(status == .forbidden)
            // A project's rules are its (default) database's: another database stays open.
            (status, _) = try await Self.call(client, .put, "/emulator/v1/projects/pd:securityRules", Self.rulesBody(shut))
            #expect(status == .ok)
            (status, _) = try await Self.call(client, .get, "/v1/projects/pd/databases/(default)/documents/a/b")
            #expect(status == .forbidden)
            (status, _) = try await Self.call(client, .get, "/v1/projects/pd/databases/third/documents/a/b")
            #expect(status == .notFound)
            // A path may name the database, to load, read back and cover its rules.
            let open = "service cloud.firestore { match /databases/{d}/documents/{c}/{id} { allow read: if id == 'b'; } }"
            (status, _) = try await Self.call(client, .put, "/emulator/v1/projects/pd/databases/third:securityRules", Self.rulesBody(open))
            #expect(status == .ok)
            (status, _) = try await Self.call(client, .get, "/v1/projects/pd/databases/third/documents/a/c")
            #expect(status == .forbidden)
            var answer: Any?
            (status, answer) = try await Self.call(client, .get, "/emulator/v1/projects/pd/databases/third:securityRules")
            #expect((((answer as? [String: Any])?["rules"] as? [String: Any])?["files"] as? [[String: Any]])?.first?["content"] as? String == open)
            (status, answer) = try await Self.call(client, .get, "/emulator/v1/projects/pd/databases/fourth:securityRules")
            #expect((((answer as? [String: Any])?["rules"] as? [String: Any])?["files"] as? [[String: Any]])?.first?["name"] as? String == "OPEN_RULES")
            (status, answer) = try await Self.call(client, .get, "/emulator/v1/projects/pd/databases/third:ruleCoverage")
            let counted = ((answer as? [String: Any])?["report"] as? [[String: Any]])?.first?["values"] as? [[String: Any]]
            #expect(counted?.first?["count"] as? Int == 1)
            (status, answer) = try await Self.call(client, .get, "/emulator/v1/projects/pd:ruleCoverage")
            #expect((((answer as? [String: Any])?["rules"] as? [String: Any])?["files"] as? [[String: Any]])?.first?["content"] as? String == shut)
        }
    }

    @Test func aRulesBodyOfAnotherShapeIsRefusedAndChangesNothing() async throws {
        try await Self.withServer { client in
            let shut = "service cloud.firestore { match /databases/{d}/documents/{c}/{id} { allow read: if false; } }"
            let rules = Self.rulesBody(shut).dropFirst().dropLast()  // "rules": {…}
            let refused: [(String, String)] = [
                ("{\(rules),\"name\":\"x\"}", #"Unknown field "name" in the request."#),
                (#"{"rules":{"files":[{"content":"x"}],"metadata":{}}}"#, #"Unknown field "metadata" in "rules"."#),
                (#"{"rules":{"files":[{"content":"x","bogus":1}]}}"#, #"Unknown field "bogus" in rules.files[0]."#),
                (#"{"rules":{"files":[{"content":"x","fingerprint":"!!"}]}}"#, "rules.files[0].fingerprint must be base64."),
                (#"{"rules":{"files":[{"content":5}]}}"#, "rules.files[0].content must be a string."),
                (#"{"rules":{"files":[]}}"#, #""rules.files" must be a list of at least one file."#),
                // A null is an absent field, as in proto3's JSON.
                (#"{"rules":{"files":[{"content":null}]}}"#, "Error compiling rules:\nL0:0 Rules content empty. Compilation aborted."),
                (#"{"rules":{"files":null}}"#, #""rules.files" must be a list of at least one file."#),
                (#"{"rules":[]}"#, #""rules" must be an object."#),
                ("{", "the request must be an object."),
                ("{\(rules),\"database\":\"(default)\"}", #"Database name "(default)" lacks "projects" at index 0."#),
            ]
            for (body, message) in refused {
                let (status, answer) = try await Self.call(client, .put, "/emulator/v1/projects/shape:securityRules", body)
                #expect(status == .badRequest, "\(body)")
                #expect((Self.message(answer) ?? "").hasPrefix(message), "\(body): \(answer)")
            }
            var (status, _) = try await Self.call(client, .get, "/v1/projects/shape/databases/(default)/documents/a/b")
            #expect(status == .notFound)  // still open
            // What the reference takes: a file's name and base64 fingerprint, or nulls for them
            // and for the database.
            let nulls = #"{"rules":{"files":[{"content":"\#(shut)","name":null,"fingerprint":null}]},"database":null}"#
            (status, _) = try await Self.call(client, .put, "/emulator/v1/projects/nulls:securityRules", nulls)
            #expect(status == .ok)
            #expect(try await Self.call(client, .get, "/v1/projects/nulls/databases/(default)/documents/a/b").0 == .forbidden)
            let named = #"{"rules":{"files":[{"content":"\#(shut)","name":"firestore.rules","fingerprint":"AAAA"}]}}"#
            (status, _) = try await Self.call(client, .put, "/emulator/v1/projects/shape:securityRules", named)
            #expect(status == .ok)
            (status, _) = try await Self.call(client, .get, "/v1/projects/shape/databases/(default)/documents/a/b")
            #expect(status == .forbidden)
        }
    }
}

extension RulesAPITests {
    /// `?database=` names the database a rules route is about, of any project; named twice, in
    /// the path and the parameter, or differently in the parameter and a load's body, it is
    /// refused (the reference hangs on the second).
    @Test func theDatabaseParameterNamesTheRulesDatabase() async throws {
        try await Self.withServer { client in
            let shut = "rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { match /{c}/{id} { allow read: if false; } } }"
            let named = "projects/elsewhere/databases/named"
            var (status, _) = try await Self.call(client, .put, "/emulator/v1/projects/pp:securityRules?database=\(named)", Self.rulesBody(shut))
            #expect(status == .ok)
            #expect(try await Self.call(client, .get, "/v1/\(named)/documents/c/a").0 == .forbidden)
            #expect(try await Self.call(client, .get, "/v1/projects/pp/databases/(default)/documents/c/a").0 == .notFound)
            let (_, shown) = try await Self.call(client, .get, "/emulator/v1/projects/pp:securityRules?database=\(named)")
            let file = (((shown as? [String: Any])?["rules"] as? [String: Any])?["files"] as? [[String: String]])?.first
            #expect(file?["content"] == shut)
            // `if false` is no expression to report, so the report is left out, as on the reference.
            let (_, coverage) = try await Self.call(client, .get, "/emulator/v1/projects/pp:ruleCoverage?database=\(named)")
            #expect((coverage as? [String: Any])?["rules"] != nil)
            #expect((coverage as? [String: Any])?["report"] == nil)
            #expect(try await Self.call(client, .get, "/emulator/v1/projects/pp:ruleCoverage").1.flatMap { ($0 as? [String: Any])?["report"] } == nil)
            let twice = "The database is named twice, differently or in two places: name it once, in the path, the \"database\" parameter or the body."
            var body: Any?
            (status, body) = try await Self.call(client, .get, "/emulator/v1/projects/pp/databases/x:securityRules?database=\(named)")
            #expect(status == .badRequest && Self.message(body) == twice)
            let load = try JSONSerialization.data(withJSONObject: ["rules": ["files": [["content": shut]]], "database": "projects/pp/databases/other"])
            (status, body) = try await Self.call(client, .put, "/emulator/v1/projects/pp:securityRules?database=\(named)", String(decoding: load, as: UTF8.self))
            #expect(status == .badRequest && Self.message(body) == twice)
            let another = try JSONSerialization.data(withJSONObject: ["rules": ["files": [["content": shut]]], "database": "projects/pp/databases/y"])
            (status, body) = try await Self.call(client, .put, "/emulator/v1/projects/pp/databases/x:securityRules", String(decoding: another, as: UTF8.self))
            #expect(status == .badRequest && Self.message(body) == twice)
            (status, body) = try await Self.call(client, .get, "/emulator/v1/projects/pp:securityRules?database=projects/pp")
            #expect(status == .badRequest && Self.message(body) == #"Database name "projects/pp" lacks "/" at index 11."#)
        }
    }

    /// As on the reference, a rules or report route is `projects/{p}` or
    /// `projects/{p}/databases/{d}` before its method, anything else is no resource, and an empty
    /// id in a database's path is told of by the database's name.
    @Test func adminRoutesOfAnotherShapeAreNotFound() async throws {
        try await Self.withServer { client in
            for verb in [":securityRules", ":ruleCoverage", ":ruleCoverage.html", ":indexUsage"] {
                for shape in ["sr/databases", "sr/databases/d/x", "sr/dbs/d", "sr/", "sr%2Fx", "sr/databases/a%2Fb", "sr/databases//"] {
                    let (status, body) = try await Self.call(client, .get, "/emulator/v1/projects/\(shape)\(verb)")
                    #expect(status == .notFound && Self.message(body) == "No admin resource at /emulator/v1/projects/\(shape)\(verb).", "\(shape)\(verb)")
                }
                for (shape, message) in [
                    ("sr/databases/", #"Database name "projects/sr/databases/" has invalid trailing "/"."#),
                    ("/databases/d", #"Database name "projects//databases/d" lacks a project id at index 9."#),
                ] {
                    let (status, body) = try await Self.call(client, .get, "/emulator/v1/projects/\(shape)\(verb)")
                    #expect(status == .badRequest && Self.message(body) == message, "\(shape)\(verb)")
                }
            }
            let bulk = #"{"database": "projects/sr/databases/(default)", "collectionIds": ["c"]}"#
            #expect(try await Self.call(client, .post, "/emulator/v1/projects/sr/databases/d/x:bulkDelete", bulk).0 == .notFound)
            #expect(try await Self.call(client, .post, "/emulator/v1/projects/sr/databases/d:bulkDelete", bulk).0 == .ok)
            // Its body names the database, so the path's ids may be empty, as on the reference.
            for shape in ["", "sr/databases/", "/databases/"] {
                #expect(try await Self.call(client, .post, "/emulator/v1/projects/\(shape):bulkDelete", bulk).0 == .ok, "\(shape)")
            }
        }
    }
}
