import FlintEngine
import FlintModel
import FlintQuery
import FlintRules
import Testing

/// The in-process listener API: exact snapshot and change sequences.
struct SnapshotListenerTests {
    /// Runs `body`, cancelling it after a few seconds so a missing snapshot fails the test
    /// instead of hanging it.
    static func bounded(_ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await body()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = try await group.next()
            group.cancelAll()
            if first == false { Issue.record("timed out waiting for a snapshot") }
        }
    }

    static func summary(_ s: ViewSnapshot?) -> String {
        guard let s else { return "end" }
        let docs = s.documents.map(\.key.documentID).joined(separator: ",")
        let changes = s.changes.map { "\($0.kind.rawValue) \($0.document.key.documentID) \($0.oldIndex)>\($0.newIndex)" }
        return "[\(docs)] " + changes.joined(separator: "; ")
    }

    @Test func aWindowedQueryReportsDocumentsPushedOutAndBackIn() async throws {
        try await Self.bounded {
            let (db, _) = makeDatabase()
            _ = try await db.commit([.set(key("scores/a"), ["team": "x", "pts": 10]), .set(key("scores/b"), ["team": "x", "pts": 20]),
                .set(key("scores/c"), ["team": "y", "pts": 30])])
            let query = Query(
                collectionID: "scores", filter: .field(FieldFilter(field("team"), .equal, "x")),
                orderBy: [Ordering(field("pts"), descending: true)], limit: 2)
            let listener = db.snapshots(of: .query(query)).makeAsyncIterator()
            #expect(Self.summary(try await listener.next()) == "[b,a] added b -1>0; added a -1>1")
            _ = try await db.commit([.set(key("scores/d"), ["team": "x", "pts": 15])])
            #expect(Self.summary(try await listener.next()) == "[b,d] removed a 1>-1; added d -1>1")
            _ = try await db.commit([.set(key("scores/b"), ["team": "y", "pts": 20])])
            #expect(Self.summary(try await listener.next()) == "[d,a] removed b 0>-1; added a -1>1")
            _ = try await db.commit([.set(key("scores/a"), ["team": "x", "pts": 99])])
            #expect(Self.summary(try await listener.next()) == "[a,d] modified a 1>0")
        }
    }

    @Test func aDocumentListenerSeesItExistAndGo() async throws {
        try await Self.bounded {
            let (db, _) = makeDatabase()
            let listener = db.snapshots(of: .documents([key("rooms/r")])).makeAsyncIterator()
            #expect(Self.summary(try await listener.next()) == "[] ")
            _ = try await db.commit([.set(key("rooms/r"), ["open": true])])
            #expect(Self.summary(try await listener.next()) == "[r] added r -1>0")
            _ = try await db.commit([.set(key("rooms/r"), ["open": false])])
            let modified = try await listener.next()
            #expect(Self.summary(modified) == "[r] modified r 0>0")
            #expect(modified?.documents.first?.fields == ["open": false])
            _ = try await db.commit([.delete(key("rooms/r"))])
            #expect(Self.summary(try await listener.next()) == "[] removed r 0>-1")
        }
    }

    @Test func collectionGroupsAndDeletedParents() async throws {
        try await Self.bounded {
            let (db, _) = makeDatabase()
            _ = try await db.commit([.set(key("users/u1/posts/p1"), ["n": 1]), .set(key("users/u2/posts/p2"), ["n": 2]), .set(key("posts/p0"), ["n": 0])])
            let group = Query(collectionID: "posts", allDescendants: true, orderBy: [Ordering(field("n"))])
            let listener = db.snapshots(of: .query(group)).makeAsyncIterator()
            #expect(Self.summary(try await listener.next()) == "[p0,p1,p2] added p0 -1>0; added p1 -1>1; added p2 -1>2")
            _ = try await db.commit([.set(key("teams/t/posts/p3"), ["n": 3])])
            #expect(Self.summary(try await listener.next()) == "[p0,p1,p2,p3] added p3 -1>3")
            await db.clear(under: ResourcePath(["users", "u1"]))
            #expect(Self.summary(try await listener.next()) == "[p0,p2,p3] removed p1 1>-1")
        }
    }

    @Test func aSlowListenerGetsOneSnapshotWithTheLatestState() async throws {
        try await Self.bounded {
            let (db, _) = makeDatabase()
            let listener = db.snapshots(of: .query(Query(collectionID: "counters"))).makeAsyncIterator()
            #expect(Self.summary(try await listener.next()) == "[] ")
            for i in 1...1000 { _ = try await db.commit([.set(key("counters/c"), ["n": .integer(Int64(i))])]) }
            let s = try await listener.next()
            #expect(Self.summary(s) == "[c] added c -1>0")
            #expect(s?.documents.first?.fields == ["n": 1000])
        }
    }

    @Test func aDeniedListenerThrowsPermissionDenied() async throws {
        try await Self.bounded {
            let registry = RulesRegistry()
            registry.load("service cloud.firestore { match /databases/{d}/documents/{c}/{id} { allow read: if request.auth != null; } }", project: "p1")
            let db = Database(id: DatabaseID(project: "p1"), rules: registry)
            let denied = db.snapshots(of: .query(Query(collectionID: "c")), auth: .unauthenticated).makeAsyncIterator()
            await #expect(throws: FlintError(.permissionDenied, "\nfalse for 'list' @ L1")) { _ = try await denied.next() }
            let allowed = db.snapshots(of: .query(Query(collectionID: "c")), auth: .user(uid: "u", token: [:])).makeAsyncIterator()
            let first = try await allowed.next()
            #expect(Self.summary(first) == "[] ")
        }
    }
}
