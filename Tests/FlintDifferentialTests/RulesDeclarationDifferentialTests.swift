import Foundation
import Testing

/// Rules files declaring services and functions in unusual places, loaded on both servers:
/// whether they load, every issue or refusal line with its place, and whether the Firestore
/// service (if any) still decides requests.
/// - The reference loads any service name made of letters, digits, `.` and `-`, warning of all
///   but Firestore's and Storage's, and checks each service's rules with that service's names.
/// - A call runs the innermost function of its name in scope where it is written (a function's
///   body: where the function is declared). A function shadowed wherever it is called is
///   unused, and checked without a request.
struct RulesDeclarationDifferentialTests {
    static func service(_ name: String, _ body: String) -> String { "service \(name) {\n\(body)\n}\n" }
    static let firestore = "  match /databases/{db}/documents {\n    match /{d=**} {\n      allow get: if true;\n    }\n  }"
    static let storage = "  match /b/{bucket}/o {\n    allow read: if request.auth != null;\n  }"
    /// Names each service knows or lacks: the request, debug(), and Firestore's document functions.
    static let names = """
          function g(a) { return a; }
          match /databases/{db}/documents {
            allow get, read, foo: if g(1) == 1 && debug(1) == 1 && request.time == 1 && resource.data == 1 && exists(/a/b) && get(/a/b) == 1 && getAfter(/a/b) == 1 && existsAfter(/a/b) && 'a'.matches('a') && math.abs(-1) == 1 && g(1, 2) && nothing;
          }
        """

    static let sources: [String] = [
        "rules_version = '2';\n" + service("cloud.firestore", firestore),
        "rules_version = '2';\n" + service("firebase.storage", storage),
        "rules_version = '2';\n" + service("firebase.storage", storage) + service("cloud.firestore", firestore),
        "rules_version = '2';\n" + service("cloud.firestore", firestore) + service("firebase.storage", storage) + service("other", firestore),
        "rules_version = '2';\n" + service("cloud.firestore", firestore) + service("cloud.firestore", firestore),
        "rules_version = '2';\n" + service("x", firestore) + service("cloud.firestore", names) + service("x", firestore),
        "rules_version = '2';\n" + service("cloud.firestore", names),
        "rules_version = '2';\n" + service("firebase.storage", names),
        "rules_version = '2';\n" + service("cloud.storage", names),
        service("foo", firestore),
        "rules_version = '2';\n" + service("cloud.firestore", firestore) + service("storage", "  match /x {\n    allow read: if 1 +;\n  }"),
    ] + ["cloud.firestore-", "cloud-firestore", "-", ".", "1a", "A-Z.09", "cloud.firestore.", "cloud_firestore", "_x", "a~b", "x$", "cloud.firestore -", "cloud . firestore",
        // Only spaces may stand between `service` and its name; after the name, comments too.
        "\n  cloud.firestore", "/* c */ cloud.firestore", "// c\ncloud.firestore", "cloud.firestore /* c */", "cloud.firestore // c\n"]
        .map { "rules_version = '2';\n" + service($0, firestore) } + functionScopes

    /// `f0` calling `f1` … calling `f<n>`, which calls nothing: n calls deep.
    static func chain(_ n: Int, _ name: String = "f") -> String {
        (0..<n).map { "  function \(name)\($0)() { return \(name)\($0 + 1)(); }\n" }.joined() + "  function \(name)\(n)() { return true; }\n"
    }

