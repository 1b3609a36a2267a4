import FlintEngine
import FlintModel
import FlintServer
import FlintRulesTesting
import Testing

/// The Swift API, used the way rules-unit-testing suites are written.
struct EnvironmentTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /users/{uid} {
              allow read: if request.auth != null && request.auth.uid == uid;
              allow write: if request.auth.uid == uid && request.resource.data.keys().hasOnly(['name', 'age', 'at']);
            }
            match /admin/{doc} {
              allow read: if request.auth.token.admin == true;
            }
          }
        }
        """

    @Test func contextsAssertionsSeedingAndCoverage() async throws {
        let env = try RulesTestEnvironment(rules: Self.rules)
        try await env.withSecurityRulesDisabled { owner in
            try await owner.set("users/alice", ["name": "Alice"])
            try await owner.set("admin/config", ["mode": "strict"])
        }
        let alice = env.authenticatedContext("alice")
        let doc = try await assertSucceeds { try await alice.get("users/alice") }
        #expect(doc?.fields == ["name": "Alice"])
        let denied = try await assertFails { try await env.unauthenticatedContext().get("users/alice") }
        #expect(denied.message == "\nfalse for 'get' @ L5")
        try await assertFails { try await env.authenticatedContext("bob").get("users/alice") }
        try await assertSucceeds { try await alice.update("users/alice", ["age": 30]) }
        try await assertSucceeds { try await alice.set("users/alice", ["name": "A"], serverTimestamps: ["at"]) }
        try await assertFails { try await alice.set("users/alice", ["role": "admin"], merge: true) }
        try await assertFails { try await alice.delete("users/bob") }
        try await assertSucceeds { try await env.authenticatedContext("root", claims: ["admin": true]).get("admin/config") }
        try await assertFails { try await alice.get("admin/config") }
        // A query cannot prove the document id the rule compares with: rules are not filters.
        try await assertFails { _ = try await alice.query("users", where: [("name", "==", "A")]) }

        // assertFails refuses a success and other errors.
        await #expect(throws: RulesAssertionFailure.self) { try await assertFails { try await alice.get("users/alice") } }
        await #expect(throws: RulesAssertionFailure.self) {
            try await assertFails { try await env.withSecurityRulesDisabled { try await $0.update("users/nobody", ["name": "x"]) } }
        }

        let covered = env.coverageSummary
        #expect(covered.total > 10 && covered.evaluated > 5)
        #expect(env.coverageJSON.contains(#""report":["#))
        env.resetCoverage()
        #expect(env.coverageSummary.evaluated == 0)
        try await env.clearFirestore()
        let cleared = try await env.withSecurityRulesDisabled { try await $0.get("users/alice") }
        #expect(cleared == nil)
        #expect(throws: RulesTestEnvironment.InvalidRules.self) { try RulesTestEnvironment(rules: "service cloud.firestore {") }
    }

    @Test func theSameAssertionsAgainstARunningFlint() async throws {
        let server = FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        let running = try await server.start()
        defer { running.stop() }
        let port = running.port

        let env = try await RulesTestEnvironment(rules: Self.rules, emulatorHost: "127.0.0.1:\(port)")
        try await env.withSecurityRulesDisabled { try await $0.set("users/alice", ["name": "Alice"]) }
        let alice = env.authenticatedContext("alice")
        let doc = try await assertSucceeds { try await alice.get("users/alice") }
        #expect(doc?.fields == ["name": "Alice"])
        let denied = try await assertFails { try await env.unauthenticatedContext().get("users/alice") }
        #expect(denied.message == "\nfalse for 'get' @ L5")
        try await assertSucceeds { try await alice.update("users/alice", ["age": 30]) }
        try await assertSucceeds { try await alice.set("users/alice", ["name": "A"], serverTimestamps: ["at"]) }
        try await assertFails { try await alice.set("users/alice", ["role": "admin"], merge: true) }
        try await assertSucceeds { try await env.authenticatedContext("root", claims: ["admin": true]).get("admin/none") }
        try await assertFails { _ = try await alice.query("users", where: [("name", "==", "A")]) }
        let seen = try await env.withSecurityRulesDisabled { try await $0.query("users", where: [("name", "==", "A")], limit: 5) }
        #expect(seen.map(\.key.documentID) == ["alice"])
        #expect(try await env.coverageReport().contains("\"report\""))
        try await env.clearFirestore()
        let cleared = try await env.withSecurityRulesDisabled { try await $0.get("users/alice") }
        #expect(cleared == nil)
        await #expect(throws: FlintError.self) { _ = try await RulesTestEnvironment(rules: "service cloud.firestore {", emulatorHost: "127.0.0.1:\(port)") }
    }
}
