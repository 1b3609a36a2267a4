import FlintEngine
import FlintFirestore
import Foundation
import Testing

/// The client API against both backends, asserting what comes back from the engine.
@Suite struct ClientTests {
    struct City: Codable, Equatable {
        @DocumentID var id: String?
        var name: String
        var population: Int
        var tags: [String]
        var founded: Date?
        @ServerTimestamp var updatedAt: Timestamp?
    }

    @Test(arguments: Backend.allCases) func writesAndReadsDocuments(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            let sf = db.collection("cities").document("SF")
            try await sf.setData(["name": "San Francisco", "population": 870_000, "nested": ["a": 1, "b": true], "ratio": 2.5])
            var snap = try await sf.getDocument()
            #expect(snap.exists)
            #expect(snap.documentID == "SF")
            #expect(snap.data()?["name"] as? String == "San Francisco")
            #expect(snap.data()?["population"] as? Int == 870_000)
            #expect(snap.data()?["ratio"] as? Double == 2.5)
            #expect(snap.get("nested.b") as? Bool == true)

            try await sf.updateData(["nested.a": FieldValue.increment(Int64(4)), "population": FieldValue.delete(), "at": FieldValue.serverTimestamp()])
            snap = try await sf.getDocument()
            #expect(snap.get("nested.a") as? Int == 5)
            #expect(snap.get("population") == nil)
            #expect(snap.get("at") is Timestamp)

            try await sf.setData(["tags": ["a"]], merge: true)
            try await sf.updateData([FieldPath(["tags"]): FieldValue.arrayUnion(["b", "a"])])
            snap = try await sf.getDocument()
            #expect(snap.get("tags") as? [String] == ["a", "b"])
            #expect(snap.get("name") as? String == "San Francisco")
            try await sf.updateData(["tags": FieldValue.arrayRemove(["a"])])
            #expect(try await sf.getDocument().get("tags") as? [String] == ["b"])

            try await sf.delete()
            #expect(try await sf.getDocument().exists == false)
            #expect(try await sf.getDocument().data() == nil)
        }
    }

    @Test(arguments: Backend.allCases) func mergeFieldsWriteOnlyTheNamedFields(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            let ref = db.collection("profiles").document("ann")
            try await ref.setData(["a": 1, "b": ["c": 2, "d": 3], "e": 5])
            try await ref.setData(
                ["a": 10, "b": ["c": 20, "d": 30], "e": 50, "seen": FieldValue.serverTimestamp(), "gone": FieldValue.delete()],
                mergeFields: ["a", FieldPath(["b", "c"]), "seen", "gone"])
            let snap = try await ref.getDocument()
            #expect(snap.get("a") as? Int == 10)
            #expect(snap.get("b.c") as? Int == 20)
            #expect(snap.get("b.d") as? Int == 3)
            #expect(snap.get("e") as? Int == 5)
            #expect(snap.get("seen") is Timestamp)
            #expect(snap.data()?.keys.sorted() == ["a", "b", "e", "seen"])

            let missing = await #expect(throws: FirestoreErrorCode.self) { try await ref.setData(["a": 1], mergeFields: ["a", "q"]) }
            #expect(missing?.message == "Field 'q' is specified in your field mask but missing from your input data.")
            let overlapping = await #expect(throws: FirestoreErrorCode.self) { try await ref.updateData(["b": [:], "b.c": 1]) }
            #expect(overlapping?.code == .invalidArgument)
            let empty = await #expect(throws: FirestoreErrorCode.self) { try await ref.updateData([:]) }
            #expect(empty?.message == "Update data must not be empty.")
            // None of the refused writes reached the document.
            #expect(try await ref.getDocument().get("a") as? Int == 10)
        }
    }

    @Test(arguments: Backend.allCases) func updateOfAMissingDocumentIsNotFound(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            let error = await #expect(throws: FirestoreErrorCode.self) {
                try await db.document("cities/nowhere").updateData(["a": 1])
            }
            #expect(error?.code == .notFound)
            #expect(error?.localizedDescription.hasPrefix("No document to update: ") == true)
            #expect((error.map { $0 as NSError })?.domain == FirestoreErrorDomain)
            #expect((error.map { $0 as NSError })?.code == FirestoreErrorCode.Code.notFound.rawValue)
        }
    }

    @Test func badArgumentsAreCaughtBeforeSending() async throws {
        let db = try Firestore.embedded(user: .owner)
        await #expect(throws: FirestoreErrorCode.self) { try await db.collection("a/b").getDocuments() }
        await #expect(throws: FirestoreErrorCode.self) { try await db.document("a").getDocument() }
        await #expect(throws: FirestoreErrorCode.self) { try await db.collection("a").whereField("x", in: []).getDocuments() }
        await #expect(throws: FirestoreErrorCode.self) { try await db.collection("a").limit(to: 0).getDocuments() }
        await #expect(throws: FirestoreErrorCode.self) { try await db.collection("a").limit(toLast: 2).getDocuments() }
        await #expect(throws: FirestoreErrorCode.self) { try await db.collection("a").whereField("a..b", isEqualTo: 1).getDocuments() }
        await #expect(throws: FirestoreErrorCode.self) { try await db.document("a/b").setData(["x": FieldValue.delete()]) }
        await #expect(throws: FirestoreErrorCode.self) { try await db.document("a/b").setData(["x": [FieldValue.serverTimestamp()]]) }
        await #expect(throws: FirestoreErrorCode.self) { try await db.document("a/b").setData(["x": NSObject()]) }
        let e = await #expect(throws: FirestoreErrorCode.self) { try await db.collection("a").order(by: "x").start(at: [1, 2]).getDocuments() }
        #expect(e?.message.contains("more values than were specified in the order by") == true)
    }

    @Test(arguments: Backend.allCases) func codableRoundTrip(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            let founded = Date(timeIntervalSince1970: 1_000_000)
            let ref = try await db.collection("cities").addDocument(from: City(name: "Oslo", population: 700_000, tags: ["no"], founded: founded))
            let city = try await ref.getDocument(as: City.self)
            #expect(city.id == ref.documentID)
            #expect(city.name == "Oslo")
            #expect(city.founded == founded)
            #expect(city.updatedAt != nil)
            // The id is never written as a field.
            #expect(try await ref.getDocument().data()?["id"] == nil)
            let data = try Firestore.Encoder().encode(City(id: "x", name: "A", population: 1, tags: [], founded: nil))
            #expect(data["id"] == nil && data["founded"] == nil)
            #expect(data["updatedAt"] is FieldValue)
        }
    }

    struct Passage: Codable, Equatable {
        var text: String
        var embedding: VectorValue
    }

    /// Vector fields are written with `FieldValue.vector` and read back as `VectorValue`, in
    /// documents and through `Codable`, and the server checks them as it checks any write.
    @Test(arguments: Backend.allCases) func vectorsAreWrittenAndReadAsVectorValues(_ backend: Backend) async throws {
        try await backend.run { db, engine in
            let ref = db.collection("passages").document("p1")
            try await ref.setData(["text": "hello", "embedding": FieldValue.vector([0.5, -1, 2])])
            let snap = try await ref.getDocument()
            #expect(snap.data()?["embedding"] as? VectorValue == VectorValue([0.5, -1, 2]))
            #expect((snap.get("embedding") as? VectorValue)?.array == [0.5, -1, 2])
            // Stored as a vector, not as the map that carries it on the wire.
            #expect(try await engineStoresVector(engine, db, "passages/p1", "embedding", [0.5, -1, 2]))

            try await db.collection("passages").document("p2").setData(from: Passage(text: "bye", embedding: FieldValue.vector([NSNumber(value: 1), 2.5])))
            #expect(try await db.collection("passages").document("p2").getDocument(as: Passage.self) == Passage(text: "bye", embedding: VectorValue([1, 2.5])))
            let equal = try await db.collection("passages").whereField("embedding", isEqualTo: VectorValue([0.5, -1, 2])).getDocuments()
            #expect(equal.documents.map(\.documentID) == ["p1"])

            for (bad, message) in [([Double.nan], "Vector cannot contain NaN values."), ([], "Cannot have a zero length vector.")] {
                let error = await #expect(throws: FirestoreErrorCode.self) { try await ref.setData(["embedding": FieldValue.vector(bad)]) }
                #expect(error?.status == .invalidArgument)
                #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
            }
            #expect(try await ref.getDocument().data()?["embedding"] as? VectorValue == VectorValue([0.5, -1, 2]))
        }
    }

    @Test(arguments: Backend.allCases) func queriesFilterOrderAndPage(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            let cities = db.collection("cities")
            let rows: [(String, String, Int, [String])] = [
                ("SF", "CA", 870, ["west", "coast"]), ("LA", "CA", 3900, ["west"]), ("DC", "DC", 680, ["east"]),
                ("TOK", "JP", 14000, ["asia"]), ("BJ", "CN", 21500, ["asia", "capital"]),
            ]
            let batch = db.batch()
            for (id, state, pop, tags) in rows {
                batch.setData(["state": state, "population": pop, "regions": tags], forDocument: cities.document(id))
            }
            try await batch.commit()

            let ca = try await cities.whereField("state", isEqualTo: "CA").order(by: "population", descending: true).getDocuments()
            #expect(ca.documents.map(\.documentID) == ["LA", "SF"])
            let big = try await cities.whereField("population", isGreaterThan: 1000).order(by: "population").limit(to: 2).getDocuments()
            #expect(big.documents.map(\.documentID) == ["LA", "TOK"])
            let last = try await cities.order(by: "population").limit(toLast: 2).getDocuments()
            #expect(last.documents.map(\.documentID) == ["TOK", "BJ"])
            let asia = try await cities.whereField("regions", arrayContains: "asia").getDocuments()
            #expect(Set(asia.documents.map(\.documentID)) == ["TOK", "BJ"])
            let anyOf = try await cities.whereField("regions", arrayContainsAny: ["east", "capital"]).getDocuments()
            #expect(Set(anyOf.documents.map(\.documentID)) == ["DC", "BJ"])
            let inStates = try await cities.whereField("state", in: ["DC", "JP"]).getDocuments()
            #expect(Set(inStates.documents.map(\.documentID)) == ["DC", "TOK"])
            let notIn = try await cities.whereField("state", notIn: ["CA", "DC"]).getDocuments()
            #expect(Set(notIn.documents.map(\.documentID)) == ["TOK", "BJ"])
            let or = try await cities.whereFilter(
                .orFilter([.whereField("state", isEqualTo: "DC"), .andFilter([.whereField("state", isEqualTo: "CA"), .whereField("population", isLessThan: 1000)])])
            ).getDocuments()
            #expect(Set(or.documents.map(\.documentID)) == ["DC", "SF"])
            let byID = try await cities.whereField(FieldPath.documentID(), isEqualTo: "TOK").getDocuments()
            #expect(byID.documents.map(\.documentID) == ["TOK"])

            let ordered = cities.order(by: "population")
            let first = try await ordered.limit(to: 2).getDocuments()
            #expect(first.documents.map(\.documentID) == ["DC", "SF"])
            let next = try await ordered.start(afterDocument: first.documents[1]).limit(to: 2).getDocuments()
            #expect(next.documents.map(\.documentID) == ["LA", "TOK"])
            let between = try await ordered.start(at: [870]).end(before: [14000]).getDocuments()
            #expect(between.documents.map(\.documentID) == ["SF", "LA"])
            let endAt = try await ordered.end(atDocument: first.documents[1]).getDocuments()
            #expect(endAt.documents.map(\.documentID) == ["DC", "SF"])
            // limit(toLast:) keeps the cursors where they were written.
            let lastBefore = try await ordered.end(before: [14000]).limit(toLast: 2).getDocuments()
            #expect(lastBefore.documents.map(\.documentID) == ["SF", "LA"])
            let lastWithin = try await ordered.start(after: [680]).end(at: [14000]).limit(toLast: 2).getDocuments()
            #expect(lastWithin.documents.map(\.documentID) == ["LA", "TOK"])
            let tokyo = try await cities.document("TOK").getDocument()
            let beforeTokyo = try await ordered.end(beforeDocument: tokyo).limit(toLast: 1).getDocuments()
            #expect(beforeTokyo.documents.map(\.documentID) == ["LA"])
            let fromTokyo = try await ordered.start(atDocument: tokyo).getDocuments()
            #expect(fromTokyo.documents.map(\.documentID) == ["TOK", "BJ"])
            // A document without the ordered field cannot place a cursor.
            try await db.collection("towns").document("x").setData(["name": "x"])
            let town = try await db.collection("towns").document("x").getDocument()
            let unplaced = await #expect(throws: FirestoreErrorCode.self) { try await ordered.start(atDocument: town).getDocuments() }
            #expect(unplaced?.code == .invalidArgument)
            #expect(unplaced?.message.contains("the field 'population' (used as the order by) does not exist") == true)

            let count = try await cities.whereField("state", isEqualTo: "CA").count.getAggregation(source: .server)
            #expect(count.count == 2)
            let agg = try await cities.aggregate([.count(), .sum("population"), .average("population")]).getAggregation(source: .server)
            #expect(agg.get(.sum("population")) as? Int == 40950)
            #expect(agg.get(.average("population")) as? Double == 8190)
            #expect(agg.get(.count()) as? Int == 5)
        }
    }

    @Test(arguments: Backend.allCases) func collectionGroupsAndSubcollections(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            try await db.collection("cities").document("SF").collection("landmarks").document("gg").setData(["type": "bridge"])
            try await db.collection("cities").document("BJ").collection("landmarks").document("wall").setData(["type": "wall"])
            try await db.document("landmarks/x").setData(["type": "bridge"])
            let bridges = try await db.collectionGroup("landmarks").whereField("type", isEqualTo: "bridge").getDocuments()
            #expect(bridges.documents.map(\.reference.path).sorted() == ["cities/SF/landmarks/gg", "landmarks/x"])
            let ref = db.collection("cities").document("SF").collection("landmarks")
            #expect(ref.parent?.path == "cities/SF")
            #expect(ref.parent?.parent.collectionID == "cities")
            #expect(db.collection("cities").parent == nil)
            #expect(ref.document().documentID.count == 20)
        }
    }

    @Test(arguments: Backend.allCases) func transactionsRetryAndAbort(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            let counter = db.document("counters/c")
            try await counter.setData(["n": 0])
            // As many concurrent increments as a block gets attempts: all land, since each round
            // of contention lets at least the oldest transaction commit, however slow the machine.
            let contenders = Firestore.maxTransactionAttempts
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<contenders {
                    group.addTask {
                        try await db.runTransaction { transaction, _ in
                            let n = (try transaction.getDocument(counter).data()?["n"] as? Int) ?? 0
                            transaction.updateData(["n": n + 1], forDocument: counter)
                            return nil
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await counter.getDocument().get("n") as? Int == contenders)

            // An error set by the block aborts and nothing is written.
            let error = await #expect(throws: NSError.self) {
                try await db.runTransaction { transaction, errorPointer in
                    transaction.updateData(["n": 100], forDocument: counter)
                    errorPointer?.pointee = NSError(domain: "App", code: 42, userInfo: [NSLocalizedDescriptionKey: "no"])
                    return nil
                }
            }
            #expect(error?.code == 42)
            #expect(try await counter.getDocument().get("n") as? Int == contenders)

            // The async form returns the block's value.
            let value = try await db.runTransaction(async: { transaction in
                let n = try await transaction.getDocument(counter).get("n") as? Int ?? 0
                transaction.setData(["n": n * 2], forDocument: counter, merge: true)
                return n
            })
            #expect(value == contenders)
            #expect(try await counter.getDocument().get("n") as? Int == 2 * contenders)
        }
    }

    @Test(arguments: Backend.allCases) func queryListenersReportChangesWithIndexes(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            let scores = db.collection("scores")
            try await scores.document("a").setData(["v": 1])
            try await scores.document("b").setData(["v": 5])
            let inbox = Inbox<QuerySnapshot>()
            let registration = scores.order(by: "v", descending: true).limit(to: 2).addSnapshotListener { s, e in inbox.put(s, e) }
            defer { registration.remove() }
            var snap = try await inbox.next()
            #expect(snap.documents.map(\.documentID) == ["b", "a"])
            #expect(snap.documentChanges.map(\.type) == [.added, .added])

            try await scores.document("c").setData(["v": 3])
            snap = try await inbox.next()
            #expect(snap.documents.map(\.documentID) == ["b", "c"])
            let changes = snap.documentChanges.map { ($0.type, $0.document.documentID, $0.oldIndex, $0.newIndex) }
            #expect(changes.count == 2)
            #expect(changes[0] == (.removed, "a", 1, UInt(NSNotFound)))
            #expect(changes[1] == (.added, "c", UInt(NSNotFound), 1))

            try await scores.document("c").updateData(["v": 9])
            snap = try await inbox.next()
            #expect(snap.documents.map(\.documentID) == ["c", "b"])
            #expect(snap.documentChanges.map { "\($0.type) \($0.oldIndex) \($0.newIndex)" } == ["modified 1 0"])
        }
    }

    @Test(arguments: Backend.allCases) func limitToLastListenersShowTheQueryOrder(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            let items = db.collection("items")
            for (id, v) in [("a", 1), ("b", 2), ("c", 3)] { try await items.document(id).setData(["v": v]) }
            var stream = items.order(by: "v").limit(toLast: 2).snapshots().makeAsyncIterator()
            var snap = try #require(try await stream.next())
            #expect(snap.documents.map(\.documentID) == ["b", "c"])
            #expect(snap.documentChanges.map(\.newIndex) == [0, 1])
            try await items.document("d").setData(["v": 4])
            snap = try #require(try await stream.next())
            #expect(snap.documents.map(\.documentID) == ["c", "d"])
            #expect(snap.documentChanges.map { "\($0.type) \($0.document.documentID) \($0.oldIndex) \($0.newIndex)" }
                == ["removed b 0 \(NSNotFound)", "added d \(NSNotFound) 1"])
        }
    }

    @Test(arguments: Backend.allCases) func documentListenersSeeCreateUpdateDelete(_ backend: Backend) async throws {
        try await backend.run { db, _ in
            let ref = db.document("rooms/r1")
            let inbox = Inbox<DocumentSnapshot>()
            let registration = ref.addSnapshotListener { s, e in inbox.put(s, e) }
            defer { registration.remove() }
            #expect(try await inbox.next().exists == false)
            try await ref.setData(["topic": "a"])
            #expect(try await inbox.next().get("topic") as? String == "a")
            try await ref.updateData(["topic": "b"])
            #expect(try await inbox.next().get("topic") as? String == "b")
            try await ref.delete()
            #expect(try await inbox.next().exists == false)
        }
    }

    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /notes/{id} {
              allow read: if request.auth != null && resource.data.owner == request.auth.uid;
              allow create: if request.auth != null && request.resource.data.owner == request.auth.uid;
            }
          }
        }
        """

    @Test(arguments: Backend.allCases) func rulesApplyToTheSignedInUser(_ backend: Backend) async throws {
        try await backend.run(rules: Self.rules) { admin, _ in
            let alice = admin.signedIn(as: "alice", claims: ["email_verified": true])
            let bob = admin.signedIn(as: "bob")
            try await alice.document("notes/n1").setData(["owner": "alice", "text": "hi"])
            #expect(try await alice.document("notes/n1").getDocument().get("text") as? String == "hi")
            let denied = await #expect(throws: FirestoreErrorCode.self) { try await bob.document("notes/n1").getDocument() }
            #expect(denied?.code == .permissionDenied)
            await #expect(throws: FirestoreErrorCode.self) { try await bob.document("notes/n2").setData(["owner": "alice"]) }
            await #expect(throws: FirestoreErrorCode.self) { try await admin.signedOut().document("notes/n1").getDocument() }
            // Rules are not filters: a query that could return others' notes is denied whole.
            await #expect(throws: FirestoreErrorCode.self) { try await alice.collection("notes").getDocuments() }
            let mine = try await alice.collection("notes").whereField("owner", isEqualTo: "alice").getDocuments()
            #expect(mine.count == 1)
            // A denied listener reports the error.
            let inbox = Inbox<QuerySnapshot>()
            let registration = bob.collection("notes").addSnapshotListener { s, e in inbox.put(s, e) }
            defer { registration.remove() }
            await #expect(throws: FirestoreErrorCode.self) { try await inbox.next() }
        }
    }

    @Test func settingsAndUseEmulatorPointAnInstanceAtAServer() async throws {
        try await Backend.remote.run { admin, engine in
            let host = admin.settings.host
            // Data written through the server is what an instance pointed there reads.
            try await admin.document("c/d").setData(["v": 1])
            let viaSettings = try Firestore.embedded(project: admin.databaseID.project, engine: Engine(), user: .owner)
            var settings = viaSettings.settings
            settings.host = host
            settings.isSSLEnabled = false
            viaSettings.settings = settings
            #expect(try await viaSettings.document("c/d").getDocument().get("v") as? Int == 1)
            let parts = host.split(separator: ":")
            let viaUseEmulator = try Firestore.embedded(project: admin.databaseID.project, engine: Engine())
            viaUseEmulator.useEmulator(withHost: String(parts[0]), port: Int(parts[1])!)
            viaUseEmulator.useMockUserToken(uid: "alice")
            #expect(viaUseEmulator.user == .user(uid: "alice", claims: [:]))
            #expect(try await viaUseEmulator.document("c/d").getDocument().get("v") as? Int == 1)
            await viaSettings.terminate()
            await viaUseEmulator.terminate()
        }
    }

    @Test func completionHandlersAndPendingWrites() async throws {
        let db = try Firestore.embedded(user: .owner)
        let done = Inbox<Bool>()
        for i in 0..<20 {
            db.collection("log").document("e\(i)").setData(["i": i]) { error in done.put(error == nil, nil) }
        }
        await db.waitForPendingWrites()
        let all = try await db.collection("log").getDocuments()
        #expect(all.count == 20)
        for _ in 0..<20 { #expect(try await done.next() == true) }
    }
}
