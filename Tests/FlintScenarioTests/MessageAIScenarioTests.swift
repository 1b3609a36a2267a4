import FlintFirestore
import Foundation
import Testing

// Seed 004, MessageAI (chat): the guide's conversation queries (arrayContains, order, limit),
// findOrCreateConversation, typing indicators and blocking with arrayUnion/arrayRemove, message
// paging, and its checkBlockOnMessage onCreate function, run against
// fixtures/004-messageai.json. The guide publishes no security rules, so none are loaded. Its
// services are described rather than listed; these ports follow the described Firestore calls.

final class ChatService: Sendable {
    let db: Firestore

    init(db: Firestore) { self.db = db }

    func listenToConversations(userID: String, _ update: @escaping @Sendable (QuerySnapshot) -> Void) -> ListenerRegistration {
        db.collection("conversations")
            .whereField("participantIDs", arrayContains: userID)
            .order(by: "lastMessageTime", descending: true)
            .limit(to: 20)
            .addSnapshotListener { snapshot, error in
                if let error = error {
                    print("Listener error: \(error)")
                    return
                }
                guard let snapshot = snapshot else { return }
                update(snapshot)
            }
    }

    func findOrCreateConversation(currentUserID: String, otherUserID: String) async throws -> String {
        let existingConversations = try await db.collection("conversations")
            .whereField("isGroup", isEqualTo: false)
            .whereField("participantIDs", arrayContains: currentUserID)
            .getDocuments()
        for doc in existingConversations.documents {
            let participantIDs = doc.data()["participantIDs"] as? [String]
            if participantIDs?.contains(otherUserID) == true { return doc.documentID }
        }
        let ref = db.collection("conversations").document()
        try await ref.setData([
            "isGroup": false, "participantIDs": [currentUserID, otherUserID], "unreadBy": [], "deletedBy": [], "typingUsers": [],
            "lastMessageTime": FieldValue.serverTimestamp(),
        ])
        return ref.documentID
    }

    func sendMessage(conversationID: String, senderID: String, content: String) async throws -> String {
        let conversation = db.collection("conversations").document(conversationID)
        let ref = conversation.collection("messages").document()
        let batch = db.batch()
        batch.setData([
            "conversationID": conversationID, "senderID": senderID, "content": content, "timestamp": FieldValue.serverTimestamp(),
            "statusRaw": "sent", "type": "text", "readBy": [senderID], "reactions": [String: Any](), "deletedFor": [],
            "deletedForEveryone": false,
        ], forDocument: ref)
        batch.updateData([
            "lastMessage": content, "lastMessageTime": FieldValue.serverTimestamp(), "lastSenderID": senderID, "lastMessageID": ref.documentID,
            "typingUsers": FieldValue.arrayRemove([senderID]),
        ], forDocument: conversation)
        try await batch.commit()
        return ref.documentID
    }

    func startTyping(conversationID: String, userID: String) async throws {
        try await db.collection("conversations").document(conversationID).updateData(["typingUsers": FieldValue.arrayUnion([userID])])
    }

    func stopTyping(conversationID: String, userID: String) async throws {
        try await db.collection("conversations").document(conversationID).updateData(["typingUsers": FieldValue.arrayRemove([userID])])
    }

    func blockUser(blockerID: String, blockedID: String) async throws {
        try await db.collection("users").document(blockerID).updateData([
            "blockedUsers": FieldValue.arrayUnion([blockedID]), "contacts": FieldValue.arrayRemove([blockedID]),
        ])
    }

    func unblockUser(blockerID: String, blockedID: String) async throws {
        try await db.collection("users").document(blockerID).updateData(["blockedUsers": FieldValue.arrayRemove([blockedID])])
    }

    func isBlocked(blockerID: String, blockedID: String) async throws -> Bool {
        let user = try await db.collection("users").document(blockerID).getDocument()
        return (user.data()?["blockedUsers"] as? [String] ?? []).contains(blockedID)
    }

