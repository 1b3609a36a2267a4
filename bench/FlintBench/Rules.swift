import FlintModel
import FlintRules

/// Rules in process: decisions per second for a typical rule (two conditions and one get()),
/// a rule with two `matches()` patterns, and parse + check time of a ruleset of about 2,000 lines.
func runRules(_ decisions: Int) {
    let source = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /projects/{project} {
              allow read: if request.auth != null
                && get(/databases/$(database)/documents/members/$(request.auth.uid)).data.projects.hasAny([project]);
            }
          }
        }
        """
    guard let ruleset = Ruleset.compile(source).ruleset else { fatalError("the benchmark's rules do not compile") }
    struct Members: DocumentReader {
        func document(at path: RulesPath, afterWrites: Bool) -> RulesValue? {
            .resource(database: "(default)", path: Array(path.segments.dropFirst(3)), fields: ["projects": ["p1", "p2", "p3"]])
        }
    }
    let reader = Members()
    let auth = RulesValue.map(["uid": .string("alice"), "token": .map(["sub": .string("alice")])])
    let time = RulesTimestamp(seconds: 1_700_000_000, nanos: 0)
    var allowed = 0
    var start = monotonicSeconds()
    for i in 0..<decisions {
        let request = RulesRequest(
            method: .get, database: "(default)", target: .document(["projects", i % 2 == 0 ? "p2" : "p9"]), auth: auth, time: time)
        if ruleset.decide(request, reader: reader).allowed { allowed += 1 }
    }
    let seconds = monotonicSeconds() - start
    precondition(allowed == (decisions + 1) / 2)
    print("rules decisions=\(decisions) decisions/s=\(rate(decisions, seconds)) (half allowed, half denied with a message)")

    // A pattern built from the request, as the music app checks that an id starts with the
    // caller's uid, and a fixed one with bounded repeats: every decision evaluates both.
    let patterns = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /stats/{statId} {
              allow read: if statId.matches(request.auth.uid + '__.*')
                && request.auth.token.sub.matches('[a-z]{1,20}([.-][a-z0-9]{1,20}){0,5}');
            }
          }
        }
        """
    guard let matching = Ruleset.compile(patterns).ruleset else { fatalError("the benchmark's pattern rules do not compile") }
    allowed = 0
    start = monotonicSeconds()
    for i in 0..<decisions {
        let request = RulesRequest(
            method: .get, database: "(default)", target: .document(["stats", i % 2 == 0 ? "alice__week\(i)" : "bob__week\(i)"]),
            auth: auth, time: time)
        if matching.decide(request, reader: reader).allowed { allowed += 1 }
    }
    let matchingSeconds = monotonicSeconds() - start
    precondition(allowed == (decisions + 1) / 2)
    print("rules matches() decisions=\(decisions) decisions/s=\(rate(decisions, matchingSeconds)) (two patterns each)")

    var big = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n"
    var block = 0
    while big.split(separator: "\n").count < 2_000 {
        big += """
                function isOwner\(block)(uid) { return request.auth != null && request.auth.uid == uid; }
                match /collection\(block)/{doc} {
                  allow get: if isOwner\(block)(resource.data.owner) || resource.data.visibility == 'public';
                  allow list: if request.query.limit <= 50 && resource.data.visibility == 'public';
                  allow create: if isOwner\(block)(request.resource.data.owner)
                    && request.resource.data.keys().hasOnly(['owner', 'title', 'visibility', 'createdAt'])
                    && request.resource.data.title is string && request.resource.data.title.size() < 200
                    && request.resource.data.createdAt == request.time;
                  allow update: if isOwner\(block)(resource.data.owner)
                    && request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title', 'visibility']);
                  allow delete: if isOwner\(block)(resource.data.owner) && exists(/databases/$(database)/documents/admins/$(request.auth.uid));
                }

            """
        block += 1
    }
    big += "  }\n}\n"
    let lines = big.split(separator: "\n").count
    let runs = 20
    start = monotonicSeconds()
    for _ in 0..<runs { precondition(Ruleset.compile(big).ruleset != nil) }
    let perCompile = (monotonicSeconds() - start) / Double(runs)
    print("rules parse+check lines=\(lines) ms=\(String(format: "%.2f", perCompile * 1000))")
}
