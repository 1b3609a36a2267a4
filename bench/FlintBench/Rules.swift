import FlintModel
import FlintRules

/// Rules in process: decisions per second for a typical rule (two conditions and one get()),
/// and parse + check time of a ruleset of about 2,000 lines.
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