    static let functionScopes: [String] = [
        // Shadowed by the service's f and the match's g: both unused, and checked without a request.
        "rules_version = '2';\nfunction f() { return request.auth != null && h(); }\nfunction h() { return true; }\n"
            + service("cloud.firestore", "  function f() { return true; }\n  function g() { return request.time != null; }\n"
                + "  match /databases/{db}/documents {\n    function g() { return true; }\n    match /{d=**} { allow get: if f() && g(); }\n  }"),
        // g, declared above the match, calls the service's k, not the match's.
        "rules_version = '2';\n" + service("cloud.firestore", "  function k() { return request.time != null; }\n"
            + "  match /databases/{db}/documents {\n    function g() { return k(); }\n"
            + "    match /a/{d} {\n      function k() { return false; }\n      allow get: if g();\n    }\n  }"),
        // A match's own g in one place, the service's in another: both used.
        "rules_version = '2';\n" + service("cloud.firestore", "  function g() { return request.time != null; }\n"
            + "  match /databases/{db}/documents {\n    match /c/{d} {\n      function g() { return false; }\n      allow get: if g();\n    }\n"
            + "    match /b/{d} { allow get: if g(); }\n  }"),
        // Comparisons see through the f in scope: the match's in /a, the service's in /b.
        "rules_version = '2';\n" + service("cloud.firestore", "  function f() { return 'a'; }\n"
            + "  match /databases/{db}/documents {\n    match /a/{d} {\n      function f() { return 1; }\n      allow get: if f() == 'a';\n    }\n"
            + "    match /b/{d} { allow get: if f() == 1; }\n  }"),
        "rules_version = '2';\n" + service("cloud.firestore", "  function f(x) { return x; }\n"
            + "  match /databases/{db}/documents {\n    match /a/{d} {\n      function f(x) { return 1; }\n      allow get: if f('a') == 'a';\n    }\n"
            + "    match /b/{d} { allow get: if f(1) == 'a' || true; }\n  }"),
        // Call chains at the reference's depth limit and past it (refused, told where the 21st
        // call enters), declared backwards, unused, and two at once.
        "rules_version = '2';\n" + service("cloud.firestore", chain(20) + firestore),
        "rules_version = '2';\n" + service("cloud.firestore", chain(21) + firestore),
        "rules_version = '2';\n" + service("cloud.firestore", chain(22).split(separator: "\n").reversed().joined(separator: "\n") + "\n" + firestore),
        "rules_version = '2';\n" + service("cloud.firestore", chain(21) + chain(21, "g") + firestore),
        // A file's function after the service, and one between two services.
        "rules_version = '2';\n" + service("firebase.storage", "  function f() { return false; }\n  match /b/{bucket}/o { allow read: if f(); }")
            + "function f() { return true; }\n" + service("cloud.firestore", "  match /databases/{db}/documents {\n    match /{d=**} { allow get: if f(); }\n  }"),
    ]

    @Test func declarationsLoadWarnAndDecideAsOnTheReference() async throws {
        guard let (reference, flint, stop) = try await RawHTTP.bothServers(for: "rules declarations") else { return }
        defer { stop() }
        var loaded = 0
        var allowed = 0
        for (i, source) in Self.sources.enumerated() {
            let project = "flint-declarations-\(i)"
            var answers: [(status: Int, issues: [String], refusal: String?, get: Int?)] = []
            for base in [reference.base, flint] {
                let body = String(decoding: try JSONSerialization.data(withJSONObject: ["rules": ["files": [["content": source]]]]), as: UTF8.self)
                let (status, json) = try await RawHTTP.send("PUT", base + "/emulator/v1/projects/\(project):securityRules", body)
                var get: Int?
                if status == 200 {
                    get = try await RawHTTP.send("GET", base + "/v1/projects/\(project)/databases/(default)/documents/c/d", nil, authorization: nil).status
                }
                answers.append((status, RulesDifferential.issues(json), RawHTTP.message(json), get))
            }
            let (ours, theirs) = (answers[1], answers[0])
            #expect(ours.status == theirs.status, "\(source)")
            #expect(ours.issues == theirs.issues, "\(source)")
            #expect(ours.get == theirs.get, "\(source)")
            // Refusals for a syntax error are worded in Flint's way; the others alike.
            if let refusal = theirs.refusal, !["mismatched input", "Unexpected '", "token recognition error"].contains(where: refusal.contains) {
                #expect(ours.refusal == refusal, "\(source)")
            }
            if theirs.status == 200 { loaded += 1 }
            if theirs.get == 404 { allowed += 1 }
        }
        // Loaded and refused, allowed and denied, all occur.
        #expect(loaded >= 15 && loaded <= Self.sources.count - 8, "\(loaded) of \(Self.sources.count) loaded")
        #expect(allowed >= 3, "\(allowed) allowed")
    }
}
