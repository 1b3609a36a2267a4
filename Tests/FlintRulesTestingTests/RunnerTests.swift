import ArgumentParser
@testable import FlintCLI
import FlintModel
import FlintRulesTesting
import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif
import Testing

/// Specs in YAML and JSON run in process, with their reports.
struct RunnerTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /posts/{post} {
              allow get: if resource.data.published == true || request.auth.uid == resource.data.author;
              allow list: if resource.data.published == true && request.query.limit <= 20;
              allow create: if request.auth.uid == request.resource.data.author
                && request.resource.data.createdAt == request.time
                && debug(request.resource.data.keys()).hasOnly(['author', 'title', 'createdAt', 'published']);
              allow update: if request.auth.uid == resource.data.author
                && request.resource.data.likes == resource.data.get('likes', 0) + 1
                || request.auth.token.get('admin', false) == true;
            }
            match /rooms/{room}/members/{member} {
              allow create: if getAfter(/databases/$(database)/documents/rooms/$(room)).data.open == true;
            }
            match /rooms/{room} {
              allow create: if request.auth != null;
              allow get: if true;
            }
          }
        }
        """

    static let spec = """
        rules: firestore.rules
        data:
          posts/p1: {author: ann, published: true, title: Hi, likes: 2}
          posts/draft: {author: ann, published: false}
        tests:
          - name: anyone reads a published post
            op: get
            path: posts/p1
            expect: allow
          - name: drafts are private
            auth: {uid: bob}
            op: get
            path: posts/draft
            expect: deny
            line: 5
          - name: the author reads a draft
            auth: {uid: ann}
            op: get
            path: posts/draft
            expect: allow
          - name: listing published posts with a limit
            op: list
            path: posts
            where: [[published, "==", true]]
            orderBy: [[title, desc]]
            limit: 10
            expect: allow
          - name: listing without the filter
            op: list
            path: posts
            limit: 10
            expect: deny
            denial: "\\nProperty published is undefined on object. for 'list' @ L6"
          - name: creating with a server timestamp
            auth: {uid: bob}
            op: create
            path: posts/p2
            data: {author: bob, title: New, published: false}
            serverTimestamps: [createdAt]
            expect: allow
            debug: 'list_value { values { string_value: "author" } values { string_value: "createdAt" } values { string_value: "published" } values { string_value: "title" } }'
          - name: a like is an increment by one
            auth: {uid: ann}
            op: update
            path: posts/p1
            increments: {likes: 1}
            data: {}
            expect: allow
          - name: an admin claim passes
            auth: {uid: zed, claims: {admin: true}}
            op: update
            path: posts/p1
            data: {title: Edited}
            expect: allow
          - name: a batch sees its own room through getAfter
            auth: {uid: ann}
            op: batch
            writes:
              - {op: set, path: rooms/r1, data: {open: true}}
              - {op: set, path: rooms/r1/members/ann, data: {}}
            expect: allow
          - name: a transaction reads then writes
            auth: {uid: ann}
            op: transaction
            writes:
              - {op: get, path: posts/p1}
              - {op: set, path: rooms/r2, data: {open: false}}
              - {op: set, path: rooms/r2/members/ann, data: {}}
            expect: deny
        """

    static func write(_ files: [String: String]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flint-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return dir
    }

    @Test func aYAMLSpecRunsEveryKindOfRequest() async throws {
        let dir = try Self.write(["firestore.rules": Self.rules, "spec.yaml": Self.spec])
        let result = await RulesTestRunner.run(dir.appendingPathComponent("spec.yaml"))
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.cases.count == 10)
        for c in result.cases where !c.passed { Issue.record("\(c.name): \(c.outcome) \(c.explanation)") }
        let summary = RulesTestReport.text([result])
        #expect(summary.hasSuffix("10 passed, 0 failed\n"))
        let junit = RulesTestReport.junit([result])
        #expect(junit.contains(#"tests="10" failures="0""#))
        #expect(junit.components(separatedBy: "<testcase ").count == 11)
        let percent = try #require(RulesTestReport.coveragePercent([result]))
        #expect(percent > 50)
    }

    @Test func failuresNameTheDecidingLinesAndTheirValues() async throws {
        let spec = """
            {"rules": "firestore.rules", "data": {"posts/draft": {"author": "ann", "published": false}},
             "tests": [{"name": "wrongly expected", "auth": {"uid": "bob"}, "op": "get", "path": "posts/draft", "expect": "allow"},
                       {"name": "no expectation", "op": "get", "path": "posts/draft"},
                       {"name": "over three lines", "auth": {"uid": "bob"}, "op": "update", "path": "posts/draft", "data": {"likes": 5}, "expect": "allow"}]}
            """
        let dir = try Self.write(["firestore.rules": Self.rules, "spec.json": spec])
        let result = await RulesTestRunner.run(dir.appendingPathComponent("spec.json"))
        let failed = try #require(result.cases.first)
        #expect(!failed.passed)
        #expect(failed.outcome == "denied: evaluation error at L5:21 for 'get' @ L5, false for 'get' @ L5")
        #expect(failed.explanation.first == "L5: allow get: if resource.data.published == true || request.auth.uid == resource.data.author;")
        #expect(failed.explanation.contains("    resource.data.published == true = false"))
        #expect(failed.explanation.contains(#"    request.auth.uid = "bob""#))
        #expect(result.cases[1].outcome == "malformed: expect must be allow or deny, not missing")
        // A condition over several lines is quoted whole, with the values of all its parts.
        let long = result.cases[2].explanation
        #expect(long.first == "L10: allow update: if request.auth.uid == resource.data.author && request.resource.data.likes == resource.data.get('likes', 0) + 1 || request.auth.token.get('admin', false) == true;", "\(long)")
        #expect(long.contains("    request.auth.token.get('admin', false) == true = false"), "\(long)")
        let junit = RulesTestReport.junit([result])
        #expect(junit.contains(#"failures="3""#))
        #expect(junit.contains("<failure message=\"denied: evaluation error at L5:21 for 'get' @ L5, false for 'get' @ L5\""))
    }

    @Test func failuresShowTheFunctionsTheDecisionCalled() async throws {
        let rules = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                function isMember(room) {
                  return request.auth.uid in get(/databases/$(database)/documents/rooms/$(room)).data.members;
                }
                match /rooms/{room} {
                  allow get: if request.auth != null && isMember(room);
                }
              }
            }
            """
        let spec = """
            {"rules": "firestore.rules", "data": {"rooms/r1": {"members": ["ann"]}},
             "tests": [{"name": "not a member", "auth": {"uid": "bob"}, "op": "get", "path": "rooms/r1", "expect": "allow"},
                       {"name": "a member", "auth": {"uid": "ann"}, "op": "get", "path": "rooms/r1", "expect": "deny"}]}
            """
        let dir = try Self.write(["firestore.rules": rules, "spec.json": spec])
        let result = await RulesTestRunner.run(dir.appendingPathComponent("spec.json"))
        let denied = result.cases[0].explanation
        #expect(denied.first == "L8: allow get: if request.auth != null && isMember(room);", "\(denied)")
        let body = try #require(denied.firstIndex(of: "L5 (in isMember): return request.auth.uid in get(/databases/$(database)/documents/rooms/$(room)).data.members;"), "\(denied)")
        #expect(denied[body...].contains(#"    request.auth.uid in get(/databases/$(database)/documents/rooms/$(room)).data.members = false"#))
        #expect(denied[body...].contains(#"    room = "r1""#))
        // The whole request is left out: its parts say what it would, shorter.
        #expect(denied.contains(#"    request.auth.uid = "bob""#) && !denied.contains { $0.hasPrefix("    request = ") }, "\(denied)")
        // An allowed request is explained by the conditions that held, and what they called.
        let allowed = result.cases[1].explanation
        #expect(result.cases[1].outcome == "allowed")
        #expect(allowed.first == "L8: allow get: if request.auth != null && isMember(room);", "\(allowed)")
        #expect(allowed.contains("    request.auth != null && isMember(room) = true"), "\(allowed)")
        #expect(allowed.contains { $0.hasPrefix("L5 (in isMember): ") }, "\(allowed)")
    }

    /// Each of these cases would pass if it were run as written: Flint refuses the request for
    /// a reason that is not the rules', which counts as allowed (or the typo drops a claim the
    /// rules would have denied on). Each fails as malformed instead, before anything runs.
    @Test func malformedCasesFailAsSuchWithoutRunning() async throws {
        let spec = """
            rules: firestore.rules
            data:
              posts/p1: {author: ann, published: true}
            tests:
              - {name: a misspelt key, op: get, pth: posts/p1, expect: allow}
              - {name: a misspelt claims, auth: {uid: zed, claim: {admin: true}}, op: update, path: posts/p1, data: {t: 1}, expect: allow}
              - {name: a misspelt op, op: gett, path: posts/p1, expect: allow}
              - {name: a collection for get, op: get, path: posts, expect: allow}
              - {name: a document for list, op: list, path: posts/p1, expect: deny}
              - {name: a leading slash, op: get, path: /posts/p1, expect: allow}
              - {name: an empty id, op: create, path: posts//x, data: {}, expect: allow}
              - {name: data on a get, op: get, path: posts/p1, data: {x: 1}, expect: allow}
              - {name: a filter on a write, op: set, path: posts/p9, data: {}, limit: 3, expect: allow}
              - {name: a path on a batch, op: batch, path: posts/p1, writes: [{op: delete, path: posts/p1}], expect: allow}
              - {name: an empty batch, op: batch, writes: [], expect: allow}
              - {name: a read in a batch, auth: {uid: ann}, op: batch, writes: [{op: get, path: posts/p1}], expect: allow}
              - {name: a write with its own auth, op: transaction, writes: [{op: delete, path: posts/p1, auth: {uid: ann}}], expect: allow}
              - {name: a bad operator, op: list, path: posts, where: [[published, "=", true]], limit: 5, expect: allow}
              - {op: get, path: posts/p1, expect: allow}
              - {name: still runs, op: get, path: posts/p1, expect: allow}
            """
        let dir = try Self.write(["firestore.rules": Self.rules, "spec.yaml": spec])
        let result = await RulesTestRunner.run(dir.appendingPathComponent("spec.yaml"))
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.cases.map(\.outcome) == [
            #"malformed: unknown field "pth""#,
            #"malformed: unknown field "auth.claim""#,
            #"malformed: op must be one of get, list, create, set, update, delete, batch, transaction, not "gett""#,
            #"malformed: get takes a document path, such as "users/alice"; "posts" is not one"#,
            #"malformed: list takes a collection path, such as "users"; "posts/p1" is not one"#,
            #"malformed: path "/posts/p1" starts with "/"; a path starts at its collection, such as "users/alice""#,
            #"malformed: path "posts//x": Resource id must not be empty."#,
            "malformed: get takes no data",
            "malformed: set takes no limit",
            "malformed: batch takes no path",
            "malformed: batch needs writes",
            #"malformed: writes[0]: op must be one of create, set, update, delete, not "get""#,
            "malformed: writes[0]: a write of a batch or transaction takes no auth; the test's applies",
            #"malformed: a where clause is [field, operator, value] with an operator among ["!=", "<", "<=", "==", ">", ">=", "array-contains", "array-contains-any", "in", "not-in"]"#,
            "malformed: a test needs a name",
            "allowed",
        ])
        #expect(result.cases.map(\.passed) == Array(repeating: false, count: 15) + [true])
        let stray = try Self.write(["firestore.rules": Self.rules, "spec.yaml": "rules: firestore.rules\ndat: {posts/p1: {published: true}}\ntests: []\n"])
        #expect(await RulesTestRunner.run(stray.appendingPathComponent("spec.yaml")).problems.first?.hasSuffix(
            #"cannot read the spec: unknown field "dat"; a spec holds rules, data, dataFile, seed, project, tests"#) == true)
    }

    @Test func seedDataComesFromAFileToo() async throws {
        let spec = """
            rules: firestore.rules
            dataFile: seed.yaml
            seed: once
            tests:
              - {name: seeded from the file, op: get, path: posts/p9, expect: allow}
              - {name: a write in once mode, auth: {uid: ann}, op: update, path: posts/p9, increments: {likes: 1}, data: {}, expect: allow}
              - {name: sees the earlier write, auth: {uid: ann}, op: update, path: posts/p9, increments: {likes: 1}, data: {}, expect: allow}
              - {name: an array union is not a like, auth: {uid: ann}, op: update, path: posts/p9, arrayUnion: {tags: [a]}, data: {}, expect: deny}
            """
        let seed = "posts/p9: {author: ann, published: true, likes: 0}\n"
        let dir = try Self.write(["firestore.rules": Self.rules, "spec.yaml": spec, "seed.yaml": seed])
        let result = await RulesTestRunner.run(dir.appendingPathComponent("spec.yaml"))
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.cases.map(\.passed) == [true, true, true, true], "\(result.cases.map(\.outcome))")
        let missing = try Self.write(["firestore.rules": Self.rules, "spec.yaml": "rules: firestore.rules\ndataFile: nope.json\ntests: []\n"])
        #expect(await RulesTestRunner.run(missing.appendingPathComponent("spec.yaml")).problems.first?.contains("cannot read the data file") == true)
    }

    @Test func brokenRulesAndSpecsAreReported() async throws {
        let dir = try Self.write(["bad.rules": "service cloud.firestore { match /a { allow read: if ; } }", "spec.json": #"{"rules": "bad.rules", "tests": []}"#, "broken.json": #"{"rules": x}"#])
        let bad = await RulesTestRunner.run(dir.appendingPathComponent("spec.json"))
        #expect(bad.problems.count == 1)
        #expect(bad.problems.first?.hasSuffix("bad.rules:1:53: error: Missing conditional expression after 'if'.") == true, "\(bad.problems)")
        let broken = await RulesTestRunner.run(dir.appendingPathComponent("broken.json"))
        // Where the JSON goes wrong, not only that it does.
        #expect(broken.problems.first?.hasSuffix("cannot read the spec: not valid JSON: Invalid value around character 10.") == true, "\(broken.problems)")
        #expect(RulesTestReport.failed([bad]) && RulesTestReport.failed([broken]))
        // With no rules loaded there is no coverage to report, not a full one.
        #expect(RulesTestReport.coveragePercent([bad, broken]) == nil)
    }

    @Test func theCommandLineChecksAndTests() async throws {
        let first = Self.spec.components(separatedBy: "\n  - name: drafts are private")[0]
        let dir = try Self.write(["firestore.rules": Self.rules, "bad.rules": "service cloud.firestore { allow }", "spec.yaml": Self.spec, "small.yaml": first])
        var check = try FlintCommand.Rules.Check.parse([dir.appendingPathComponent("firestore.rules").path])
        try await check.run()
        check = try FlintCommand.Rules.Check.parse([dir.appendingPathComponent("bad.rules").path])
        await #expect(throws: ExitCode.self) { try await check.run() }
        let junit = dir.appendingPathComponent("junit.xml").path
        let coverage = dir.appendingPathComponent("coverage.json").path
        var test = try FlintCommand.Rules.Test.parse([dir.appendingPathComponent("spec.yaml").path, "--junit", junit, "--coverage-json", coverage])
        try await test.run()
        #expect(FileManager.default.fileExists(atPath: junit))
        #expect((try String(contentsOfFile: coverage, encoding: .utf8)).hasPrefix(#"[{"rules":{"files":"#))
        test = try FlintCommand.Rules.Test.parse([dir.appendingPathComponent("small.yaml").path, "--min-coverage", "90"])
        await #expect(throws: ExitCode.self) { try await test.run() }
    }
}

extension RunnerTests {
    @Test func directoriesExitStatusesAndReportFormats() async throws {
        let dir = try Self.write([
            "firestore.rules": Self.rules, "a.test.yaml": Self.spec, "broken.test.yaml": "rules: firestore.rules\ntests:\n  - name: a\n    op: [get\n",
            "notes.yaml": "not: a spec",
        ])
        // A directory is searched for specs named *test*; a malformed one exits 2 with a position.
        let junit = dir.appendingPathComponent("junit.xml").path
        let json = dir.appendingPathComponent("coverage.json").path
        let html = dir.appendingPathComponent("coverage.html").path
        let test = try FlintCommand.Rules.Test.parse([dir.path, "--junit", junit, "--coverage-json", json, "--coverage", html])
        do {
            try await test.run()
            Issue.record("a malformed spec must fail the run")
        } catch let exit as ExitCode {
            #expect(exit.rawValue == 2)
        }
        let broken = await RulesTestRunner.run(dir.appendingPathComponent("broken.test.yaml"))
        #expect(broken.problems.first?.contains("line 4, column 9") == true, "\(broken.problems)")

        // JUnit is well-formed XML with one test case per case.
        final class Counter: NSObject, XMLParserDelegate {
            var testcases = 0
            var failures = 0
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
                if name == "testcase" { testcases += 1 }
                if name == "failure" { failures += 1 }
            }
        }
        let parser = XMLParser(data: try Data(contentsOf: URL(fileURLWithPath: junit)))
        let counter = Counter()
        parser.delegate = counter
        #expect(parser.parse())
        #expect(counter.testcases == 11)  // ten cases and the broken spec's load
        #expect(counter.failures == 1)
        // Coverage JSON parses, one report per rules file; the page embeds it.
        let reports = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [[String: Any]])
        #expect(reports.count == 1)
        #expect((reports[0]["report"] as? [Any])?.isEmpty == false)
        #expect(try String(contentsOfFile: html, encoding: .utf8).contains(#"<script type="application/json" id="coverage">"#))

        // A directory holding no spec fails the run: nothing ran, so nothing passed.
        let none = try Self.write(["firestore.rules": Self.rules, "notes.yaml": "not: a spec"])
        do {
            try await FlintCommand.Rules.Test.parse([none.path]).run()
            Issue.record("a directory without specs must fail the run")
        } catch let exit as ExitCode {
            #expect(exit.rawValue == 2)
        }
        // Beside a directory that has specs, it still does.
        let good = try Self.write(["firestore.rules": Self.rules, "a.test.yaml": Self.spec])
        do {
            try await FlintCommand.Rules.Test.parse([good.path, none.path]).run()
            Issue.record("a directory without specs must fail the run")
        } catch let exit as ExitCode {
            #expect(exit.rawValue == 2)
        }
        try await FlintCommand.Rules.Test.parse([good.path]).run()
    }
}
