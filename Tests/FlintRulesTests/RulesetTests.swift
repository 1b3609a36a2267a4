@testable import FlintRules
import FlintModel
import Testing

private func compile(_ source: String) throws -> Ruleset {
    let (ruleset, diagnostics) = Ruleset.compile(source)
    #expect(diagnostics.allSatisfy { $0.severity == .warning }, "\(diagnostics)")
    return try #require(ruleset)
}

private func errors(_ source: String) -> [String] {
    Ruleset.compile(source).diagnostics.map(\.description)
}

private let time = RulesTimestamp(seconds: 1_700_000_000, nanos: 0)

private func user(_ uid: String, _ claims: [UTF8Key: RulesValue] = [:]) -> RulesValue {
    .map(["uid": .string(uid), "token": .map(claims.merging(["sub": .string(uid)]) { a, _ in a })])
}

private func get(_ path: String, auth: RulesValue = .null, resource: RulesValue = .null) -> RulesRequest {
    RulesRequest(method: .get, database: "(default)", target: .document(path.split(separator: "/").map(String.init)), auth: auth, time: time, resource: resource)
}

private struct Documents: DocumentReader {
    var documents: [String: MapValue] = [:]
    func document(at path: RulesPath, afterWrites: Bool) -> RulesValue? {
        let relative = Array(path.segments.dropFirst(3))
        return documents[relative.joined(separator: "/")].map { .resource(database: "(default)", path: relative, fields: $0) }
    }
}

