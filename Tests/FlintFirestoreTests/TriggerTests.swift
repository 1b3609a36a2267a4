import FlintEngine
import FlintFirestore
import Foundation
import Testing

/// Document triggers: matching, event kinds, before/after, params, chains and the loop guard.
@Suite struct TriggerTests {
    final class Log: Sendable {
        private let all = LockedArray()
        func add(_ s: String) { all.append(s) }
        var entries: [String] { all.values }
    }

    final class LockedArray: @unchecked Sendable {
        private var items: [String] = []
        private let lock = NSLock()
        func append(_ s: String) { lock.withLock { items.append(s) } }
        var values: [String] { lock.withLock { items } }
    }

    @Test func handlersSeeEventsWithParamsAndStates() async throws {
        let db = try Firestore.embedded(user: .owner)
        let triggers = try await DocumentTriggers(db)
        let log = Log()
        triggers.document("{collection}/{docId}").onWrite { change, context in
            log.add("write \(context.params["collection"]!)/\(context.params["docId"]!) \(context.eventType) \(change.before.exists)->\(change.after.exists)")
        }
        triggers.document("rooms/{roomId}").onCreate { snap, context in log.add("create \(context.params["roomId"]!) \(snap.data()["n"] ?? "")") }
        triggers.document("rooms/{roomId}").onUpdate { change, _ in
            log.add("update \(change.before.data()?["n"] ?? "") -> \(change.after.data()?["n"] ?? "")")
        }
        triggers.document("rooms/{roomId}").onDelete { snap, _ in log.add("delete \(snap.documentID) \(snap.data()["n"] ?? "")") }
        triggers.document("rooms/{roomId}/members/{uid}").onCreate { _, context in log.add("member \(context.params["uid"]!) of \(context.params["roomId"]!)") }

        try await db.document("rooms/r1").setData(["n": 1])
        try await db.document("rooms/r1").updateData(["n": 2])
        try await db.document("rooms/r1").updateData(["n": 2])  // no change: no event
        try await db.document("rooms/r1/members/ann").setData([:])
        try await db.document("rooms/r1").delete()
        await triggers.settle()
        #expect(log.entries == [
            "write rooms/r1 create false->true", "create r1 1",
            "write rooms/r1 update true->true", "update 1 -> 2",
            "member ann of r1",
            "write rooms/r1 delete true->false", "delete r1 2",
        ])
        #expect(triggers.failures.isEmpty)
    }

    @Test func triggerWritesChainAndTheLoopGuardStopsRunaways() async throws {
        let db = try Firestore.embedded(user: .owner)
        let triggers = try await DocumentTriggers(db, maxDepth: 4)
        // Each counter write bumps itself again: a loop only the guard ends.
        triggers.document("counters/{id}").onWrite { change, _ in
            guard change.after.exists else { return }
            try await change.after.reference.updateData(["n": FieldValue.increment(Int64(1))])
        }
        try await db.document("counters/c").setData(["n": 0])
        await triggers.settle()
        // The client's write and four handler generations of writes.
        #expect(try await db.document("counters/c").getDocument().get("n") as? Int == 4)
        #expect(triggers.failures.count == 1)
        #expect(triggers.failures.first?.message.contains("deeper than 4") == true)
    }

    @Test func failingHandlersAreRecordedAndOthersStillRun() async throws {
        let db = try Firestore.embedded(user: .owner)
        let triggers = try await DocumentTriggers(db)
        let log = Log()
        triggers.document("jobs/{id}").onCreate { _, _ in throw FirestoreErrorCode(.internal, "boom") }
        triggers.document("jobs/{id}").onCreate { snap, _ in log.add(snap.documentID) }
        let batch = db.batch()
        batch.setData(["a": 1], forDocument: db.document("jobs/j1"))
        batch.setData(["a": 2], forDocument: db.document("jobs/j2"))
        try await batch.commit()
        await triggers.settle()
        #expect(log.entries == ["j1", "j2"])
        #expect(triggers.failures.map(\.path) == ["jobs/j1", "jobs/j2"])
        #expect(triggers.failures.first?.message.contains("boom") == true)
    }

    @Test func triggersNeedAnEmbeddedDatabase() async throws {
        let remote = Firestore.remote(host: "127.0.0.1:1")
        await #expect(throws: FirestoreErrorCode.self) { _ = try await DocumentTriggers(remote) }
    }
}
