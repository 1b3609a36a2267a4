import FlintEngine
import FlintFixtures
import FlintModel
import FlintRules
import Foundation
import Testing

/// Rules on writes, expression by expression, on Flint's engine and on the reference emulator:
/// `request.resource`, `resource`, diffs, `request.writeFields`, transforms, and reads of the
/// target before and after. Each case guards one method on a collection of its own; the same
/// write is allowed or denied on both. Skips when the reference is absent.
struct RulesWriteDifferentialTests {
    static let cases: [(method: Method, expression: String)] = [
        (.create, #"request.resource.data.a == 1"#),
        (.create, #"request.resource.data.keys().hasOnly(['a', 'b', 't', 'n'])"#),
        (.create, #"request.resource.data.size() == 4"#),
        (.create, #"resource == null"#),
        (.create, #"request.resource.id == doc"#),
        (.create, #"request.resource.__name__ == /databases/$(database)/documents/$(request.path[3])/d"#),
        (.create, #"request.method == 'create'"#),
        (.create, #"request.resource.data.get('zz', 0) == 0"#),
        (.create, #"request.resource.data.t == request.time"#),
        (.create, #"request.resource.data.n == 5"#),
        (.create, #"request.resource.data.t is timestamp"#),
        (.create, #"'a' in request.resource.data"#),
        (.create, #"request.resource.data.a is int"#),
        (.create, #"request.writeFields == null"#),
        (.create, #"request.writeFields.size() > 0"#),
        (.create, #"!existsAfter(/databases/$(database)/documents/nope/nope) && existsAfter(request.path)"#),
        (.create, #"getAfter(request.path).data.a == 1"#),
        (.create, #"!exists(request.path)"#),
        (.create, #"request.resource.data.diff({}).addedKeys().hasAll(['a', 'b'])"#),
        (.create, #"request.auth.uid == 'alice'"#),
        (.create, #"request.query == null"#),
        (.create, #"resource.data == null"#),
        (.create, #"request.resource.data.zz == null"#),
        (.update, #"request.resource.data.a == 2 && resource.data.a == 1"#),
        (.update, #"request.resource.data.diff(resource.data).affectedKeys().hasOnly(['a', 'm'])"#),
        (.update, #"request.resource.data.diff(resource.data).changedKeys() == ['a', 'm'].toSet()"#),
        (.update, #"request.resource.data.diff(resource.data).affectedKeys() == ['a', 'm'].toSet()"#),
        (.update, #"request.resource.data.m.diff(resource.data.m).addedKeys() == ['j'].toSet()"#),
        (.update, #"resource.data.c.size() == 2"#),
        (.update, #"request.resource.data.c == resource.data.c"#),
        (.update, #"resource.id == doc"#),
        (.update, #"resource.__name__ == request.path"#),
        (.update, #"request.method == 'update'"#),
        (.update, #"getAfter(request.path).data.a == 2"#),
        (.update, #"get(request.path).data.a == 1"#),
        (.update, #"request.resource.data.b == 'x'"#),
        (.update, #"request.resource.data.keys().size() == 4"#),
        (.update, #"request.writeFields.hasOnly(['a', 'm'])"#),
        (.update, #"resource.data.keys() == ['a', 'b', 'c', 'm']"#),
        (.update, #"request.resource.data.m.k == 1"#),
        (.update, #"request.resource.data.diff(resource.data).unchangedKeys() == ['b', 'c'].toSet()"#),
        (.delete, #"resource.data.a == 1"#),
        (.delete, #"request.resource == null"#),
        (.delete, #"!existsAfter(request.path)"#),
        (.delete, #"exists(request.path)"#),
        (.delete, #"request.method == 'delete'"#),
        (.delete, #"request.resource.data.a == 1"#),
        (.delete, #"resource.id == 'd'"#),
        (.delete, #"getAfter(request.path) == null"#),
        (.create, #"get(request.path) == null"#),
        (.create, #"getAfter(/databases/$(database)/documents/nope/nope) == null"#),
        (.delete, #"get(request.path) != null"#),
        (.create, #"request.writeFields.size() == 4"#),
        (.create, #"request.writeFields.hasAll(['a', 'b'])"#),
        (.create, #"request.writeFields.hasAll(['t', 'n'])"#),
        (.create, #"request.writeFields.hasOnly(['a', 'b'])"#),
        (.create, #"request.writeFields == ['a', 'b']"#),
        (.create, #"request.writeFields is list"#),
        (.update, #"request.writeFields.size() == 2"#),
        (.update, #"request.writeFields == ['a', 'm']"#),
        (.update, #"request.writeFields == ['m', 'a']"#),
        (.update, #"request.writeFields[0] is string"#),
        (.delete, #"request.writeFields.size() == 0"#),
        (.delete, #"request.writeFields == null"#),
        (.update, #"request.resource != null"#),
        (.create, #"request.resource.data.keys().size() == 4"#),
        (.create, #"getAfter(request.path) != null"#),
        (.update, #"get(/databases/$(database)/documents/nope/nope) == null"#),
        (.delete, #"get(request.path).data.a == 1"#),
        (.create, #"get(request.path) == null && getAfter(request.path).data.a == 1"#),
    ]

    static var rules: String {
        RulesDifferential.ruleset(cases.enumerated().map { i, c in "match /w\(i)/{doc} { allow \(c.method.rawValue): if \(c.expression); }" })
    }

    /// What an update and a delete find stored.
    static let stored: MapValue = ["a": 1, "b": "x", "c": [1, 2], "m": ["k": 1]]

    /// The write each method makes: a create with two transforms, an update of `a` and `m`
    /// through a mask, a delete.
    static func write(_ method: Method, _ key: DocumentKey) throws -> Write {
        switch method {
        case .create:
            return Write(
                .update(key, ["a": 1, "b": "x"]),
                transforms: [FieldTransform(try FieldPath(["t"]), .serverTimestamp), FieldTransform(try FieldPath(["n"]), .increment(5))],
                precondition: .exists(false))
        case .update:
            return Write(.update(key, ["a": 2, "m": ["k": 1, "j": 2]]), updateMask: [try FieldPath(["a"]), try FieldPath(["m"])], precondition: .exists(true))
        default:
            return Write(.delete(key))
        }
    }

    static func restWrite(_ method: Method, _ name: String) -> [String: Any] {
        switch method {
        case .create:
            return [
                "update": ["name": name, "fields": DocumentJSON.restFields(["a": 1, "b": "x"])], "currentDocument": ["exists": false],
                "updateTransforms": [["fieldPath": "t", "setToServerValue": "REQUEST_TIME"], ["fieldPath": "n", "increment": ["integerValue": "5"]]],
            ]
        case .update:
            return [
                "update": ["name": name, "fields": DocumentJSON.restFields(["a": 2, "m": ["k": 1, "j": 2]])],
                "updateMask": ["fieldPaths": ["a", "m"]], "currentDocument": ["exists": true],
            ]
        default:
            return ["delete": name]
        }
    }

    @Test func everyWriteGetsTheReferencesVerdict() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential write rules test skipped")
            return
        }
        defer { reference.stop() }
        let project = "flint-write-rules"
        let database = try await RulesDifferential.load(Self.rules, project: project, on: reference)
        let id = database.id
        let user = AuthContext.user(uid: "alice", token: ["sub": "alice", "user_id": "alice"])
        let token = RulesDifferential.bearer(#"{"sub":"alice","user_id":"alice"}"#)

        var allowed = 0
        for (i, c) in Self.cases.enumerated() {
            let key = try DocumentKey(parsing: "w\(i)/d")
            let name = id.documentsRoot + "/" + key.path.canonical
            if c.method != .create {
                _ = try await database.commit([.set(key, Self.stored)])
                let seed = ["update": ["name": name, "fields": DocumentJSON.restFields(Self.stored)]]
                _ = try await reference.request("POST", "/v1/\(id.documentsRoot):commit", ["writes": [seed]])
            }
            let (status, answer) = try await reference.request(
                "POST", "/v1/\(id.documentsRoot):commit", ["writes": [Self.restWrite(c.method, name)]], authorization: token)
            #expect(status == 200 || status == 403, "\(c.expression): the reference answered \(status) \(answer)")
            let referenceAllows = status == 200
            let write = try Self.write(c.method, key)
            await RulesDifferential.expectSameVerdict("\(c.method.rawValue) \(c.expression)", referenceAllows: referenceAllows, referenceAnswer: answer) {
                _ = try await database.commit([write], auth: user)
            }
            if referenceAllows { allowed += 1 }
        }
        #expect(allowed > Self.cases.count / 2)
    }
}

/// Denial messages, which the reference builds from two passes (before reading the document,
/// then with it): each scenario's message must be the reference's, word for word.
struct RulesDenialDifferentialTests {
    /// The request (get, patch with no precondition, create, update, delete), whether the
    /// document exists beforehand, and the statements of `match /c/{doc}`.
    static let scenarios: [(op: String, exists: Bool, statements: String)] = [
        ("patch", false, #"allow create: if request.resource.data.a == 5; allow update: if request.resource.data.a == 6;"#),
        ("patch", true, #"allow create: if request.resource.data.a == 5; allow update: if request.resource.data.a == 6;"#),
        ("patch", true, #"allow update: if request.resource.data.a == 6; allow create: if request.resource.data.a == 5;"#),
        ("patch", false, #"allow write: if request.resource.data.a == 5;"#),
        ("patch", false, #"allow update: if request.resource.data.a == 6;"#),
        ("patch", true, #"allow create: if request.resource.data.a == 5;"#),
        ("patch", true, #"allow update: if resource.data.a == 5; allow create: if request.resource.data.a == 5;"#),
        ("get", true, #"allow get: if false; allow read: if resource.data.a == 5;"#),
        ("get", true, #"allow read: if resource.data.a == 5; allow get: if false;"#),
        ("get", false, #"allow get: if request.auth.uid == 'x' || resource.data.a == 5;"#),
        ("get", true, #"allow get: if false && resource.data.a == 5;"#),
        ("get", true, #"allow get: if resource.data.a == 1 && false;"#),
        ("update", true, #"allow update: if request.resource.data.a == 6;"#),
        ("update", true, #"allow update: if resource.data.a == 6;"#),
        ("delete", true, #"allow delete: if resource.data.a == 6;"#),
        ("delete", false, #"allow delete: if resource.data.a == 6;"#),
        ("create", false, #"allow create: if resource == null && request.resource.data.a == 6;"#),
        ("get", true, #"function f() { return resource.data.a == 2; } allow get: if f();"#),
        ("get", true, #"allow get: if exists(/databases/$(database)/documents/c/zz);"#),
        ("get", true, #"allow get: if resource.data.a == 5; allow get: if resource.data.a == 6;"#),
        ("patch", false, #"allow update: if true;"#),
        ("patch", false, #"allow update: if request.resource.data.a == 2;"#),
        ("patch", true, #"allow create: if true;"#),
        ("patch", false, #"allow create: if false; allow update: if true;"#),
        ("delete", false, #"allow delete: if true;"#),
        ("get", false, #"allow get: if request.auth.uid == 'x'; allow create: if false;"#),
        ("patch", false, #"allow get: if request.auth.uid == 'x'; allow create: if false;"#),
        ("get", true, #"function f(x) { return true; } allow get: if f(request.auth.nope);"#),
        ("get", true, #"function f(x, y) { return y == 1 && x == 1; } allow get: if f(request.auth.nope, 2);"#),
        ("get", true, #"function f(x) { return x == 1 || x == 2; } allow get: if f(debug(1));"#),
        ("get", true, #"function f(x) { let y = x; return true; } allow get: if f(request.auth.nope);"#),
    ]

    @Test func everyDenialReadsAsTheReferencesDoes() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential denial messages test skipped")
            return
        }
        defer { reference.stop() }
        let auth = RulesDifferential.bearer(#"{"sub":"alice"}"#)
        var compared = 0
        for (n, scenario) in Self.scenarios.enumerated() {
            let project = "flint-denial\(n)"
            let source = RulesDifferential.ruleset(["match /c/{doc} { " + scenario.statements + " }"])
            let database = try await RulesDifferential.load(source, project: project, on: reference)
            let root = "/v1/projects/\(project)/databases/(default)/documents"
            let key = try DocumentKey(parsing: "c/d")
            if scenario.exists {
                _ = try await reference.request("PATCH", root + "/c/d", ["fields": ["a": ["integerValue": "1"]]])
                _ = try await database.commit([.set(key, ["a": 1])])
            }
            let fields: [String: Any] = ["a": ["integerValue": "2"]]
            let answer: (Int, Any)
            let write: Write?
            switch scenario.op {
            case "get": answer = try await reference.request("GET", root + "/c/d", authorization: auth); write = nil
            case "patch": answer = try await reference.request("PATCH", root + "/c/d", ["fields": fields], authorization: auth); write = .set(key, ["a": 2])
            case "create":
                answer = try await reference.request("PATCH", root + "/c/d?currentDocument.exists=false", ["fields": fields], authorization: auth)
                write = Write(.update(key, ["a": 2]), precondition: .exists(false))
            case "update":
                answer = try await reference.request("PATCH", root + "/c/d?currentDocument.exists=true", ["fields": fields], authorization: auth)
                write = Write(.update(key, ["a": 2]), precondition: .exists(true))
            default: answer = try await reference.request("DELETE", root + "/c/d", authorization: auth); write = .delete(key)
            }
            let expected = ((answer.1 as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
            var found: String?
            do throws(FlintError) {
                if let write { _ = try await database.commit([write], auth: try AuthContext(authorization: auth)) } else {
                    _ = try await database.get(key, auth: try AuthContext(authorization: auth))
                }
            } catch {
                found = error.message
            }
            #expect(found == expected, "\(scenario.op) \(scenario.exists ? "an existing" : "a missing") document: \(scenario.statements)")
            if expected != nil { compared += 1 }
        }
        #expect(compared > Self.scenarios.count / 2)
    }
}

/// Requests on several documents (batch gets, commits) and writes with preconditions: the
/// reference's status and, for denials, its message word for word.
@Suite(.serialized)
struct RulesSeveralDocumentsDifferentialTests {
    static let statements = [
        "match /open/{doc} { allow read, write: if true; }",
        "match /closed/{doc} { allow read: if resource.data.a == 2; allow update: if resource.data.a == 1; allow create: if resource.data.a == 1; }",
        "match /no/{doc} { allow read, write: if false; }",
        "match /multi/{doc} { allow get, update: if resource.data.a == 2; allow read, write: if request.auth.uid == 'bob'; }",
        "match /del/{doc} { allow delete: if resource.data.a == 1; }",
        "match /stamped/{doc} { allow create: if request.resource.data.t == request.time; allow update: if request.resource.data.a > 0; }",
        // Two matches of one path: each is weighed, and named, once the other allows.
        "match /twice/{doc} { allow get: if true; allow create, update: if true; }",
        "match /twice/{other} { allow get: if resource.data.a == 2; allow write: if false; }",
        "match /pair/{doc} { allow get: if false; allow get: if resource.data.a == 1; allow get: if resource.data.a > 0; }",
        "match /pair/{other} { allow get: if resource.data.a == 1; }",
    ]
    static let stored = ["open/x": 1, "closed/one": 1, "closed/uno": 1, "closed/two": 2, "closed/deux": 2, "no/a": 1, "multi/two": 2, "del/d": 1, "twice/x": 1, "pair/p": 1]

    /// A batch get of these documents.
    static let batchGets: [[String]] = [
        ["closed/two", "closed/one", "closed/uno"], ["closed/one", "closed/two"], ["open/x", "closed/one"], ["closed/one", "open/x"],
        ["no/a", "closed/one"], ["closed/one", "no/a"], ["elsewhere/x", "closed/one"], ["closed/two", "elsewhere/x"],
        ["multi/two", "closed/one"], ["closed/none", "closed/one"], ["closed/two", "open/x", "closed/two"],
        ["twice/x", "no/a"], ["twice/x", "closed/one"], ["pair/p", "closed/one"],
    ]

    /// A commit of these writes: a path, and `+` (exists: false), `=` (exists: true), `-`
    /// (delete, exists: true), `^` (a plain set that also stamps `t` with the server time) or
    /// nothing (a plain set). A write with transforms is not known to the first pass. None pairs
    /// a write allowed only after reading with a denied one: the reference takes those second
    /// passes in an order of its own hashing (by document name), which Flint does not copy.
    static let commits: [[String]] = [
        ["=closed/two", "=closed/deux"], ["open/y", "=closed/two"], ["=no/a", "=closed/two"], ["=closed/two", "=no/a"],
        ["=closed/none"], ["=open/none"], ["=open/none", "=closed/two"], ["+closed/one"], ["+closed/two"], ["+open/x"], ["+no/a"],
        ["-del/none"], ["-open/none"], ["=elsewhere/x", "=closed/two"], ["=closed/two", "=open/x"],
        ["^stamped/s", "=no/a"], ["^stamped/s", "^open/y", "=no/a"], ["stamped/s", "=no/a"], ["^stamped/s"],
        ["twice/y", "=no/a"],
    ]

    @Test func severalDocumentsAndPreconditionsAreDecidedAsTheReferenceDecides() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential several-documents test skipped")
            return
        }
        defer { reference.stop() }
        let auth = RulesDifferential.bearer(#"{"sub":"alice"}"#)
        let flintAuth = try AuthContext(authorization: auth)
        let project = "flint-several"
        let database = try await RulesDifferential.load(RulesDifferential.ruleset(Self.statements), project: project, on: reference)
        let root = "projects/\(project)/databases/(default)/documents"
        let seed = Self.stored.sorted { $0.key < $1.key }
        var answers: [String: Int] = [:]

        func reseed() async throws {
            _ = try await reference.request("DELETE", "/emulator/v1/\(root)")
            await database.clear()
            for (path, a) in seed {
                _ = try await reference.request("PATCH", "/v1/\(root)/\(path)", ["fields": ["a": ["integerValue": "\(a)"]]])
                _ = try await database.commit([.set(try DocumentKey(parsing: path), ["a": .integer(Int64(a))])])
            }
        }
        func compare(_ description: String, _ answer: (Int, Any), flint: () async throws(FlintError) -> Void) async {
            let error = (answer.1 as? [String: Any])?["error"] as? [String: Any]
            var found: FlintError?
            do throws(FlintError) { try await flint() } catch { found = error }
            #expect(found?.code.name == error?["status"] as? String, "\(description): \(String(describing: found))")
            if answer.0 == 403 { #expect(found?.message == error?["message"] as? String, "\(description)") }
            answers[description] = answer.0
        }

        try await reseed()
        for paths in Self.batchGets {
            let answer = try await reference.request(
                "POST", "/v1/\(root):batchGet", ["documents": paths.map { "\(root)/\($0)" }], authorization: auth)
            let keys = try paths.map { try DocumentKey(parsing: $0) }
            await compare("batch get \(paths)", answer) { () throws(FlintError) in
                let result = try await database.batchGet(keys, auth: flintAuth)
                #expect(result.documents.count == (answer.1 as? [Any])?.count, "batch get \(paths)")
            }
        }
        for writes in Self.commits {
            try await reseed()
            var body: [[String: Any]] = []
            var flintWrites: [Write] = []
            for w in writes {
                let path = String(w.drop { "+=-^".contains($0) })
                let key = try DocumentKey(parsing: path)
                switch w.first {
                case "-":
                    body.append(["delete": "\(root)/\(path)", "currentDocument": ["exists": true]])
                    flintWrites.append(Write(.delete(key), precondition: .exists(true)))
                case "+", "=":
                    let exists = w.first == "="
                    body.append(["update": ["name": "\(root)/\(path)", "fields": ["a": ["integerValue": "3"]]], "currentDocument": ["exists": exists]])
                    flintWrites.append(Write(.update(key, ["a": 3]), precondition: .exists(exists)))
                case "^":
                    body.append([
                        "update": ["name": "\(root)/\(path)", "fields": ["a": ["integerValue": "3"]]],
                        "updateTransforms": [["fieldPath": "t", "setToServerValue": "REQUEST_TIME"]],
                    ])
                    flintWrites.append(Write(.update(key, ["a": 3]), transforms: [FieldTransform(try FieldPath(["t"]), .serverTimestamp)]))
                default:
                    body.append(["update": ["name": "\(root)/\(path)", "fields": ["a": ["integerValue": "3"]]]])
                    flintWrites.append(.set(key, ["a": 3]))
                }
            }
            let answer = try await reference.request("POST", "/v1/\(root):commit", ["writes": body], authorization: auth)
            await compare("commit \(writes)", answer) { () throws(FlintError) in _ = try await database.commit(flintWrites, auth: flintAuth) }
        }
        // The cases cover denials, allowed requests and failed preconditions alike.
        let statuses = Set(answers.values)
        #expect(statuses.isSuperset(of: [200, 403, 404, 409]), "\(answers)")
    }
}