struct RulesetTests {
    /// A match's fixed segment names its document by bytes: the Kelvin sign (U+212A), which
    /// Swift's strings hold equal to `K`, is another document, as on the reference. So is a
    /// document whose data holds `é` and `e` with a combining accent: two fields.
    @Test func segmentsAndFieldNamesAreComparedByTheirBytes() throws {
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /a/K { allow read: if true; }
                match /b/{id} { allow read: if resource.data.size() == 2 && resource.data['e\\u0301'] == 2; }
              }
            }
            """)
        let reader = Documents()
        #expect(rules.decide(get("a/K"), reader: reader).allowed)
        #expect(!rules.decide(get("a/\u{212A}"), reader: reader).allowed)
        let both = RulesValue.resource(database: "(default)", path: ["b", "x"], fields: ["\u{E9}": 1, "e\u{301}": 2])
        #expect(rules.decide(get("b/x", resource: both), reader: reader).allowed)
    }

    @Test func nestedMatchesWildcardsAndTheDenialMessage() throws {
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                function signedIn() { return request.auth != null }
                match /users/{uid} {
                  allow get: if signedIn() && request.auth.uid == uid
                  allow read: if
                    resource.data.public == true;
                  match /posts/{post} {
                    allow get: if post == 'p1' && database == '(default)';
                  }
                }
              }
            }
            """)
        let reader = Documents()
        #expect(rules.decide(get("users/alice", auth: user("alice")), reader: reader).allowed)
        let denied = rules.decide(get("users/alice", auth: user("bob")), reader: reader)
        #expect(!denied.allowed)
        // The reference's two passes: before reading (the resource unknown), then with it.
        let twoPasses = "\nfalse for 'get' @ L6, evaluation error at L8:9 for 'get' @ L8, false for 'get' @ L6, Null value error. for 'get' @ L8"
        #expect(denied.message == twoPasses)
        let stranger = rules.decide(get("users/alice"), reader: reader)
        #expect(stranger.message == twoPasses)
        let open = rules.decide(get("users/alice", resource: .resource(database: "(default)", path: ["users", "alice"], fields: ["public": true])), reader: reader)
        #expect(open.allowed)
        #expect(rules.decide(get("users/alice/posts/p1"), reader: reader).allowed)
        #expect(!rules.decide(get("users/alice/posts/p2"), reader: reader).allowed)
        // Rules on a parent never cascade to its subcollections.
        #expect(rules.decide(get("users/alice/other/x", auth: user("alice")), reader: reader).message == "No matching allow statements")
    }

    @Test func recursiveWildcardsDifferBetweenVersions() throws {
        let body = """
            service cloud.firestore {
              match /databases/{database}/documents {
                match /cities/{rest=**} {
                  allow get: if rest[0] == 'SF' || rest == path('/x');
                }
                match /{any=**}/posts/{post} {
                  allow get: if true;
                }
              }
            }
            """
        let v1 = try compile(body.replacingOccurrences(of: "match /{any=**}/posts/{post} {\n      allow get: if true;\n    }", with: ""))
        let v2 = try compile("rules_version = '2';\n" + body)
        let reader = Documents()
        #expect(v1.decide(get("cities/SF"), reader: reader).allowed)
        #expect(v1.decide(get("cities/SF/landmarks/coit"), reader: reader).allowed)
        #expect(v2.decide(get("forums/f/posts/p"), reader: reader).allowed)
        #expect(v2.decide(get("posts/p"), reader: reader).allowed)
        #expect(!v2.decide(get("forums/f/threads/t"), reader: reader).allowed)
        #expect(errors(body).contains { $0.contains("must be the last segment") })
    }

    @Test func getAndExistsDecideWithStoredDocuments() throws {
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{db}/documents {
                function isAdmin() {
                  let me = /databases/$(db)/documents/admins/$(request.auth.uid);
                  return exists(me) && get(me).data.level > 2;
                }
                match /reports/{id} { allow read: if isAdmin(); }
              }
            }
            """)
        var reader = Documents()
        reader.documents["admins/ann"] = ["level": 3]
        reader.documents["admins/bob"] = ["level": 1]
        #expect(rules.decide(get("reports/r", auth: user("ann")), reader: reader).allowed)
        // get() waits for the second pass; a request with no auth fails in both.
        #expect(rules.decide(get("reports/r", auth: user("bob")), reader: reader).message == "\nevaluation error at L8:42 for 'get' @ L8, false for 'get' @ L8")
        #expect(rules.decide(get("reports/r", auth: user("cy")), reader: reader).message == "\nevaluation error at L8:42 for 'get' @ L8, false for 'get' @ L8")
        #expect(rules.decide(get("reports/r"), reader: reader).message == "\nNull value error. for 'get' @ L8, Null value error. for 'get' @ L8")
    }

    @Test func writesSeeTheRequestResourceAndMethods() throws {
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents/posts/{id} {
                allow create: if request.resource.data.author == request.auth.uid
                  && request.resource.data.createdAt == request.time;
                allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title']);
                allow delete;
              }
            }
            """)
        let reader = Documents()
        let doc = { (fields: [UTF8Key: RulesValue]) in RulesValue.map(["data": .map(fields), "id": .string("p")]) }
        var create = RulesRequest(method: .create, database: "(default)", target: .document(["posts", "p"]), auth: user("ann"), time: time,
            requestResource: doc(["author": .string("ann"), "createdAt": .timestamp(time)]))
        #expect(rules.decide(create, reader: reader).allowed)
        create.requestResource = doc(["author": .string("bob"), "createdAt": .timestamp(time)])
        #expect(rules.decide(create, reader: reader).message == "\nfalse for 'create' @ L4")
        var update = RulesRequest(method: .update, database: "(default)", target: .document(["posts", "p"]), auth: user("ann"), time: time,
            resource: doc(["title": .string("a"), "body": .string("x")]), requestResource: doc(["title": .string("b"), "body": .string("x")]))
        #expect(rules.decide(update, reader: reader).allowed)
        update.requestResource = doc(["title": .string("b"), "body": .string("y")])
        #expect(!rules.decide(update, reader: reader).allowed)
        #expect(rules.decide(RulesRequest(method: .delete, database: "(default)", target: .document(["posts", "p"]), auth: .null, time: time), reader: reader).allowed)
    }

    /// An argument that fails fails only where the function uses it, as on the reference.
    @Test func argumentErrorsMatterWhereTheyAreUsed() throws {
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{d}/documents {
                function ignores(x) { return true; }
                function keeps(x) { let y = x; return true; }
                function second(x, y) { return y == 1 && x == 1; }
                match /a/{id} { allow get: if ignores(request.auth.nope); }
                match /b/{id} { allow get: if keeps(request.auth.nope); }
                match /c/{id} { allow get: if second(request.auth.nope, 2); }
                match /d/{id} { allow get: if second(request.auth.nope, 1); }
              }
            }
            """)
        let reader = Documents()
        #expect(rules.decide(get("a/x", auth: user("u")), reader: reader).allowed)
        #expect(rules.decide(get("b/x", auth: user("u")), reader: reader).allowed)
        #expect(rules.decide(get("c/x", auth: user("u")), reader: reader).message == "\nfalse for 'get' @ L9")
        #expect(rules.decide(get("d/x", auth: user("u")), reader: reader).message.contains("Property nope is undefined on object."))
    }

    /// As on the reference, a literal pattern is checked when loading for `matches` and `split`,
    /// but for `replace` only when the call runs.
    @Test func replacePatternsAreCheckedWhenTheyRun() {
        let source = "rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { match /a/{b} { allow read: if b.replace('(', 'x') == b; } } }"
        #expect(errors(source).isEmpty)
        #expect(errors(source.replacingOccurrences(of: "replace('(', 'x')", with: "split('(')")).contains { $0.contains("Invalid regular expression '('") })
    }

    @Test func compileErrorsAreAllReportedWithPositions() {
        let found = errors("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                function f(a, b, c, d, e, f, g, h) { return true; }
                function loop(x) { return other(x); }
                function other(x) { return loop(x); }
                match /a/{b} {
                  allow read: request.auth != null;
                  allow write: if 1 is bogus;
                  allow get: if null is null;
                  allow list: if 'a'.matches('(?=a)');
                  allow create: if 'x\\d' == 'x';
                }
              }
            }
            """)
        #expect(found.contains("4:14: error: Maximum allowed function arguments of 7 for function f is reached."))
        #expect(found.contains("5:14: error: Detected a call cycle between [loop,other] functions."))
        #expect(found.contains("8:19: error: Missing 'if' before conditional expression."))
        #expect(found.contains { $0.hasPrefix("12:") && $0.contains("Invalid escape sequence") })
        let lexical = errors("""
            service cloud.firestore {
              match /databases/{database}/documents {
                match /a/{b} {
                  allow write: if 1 is bogus;
                  allow get: if null is null;
                  allow list: if 'a'.matches('(?=a)');
                }
              }
            }
            """)
        #expect(lexical.contains { $0.hasPrefix("4:33: error: An unsupported type identifier was used with the 'is' operator. Received bogus. Expected one of bool,bytes,") })
        #expect(lexical.contains("5:29: error: mismatched input 'null' expecting IDENTIFIER"))
        #expect(lexical.contains { $0.hasPrefix("6:34: error: Invalid regular expression '(?=a)'") })
        #expect(errors("service cloud.firestore { match /a { allow read: if true } } service cloud.firestore {}").contains { $0.contains("Duplicate service name") })
        #expect(errors("service cloud.firestore {}\nrules_version = '2';").contains { $0.contains("Unexpected 'rules_version'") })
    }

    @Test func semicolonsAreOptionalAndCommentsIgnored() throws {
        let rules = try compile("""
            rules_version = '2'
            // a comment
            service cloud.firestore { /* inline */
              match /databases/{database}/documents {
                match /a/{b} {
                  allow read: if true
                  allow write: if false
                }
                function later() { return true }
              }
            }
            """)
        #expect(rules.decide(get("a/x"), reader: Documents()).allowed)
        // A function nothing calls compiles, with the reference's warning at its name.
        let warnings = Ruleset.compile(rules.source).diagnostics.map(\.description)
        #expect(warnings == ["9:14: warning: Unused function: later."])
    }

    @Test func aFunctionShadowedWhereverItIsCalledIsUnused() throws {
        // The match's f hides the service's wherever f is called, so the service's is unused and,
        // reached by no condition, checked without a request; g calls the k of its own scope.
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore {
              function f() { return request.auth != null; }
              function k() { return true; }
              match /databases/{database}/documents {
                function g() { return k(); }
                match /a/{b} {
                  function f() { return true; }
                  function k() { return false; }
                  allow read: if f() && g();
                }
              }
            }
            """)
        #expect(rules.decide(get("a/x"), reader: Documents()).allowed)
        #expect(Ruleset.compile(rules.source).diagnostics.map(\.description) == [
            "3:12: warning: Unused function: f.", "3:25: warning: Invalid variable name: request.", "9:16: warning: Unused function: k.",
        ])
    }

    @Test func aComparisonSeesThroughTheFunctionInScope() {
        // Each f() is the innermost f where it is written: the match's (an int) in /a, the
        // service's (a string) in /c; both comparisons are told.
        let source = """
            rules_version = '2';
            service cloud.firestore {
              function f() { return 'a'; }
              match /databases/{database}/documents {
                match /a/{b} {
                  function f() { return 1; }
                  allow read: if f() == 'a';
                }
                match /c/{d} {
                  allow read: if f() == 1;
                }
              }
            }
            """
        let never = "warning: The sub-expressions are not comparable, so this comparison will always return false."
        #expect(Ruleset.compile(source).diagnostics.map(\.description) == ["7:26: " + never, "10:26: " + never])
    }

    @Test func methodNamesAreReadWithoutRegardToCase() throws {
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /a/{b} { allow Read: if true; }
                match /c/{d} { allow GET: if true; }
              }
            }
            """)
        #expect(Ruleset.compile(rules.source).diagnostics.isEmpty)
        #expect(rules.decide(get("a/x"), reader: Documents()).allowed)
        #expect(rules.decide(get("c/x"), reader: Documents()).allowed)
        var create = get("c/x")
        create.method = .create
        #expect(!rules.decide(create, reader: Documents()).allowed)
    }

    @Test func namesMayHoldDollarSigns() throws {
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                function f$($x) { let $y = $x; return $y == 1; }
                match /a/{b$} { allow get: if f$(1) && b$ == 'x'; }
              }
            }
            """)
        #expect(rules.decide(get("a/x"), reader: Documents()).allowed)
        #expect(!rules.decide(get("a/y"), reader: Documents()).allowed)
    }

    @Test func literalMatchSegmentsAreURLDecodedAsTheReferenceReadsThem() throws {
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /admins/ops@example.com { allow get: if true; }
                match /tags/b%20c { allow get: if true; }
                match /tags/d+e { allow get: if true; }
                match /files/* { allow get: if true; }
              }
            }
            """)
        let reader = Documents()
        #expect(rules.decide(get("admins/ops@example.com"), reader: reader).allowed)
        #expect(!rules.decide(get("admins/ops"), reader: reader).allowed)
        #expect(rules.decide(get("tags/b c"), reader: reader).allowed)
        #expect(!rules.decide(get("tags/b%20c"), reader: reader).allowed)
        #expect(rules.decide(get("tags/d e"), reader: reader).allowed)
        #expect(!rules.decide(get("tags/d+e"), reader: reader).allowed)
        // `{x=*}` is `{x}`, and spaces may part `=` from `**`.
        let wildcards = try compile("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /a/{b=*} { allow get: if b == 'x'; }
                match /c/{d = **} { allow get: if d == /e/f; }
              }
            }
            """)
        #expect(wildcards.decide(get("a/x"), reader: reader).allowed)
        #expect(!wildcards.decide(get("a/y"), reader: reader).allowed)
        #expect(!wildcards.decide(get("a/x/s/t"), reader: reader).allowed)
        #expect(wildcards.decide(get("c/e/f"), reader: reader).allowed)
        #expect(!wildcards.decide(get("c/e/g"), reader: reader).allowed)
        // No `*/` follows, so `/*` is the literal segment `*`, not a comment or a wildcard.
        #expect(rules.decide(get("files/*"), reader: reader).allowed)
        #expect(!rules.decide(get("files/x"), reader: reader).allowed)
    }
}

/// Hostile rulesets: problems, never a crash or a hang.
struct HostileRulesTests {
    @Test func deepNestingIsAnIssueNotACrash() {
        let deep = String(repeating: "(", count: 5000) + "true" + String(repeating: ")", count: 5000)
        let found = errors("service cloud.firestore { match /a/{b} { allow read: if \(deep); } }")
        #expect(found.contains { $0.contains("Expression is too complex to evaluate safely.") })
        let nots = String(repeating: "!", count: 100_000) + "true"
        #expect(errors("service cloud.firestore { match /a/{b} { allow read: if \(nots); } }").contains { $0.contains("too complex") })
        // Chains are built by loops, not recursion: the tree they make is bounded too, or every
        // later pass over it would run out of stack.
        for chain in [
            "1" + String(repeating: " + 1", count: 60_000) + " > 0", "true" + String(repeating: " && true", count: 30_000),
            "request" + String(repeating: ".a", count: 60_000) + " == 1", "[1]" + String(repeating: "[0]", count: 60_000) + " == 1",
            "'a'" + String(repeating: ".lower()", count: 20_000) + " == 'a'",
        ] {
            #expect(errors("service cloud.firestore { match /a/{b} { allow read: if \(chain); } }").contains { $0.contains("too complex") })
        }
        let matches = String(repeating: "match /a/{b} { ", count: 5000) + String(repeating: "} ", count: 5000)
        #expect(errors("service cloud.firestore { \(matches) }").contains { $0.contains("Too many nested match blocks") })
        #expect(errors(String(repeating: "x", count: 300_000)) == ["1:1: error: The ruleset is larger than 256 KB."])
        #expect(errors("rules_version = '2'; service cloud.firestore { match /a/{b} { allow read: if [\(String(repeating: "1,", count: 20_000))1].size() > 0; } }").isEmpty)
    }

    @Test func thousandsOfServicesLoadAndFirestoresStillDecides() throws {
        // Five thousand services (near the size limit), each warned of twice; the last is Firestore's.
        let others = (0..<5000).map { "service s\($0) { match /a { allow read; } }\n" }.joined()
        let source = "rules_version = '2';\n" + others + "service cloud.firestore { match /databases/{d}/documents/a/{b} { allow read: if true; } }"
        let (ruleset, diagnostics) = Ruleset.compile(source)
        let rules = try #require(ruleset)
        #expect(diagnostics.count == 10_000)
        #expect(diagnostics.allSatisfy { $0.severity == .warning })
        #expect(rules.services.count == 5001)
        #expect(rules.decide(get("a/x"), reader: Documents()).allowed)
        #expect(!rules.decide(get("b/x"), reader: Documents()).allowed)
    }

    @Test func longCallChainsAreRefusedNotFollowed() {
        // The reference hangs on these; Flint refuses them at once, without running out of stack.
        let chain = (0..<3000).map { "function f\($0)(p) { return f\($0 + 1)(p); }\n" }.joined()
        let deep = chain + "function f3000(p) { return p && true; }\n"
        let cycle = chain + "function f3000(p) { return f0(p); }\n"
        for (ending, expected) in [(deep, "Maximum allowed call depth of 20 is reached for [f0->f1->"), (cycle, "Detected a call cycle between [f0,f1,")] {
            let source = "rules_version = '2';\nservice cloud.firestore {\n\(ending)match /databases/{d}/documents/a/{b} { allow read: if f0(1); }\n}"
            #expect(errors(source).contains { $0.contains(expected) }, "\(expected)")
        }
        let depth = errors("rules_version = '2';\nservice cloud.firestore {\n\(deep)match /databases/{d}/documents/a/{b} { allow read: if f0(1); }\n}")
        #expect(depth.first { $0.contains("call depth") }?.hasPrefix("24:10: error: ") == true, "\(depth.prefix(2))")
    }

    @Test func replacingInALongStringKeepsEveryPiece() throws {
        // 200,000 matches, each expanded: built once, not copied at every match.
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore { match /databases/{d}/documents { match /a/{b} {
              allow read: if resource.data.s.replace('a', '$0$0').size() == 400000
                && resource.data.s.replace('(a)(a)', '[$2]').replace('\\\\[', '').size() == 200000
                && resource.data.s.replace('a', '').size() == 0;
            } } }
            """)
        let long = RulesValue.resource(database: "(default)", path: ["a", "x"], fields: ["s": .string(String(repeating: "a", count: 200_000))])
        #expect(rules.decide(get("a/x", resource: long), reader: Documents()).allowed)
    }

    @Test func setOperationsOnLongListsKeepEveryMember() throws {
        // 20,000 members searched by hash; end to end, these took seconds each.
        let rules = try compile("""
            rules_version = '2';
            service cloud.firestore { match /databases/{d}/documents { match /a/{b} {
              allow read: if resource.data.l.toSet().size() == 20000 && resource.data.l.hasAll(resource.data.l)
                && resource.data.l.removeAll(resource.data.l[0:10000]).size() == 10000
                && resource.data.l.toSet().intersection(resource.data.f.toSet()).size() == 20000
                && resource.data.l.toSet() == resource.data.f.toSet() && !resource.data.l.hasAny(resource.data.f);
            } } }
            """)
        let fields: MapValue = [
            "l": .array((0..<20_000).map { .integer(Int64($0)) }), "f": .array((0..<20_000).map { .double(Double($0)) }),
        ]
        let long = RulesValue.resource(database: "(default)", path: ["a", "x"], fields: fields)
        #expect(rules.decide(get("a/x", resource: long), reader: Documents()).allowed)
    }

    @Test func theDeepestAllowedEvaluationFinishes() throws {
        // 20 functions, each calling the next inside 90 parentheses: the limits at their edge.
        var functions = ""
        for i in 0..<20 {
            let call = i == 19 ? "true" : "f\(i + 1)()"
            functions += "function f\(i)() { return \(String(repeating: "(", count: 90))\(call)\(String(repeating: ")", count: 90)); }\n"
        }
        let rules = try compile("rules_version = '2'; service cloud.firestore { \(functions) match /databases/{d}/documents/a/{b} { allow read: if f0(); } }")
        #expect(rules.decide(get("a/x"), reader: Documents()).allowed)
    }

    @Test func pathologicalRegexesStayLinearOrAreRefused() {
        let start = ContinuousClock.now
        #expect(evaluate("'\(String(repeating: "a", count: 5000))!'.matches('(a+)+$')").isError == false)
        #expect(evaluate("'\(String(repeating: "a", count: 5000))'.matches('(a|aa)*b')") .isTrue == false)
        #expect(ContinuousClock.now - start < .seconds(5))
        // As large as the reference takes: a million instructions.
        let large = evaluate("'a'.matches('(a{1000}){1000}')")
        #expect(large.isError == false && large.isTrue == false)
        #expect(evaluate("'a'.matches('((a{1000}){1000}){3}')").errorText?.contains("expression too large") == true)
        #expect(evaluate("'a'.matches('\(String(repeating: "(", count: 200))a\(String(repeating: ")", count: 200))')").errorText?.contains("nests too deeply") == true)
    }
}

