import FlintEngine
import FlintFirestore
import FlintServer
import Foundation
import Testing

/// A chat room's member listens to its messages and is then removed from the room: at the next
/// message the listener fails with permission-denied, on the reference and on Flint alike, and
/// until then it keeps its snapshots. Run through the Swift client's remote backend.
struct ListenRevocationDifferentialTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /rooms/{room} {
              allow read: if request.auth.uid in resource.data.members;
              match /messages/{message} {
                allow read: if request.auth.uid in get(/databases/$(database)/documents/rooms/$(room)).data.members;
              }
            }
          }
        }
        """

    /// What the member's two listeners (the messages query, one message) saw, in order.
    static func scenario(host: String, project: String, load: (String) async throws -> Int) async throws -> [String] {
        #expect(try await load(Self.rules) == 200)
        let admin = Firestore.remote(host: host, project: project, user: .owner)
        let member = admin.signedIn(as: "ann")
        defer {
            Task {
                await member.terminate()
                await admin.terminate()
            }
        }
        let room = admin.collection("rooms").document("r1")
        try await room.setData(["members": ["ann", "bob"]])
        try await room.collection("messages").document("m1").setData(["text": "hi"])

        var seen: [String] = []
        var messages = member.collection("rooms").document("r1").collection("messages").snapshots().makeAsyncIterator()
        var one = member.collection("rooms").document("r1").collection("messages").document("m1").snapshots().makeAsyncIterator()
        seen.append("query " + (try await messages.next()?.documents.map(\.documentID).joined(separator: ",") ?? "-"))
        seen.append("document " + ((try await one.next()?.get("text") as? String) ?? "-"))

        try await room.setData(["members": ["bob"]])
        try await room.collection("messages").document("m1").setData(["text": "edited"])
        try await room.collection("messages").document("m2").setData(["text": "secret"])
        for (name, next) in [("query", { try await messages.next().map { _ in "a snapshot" } }), ("document", { try await one.next().map { _ in "a snapshot" } })] {
            do {
                seen.append("\(name) then \(try await next() ?? "the end")")
            } catch let error as FirestoreErrorCode {
                seen.append("\(name) then " + (error.code == .permissionDenied ? "permission denied" : "error \(error.code)"))
            }
        }
        return seen
    }

    @Test func aRemovedMemberLosesTheRoomsListenersAtTheNextMessage() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential listen revocation test skipped")
            return
        }
        defer { reference.stop() }
        let project = "flint-revoke"
        let expected = try await Self.scenario(host: "127.0.0.1:\(reference.port)", project: project) { rules in
            try await reference.request("PUT", "/emulator/v1/projects/\(project):securityRules", ["rules": ["files": [["content": rules]]]]).0
        }
        #expect(expected == ["query m1", "document hi", "query then permission denied", "document then permission denied"])

        let server = try await FlintServer(engine: Engine(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0)).start()
        defer { server.stop() }
        let found = try await Self.scenario(host: "127.0.0.1:\(server.port)", project: project) { rules in
            try await RawHTTP.send(
                "PUT", "http://127.0.0.1:\(server.port)/emulator/v1/projects/\(project):securityRules",
                String(decoding: try JSONSerialization.data(withJSONObject: ["rules": ["files": [["content": rules]]]]), as: UTF8.self)
            ).status
        }
        #expect(found == expected)
    }
}
