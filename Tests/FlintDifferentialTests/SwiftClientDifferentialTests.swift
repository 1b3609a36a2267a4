import FlintFirestore
import Foundation
import Testing

/// The Swift client's remote backend against Google's emulator: the same code paths the
/// scenario suites run against Flint. Skips when the reference is absent.
struct SwiftClientDifferentialTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /notes/{id} {
              allow read, write: if request.auth != null && request.auth.uid == resource.data.owner;
              allow create: if request.auth != null && request.auth.uid == request.resource.data.owner;
            }
          }
        }
        """

    @Test func theRemoteClientWorksAgainstTheReferenceEmulator() async throws {
        guard let reference = await ReferenceEmulator.start() else { return }
        defer { reference.stop() }
        let project = "swift-client"
        let (loaded, _) = try await reference.request("PUT", "/emulator/v1/projects/\(project):securityRules", ["rules": ["files": [["content": Self.rules]]]])
        #expect(loaded == 200)
        let admin = Firestore.remote(host: "127.0.0.1:\(reference.port)", project: project, user: .owner)
        defer { Task { await admin.terminate() } }

        let cities = admin.collection("cities")
        for (id, pop) in [("a", 3), ("b", 1), ("c", 2)] { try await cities.document(id).setData(["pop": pop, "tags": ["x"]]) }
        try await cities.document("a").updateData(["pop": FieldValue.increment(Int64(10)), "at": FieldValue.serverTimestamp(), "tags": FieldValue.arrayUnion(["y"])])
        let a = try await cities.document("a").getDocument()
        #expect(a.get("pop") as? Int == 13)
        #expect(a.get("tags") as? [String] == ["x", "y"])
        #expect(a.get("at") is Timestamp)
        let ordered = try await cities.order(by: "pop", descending: true).limit(to: 2).getDocuments()
        #expect(ordered.documents.map(\.documentID) == ["a", "c"])
        let last = try await cities.order(by: "pop").limit(toLast: 1).getDocuments()
        #expect(last.documents.map(\.documentID) == ["a"])
        #expect(try await cities.count.getAggregation(source: .server).count == 3)

        // A transaction, and an abort set by the block.
        try await admin.runTransaction { transaction, _ in
            let pop = try transaction.getDocument(cities.document("b")).get("pop") as? Int ?? 0
            transaction.updateData(["pop": pop + 100], forDocument: cities.document("b"))
            return nil
        }
        #expect(try await cities.document("b").getDocument().get("pop") as? Int == 101)

        // A listener through the reference's watch stream.
        var snapshots = cities.order(by: "pop").snapshots().makeAsyncIterator()
        let first = try #require(try await snapshots.next())
        #expect(first.documents.map(\.documentID) == ["c", "a", "b"])
        try await cities.document("d").setData(["pop": 0])
        let second = try #require(try await snapshots.next())
        #expect(second.documents.map(\.documentID) == ["d", "c", "a", "b"])
        #expect(second.documentChanges.map { "\($0.type) \($0.document.documentID) \($0.newIndex)" } == ["added d 0"])

        // Rules apply to a mock user token.
        let alice = admin.signedIn(as: "alice")
        try await alice.collection("notes").document("n1").setData(["owner": "alice"])
        let denied = await #expect(throws: FirestoreErrorCode.self) { try await admin.signedIn(as: "bob").collection("notes").document("n1").getDocument() }
        #expect(denied?.code == .permissionDenied)
        await alice.terminate()
    }
}