/// The reference's bound on how deeply an expression nests, with its message and places.
struct ExpressionComplexityTests {
    private func refusals(_ condition: String) -> [String] {
        errors("rules_version = '2';\nservice cloud.firestore { match /a/{b} {\nallow read: if \(condition);\n} }")
    }
    private let tooComplex = "error: Expression is too complex to evaluate safely."

    @Test func whatIsAHundredLevelsDownIsNamed() {
        // 98 additions under a comparison: the first two terms are the hundredth level.
        #expect(refusals("1" + String(repeating: " + 1", count: 98) + " > 0") == ["3:16: \(tooComplex)", "3:20: \(tooComplex)"])
        // One fewer loads.
        #expect(refusals("1" + String(repeating: " + 1", count: 97) + " > 0").isEmpty)
        // Further down, the hundredth level is further along the chain: an addition and a term.
        #expect(refusals("1" + String(repeating: " + 1", count: 100) + " > 0") == ["3:16: \(tooComplex)", "3:28: \(tooComplex)"])
        // Each pair of parentheses is a level, and so is each `!`.
        #expect(refusals(String(repeating: "(", count: 98) + "1" + String(repeating: ")", count: 98) + " == 1") == ["3:114: \(tooComplex)"])
        #expect(refusals(String(repeating: "(", count: 97) + "1" + String(repeating: ")", count: 97) + " == 1").isEmpty)
        #expect(refusals(String(repeating: "!(", count: 50) + "true" + String(repeating: ")", count: 50)) == ["3:115: \(tooComplex)"])
        // A ternary's three parts share a level.
        #expect(
            refusals(String(repeating: "true ? ", count: 99) + "true" + String(repeating: " : false", count: 99))
                == ["3:702: \(tooComplex)", "3:709: \(tooComplex)", "3:716: \(tooComplex)"])
    }

    @Test func chainsAfterAnOperandAreNoDeeperButTheirArgumentsAre() {
        // `.`, `[]` and method calls do not nest: 250 of them load.
        #expect(refusals("request.auth" + String(repeating: ".a", count: 250) + " == 1").isEmpty)
        #expect(refusals("'a'" + String(repeating: ".lower()", count: 120) + " == 'a'").isEmpty)
        // What they take is one level below the operand.
        #expect(refusals("[1][0" + String(repeating: " + 0", count: 97) + "] > 0") == ["3:20: \(tooComplex)", "3:24: \(tooComplex)"])
        #expect(refusals("[1][0" + String(repeating: " + 0", count: 96) + "] > 0").isEmpty)
        // A method call on a parenthesised operand: the parentheses are the operand's level.
        #expect(refusals("(1" + String(repeating: " + 1", count: 97) + ").size() > 0").contains("3:17: \(tooComplex)"))
    }

    @Test func aMinusIsOneLevelWithWhatItNegates() {
        // `-(` is one level, named at the `-`.
        let pairs = String(repeating: "-(", count: 99) + "1" + String(repeating: ")", count: 99) + " != 0"
        #expect(refusals(pairs) == ["3:212: \(tooComplex)"])
    }

    @Test func functionBodiesAndLetsAreMeasuredFromTheirOwnTop() {
        let sum = "1" + String(repeating: " + 1", count: 99)
        let found = errors(
            "rules_version = '2';\nservice cloud.firestore { match /a/{b} {\nfunction f() { let x = \(sum); return \(sum); }\n"
                + "allow read: if f() == 2;\n} }")
        #expect(found == ["3:24: \(tooComplex)", "3:28: \(tooComplex)", "3:430: \(tooComplex)", "3:434: \(tooComplex)"])
    }

    @Test func aTooComplexExpressionIsReportedWithoutWarnings() {
        // As after a syntax error, the reference lists only the errors.
        let found = errors(
            "rules_version = '2';\nservice cloud.firestore { match /a/{b} {\nfunction unused() { return true; }\nallow read: if "
                + String(repeating: "!", count: 99) + "true;\n} }")
        #expect(found == ["4:115: \(tooComplex)"])
    }
}