    func loadMessages(conversationID: String, after lastDocument: DocumentSnapshot?, limit: Int) async throws -> QuerySnapshot {
        var query = db.collection("conversations").document(conversationID).collection("messages")
            .order(by: "timestamp", descending: true)
        if let lastDocument { query = query.start(afterDocument: lastDocument) }
        return try await query.limit(to: limit).getDocuments()
    }
}

enum MessageAIFunctions {
    /// checkBlockOnMessage: a message from someone the recipient blocked is deleted and
    /// answered with a system message.
    static func install(_ triggers: DocumentTriggers) {
        let admin = triggers.firestore
        triggers.document("conversations/{conversationId}/messages/{messageId}").onCreate { snap, context in
            let message = snap.data()
            guard let senderID = message["senderID"] as? String, senderID != "system" else { return }
            let conversationId = context.params["conversationId"]!
            let conversation = try await admin.collection("conversations").document(conversationId).getDocument()
            let participants = conversation.data()?["participantIDs"] as? [String] ?? []
            guard let recipientID = participants.first(where: { $0 != senderID }) else { return }
            let recipient = try await admin.collection("users").document(recipientID).getDocument()
            if (recipient.data()?["blockedUsers"] as? [String] ?? []).contains(senderID) {
                try await snap.reference.delete()
                try await admin.collection("conversations").document(conversationId).collection("messages").addDocument(data: [
                    "conversationID": conversationId, "senderID": "system", "content": "This user has blocked you",
                    "timestamp": FieldValue.serverTimestamp(), "type": "text",
                ])
            }
        }
    }
}

@Suite struct MessageAIScenarioTests {
    static let fixture = "004-messageai"

    func ordered(_ s: Scenario, for user: String) -> [String] {
        s.fixture.collection("conversations")
            .filter { ($0.fields["participantIDs"] as? [Any] ?? []).contains { $0 as? String == user } }
            .sorted { ($0.fields["lastMessageTime"] as! Date) > ($1.fields["lastMessageTime"] as! Date) }
            .map(\.id)
    }

    @Test(arguments: Scenario.Backend.selected) func theConversationListFollowsTheLatestMessage(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: nil, backend: backend) { s in
            let ana = ChatService(db: s.user("mai_ana"))
            let snapshots = Inbox<QuerySnapshot>()
            let listener = ana.listenToConversations(userID: "mai_ana") { snapshots.put($0) }
            defer { listener.remove() }
            let expected = ordered(s, for: "mai_ana")
            let first = try await snapshots.next()
            #expect(first.documents.map(\.documentID) == expected)

            // A message in the oldest conversation moves it to the top.
            let oldest = try #require(expected.last)
            _ = try await ana.sendMessage(conversationID: oldest, senderID: "mai_ana", content: "hello again")
            let moved = try await snapshots.next()
            #expect(moved.documents.map(\.documentID) == [oldest] + expected.dropLast())
            let change = try #require(moved.documentChanges.first)
            #expect(moved.documentChanges.count == 1)
            #expect(change.type == .modified && change.oldIndex == UInt(expected.count - 1) && change.newIndex == 0)
            #expect(change.document.data()["lastMessage"] as? String == "hello again")

            // findOrCreateConversation finds the pair's chat or starts one, which joins the list.
            #expect(try await ana.findOrCreateConversation(currentUserID: "mai_ana", otherUserID: "mai_ben") == "conv_0")
            let created = try await ana.findOrCreateConversation(currentUserID: "mai_ana", otherUserID: "mai_eli")
            #expect(created != "conv_0")
            let joined = try await snapshots.next { $0.documents.contains { $0.documentID == created } }
            #expect(joined.documents.first?.documentID == created)
            #expect(try await ana.findOrCreateConversation(currentUserID: "mai_eli", otherUserID: "mai_ana") == created)
        }
    }

    @Test(arguments: Scenario.Backend.selected) func typingAndBlockingUseArrayUnionAndRemove(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: nil, backend: backend) { s in
            let ben = ChatService(db: s.user("mai_ben"))
            let conversation = s.user("mai_ben").collection("conversations").document("conv_0")
            let typing = Inbox<[String]>()
            let listener = conversation.addSnapshotListener { snapshot, _ in typing.put(snapshot?.data()?["typingUsers"] as? [String] ?? []) }
            defer { listener.remove() }
            #expect(try await typing.next() == ["mai_ana"])
            try await ben.startTyping(conversationID: "conv_0", userID: "mai_ben")
            #expect(try await typing.next() == ["mai_ana", "mai_ben"])
            try await ben.startTyping(conversationID: "conv_0", userID: "mai_ben")  // a union adds nothing twice
            try await ben.stopTyping(conversationID: "conv_0", userID: "mai_ana")
            #expect(try await typing.next() == ["mai_ben"])
            _ = try await ben.sendMessage(conversationID: "conv_0", senderID: "mai_ben", content: "done typing")
            #expect(try await typing.next() == [])

            #expect(try await ben.isBlocked(blockerID: "mai_ana", blockedID: "mai_gus"))
            try await ben.blockUser(blockerID: "mai_ben", blockedID: "mai_cai")
            try await ben.blockUser(blockerID: "mai_ben", blockedID: "mai_cai")
            let user = try await s.admin.document("users/mai_ben").getDocument()
            #expect(user.get("blockedUsers") as? [String] == ["mai_cai"])
            #expect(user.get("contacts") as? [String] == [])
            try await ben.unblockUser(blockerID: "mai_ben", blockedID: "mai_cai")
            #expect(try await ben.isBlocked(blockerID: "mai_ben", blockedID: "mai_cai") == false)
        }
    }

    @Test(arguments: Scenario.Backend.selected) func aBlockedSendersMessageIsReplacedByTheFunction(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: nil, backend: backend) { s in
            MessageAIFunctions.install(s.triggers)
            let gus = ChatService(db: s.user("mai_gus"))
            let conversation = try await gus.findOrCreateConversation(currentUserID: "mai_gus", otherUserID: "mai_ana")
            let seen = Inbox<[String]>()
            let listener = s.user("mai_ana").collection("conversations").document(conversation).collection("messages")
                .order(by: "timestamp").addSnapshotListener { snapshot, _ in
                    if let snapshot { seen.put(snapshot.documents.map { "\($0.data()["senderID"] ?? ""): \($0.data()["content"] ?? "")" }) }
                }
            defer { listener.remove() }
            #expect(try await seen.next() == [])
            _ = try await gus.sendMessage(conversationID: conversation, senderID: "mai_gus", content: "hey")
            await s.triggers.settle()
            #expect(s.triggers.failures.isEmpty, "\(s.triggers.failures)")
            #expect(try await seen.next { $0.contains("system: This user has blocked you") } == ["system: This user has blocked you"])

            // Ben is not blocked by Ana: his message stays.
            _ = try await ChatService(db: s.user("mai_ben")).sendMessage(conversationID: "conv_0", senderID: "mai_ben", content: "still here")
            await s.triggers.settle()
            let conv0 = try await s.admin.collection("conversations/conv_0/messages").whereField("content", isEqualTo: "still here").getDocuments()
            #expect(conv0.count == 1)
        }
    }

    @Test(arguments: Scenario.Backend.selected) func messagesPageNewestFirst(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: nil, backend: backend) { s in
            let chat = ChatService(db: s.user("mai_ana"))
            let expected = s.fixture.collection("conversations/conv_3/messages")
                .sorted { ($0.fields["timestamp"] as! Date, $0.id) > ($1.fields["timestamp"] as! Date, $1.id) }.map(\.id)
            var ids: [String] = []
            var last: DocumentSnapshot?
            while true {
                let page = try await chat.loadMessages(conversationID: "conv_3", after: last, limit: 3)
                ids += page.documents.map(\.documentID)
                guard page.count == 3 else { break }
                last = page.documents.last
            }
            #expect(!expected.isEmpty)
            #expect(ids == expected)
        }
    }
}
