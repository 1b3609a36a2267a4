import FlintFirestore
import Foundation
import Testing

// Seed 001, Vibes (music and friends): the guide's FirestoreService (threads, messages,
// reactions, friendships, vibestreak interactions, search, now playing) and StatsService, run
// against fixtures/001-vibes.json with rules-samples/seed-001-music-social/firestore.rules.
// Changes from the guide: ListeningStats' `[[String: Any]]` lists, which cannot be Codable,
// are typed structs; updateNowPlaying uses NowPlayingTrack's own field names.

struct UserProfile: Codable, Identifiable {
    @DocumentID var id: String?
    var uid: String
    var email: String
    var username: String
    var displayName: String
    var bio: String?
    var spotifyLinked: Bool
    var favoriteArtists: [String]
    var musicTasteTags: [String]
    var createdAt: Date
    var updatedAt: Date
}

struct Friendship: Codable, Identifiable {
    @DocumentID var id: String?
    var userId: String
    var friendId: String
    var status: FriendshipStatus
    var initiatorId: String
    var vibestreak: Int
    var lastInteractionDate: Date?
    var compatibilityScore: Double
    var sharedArtists: [String]
    var createdAt: Date
    var acceptedAt: Date?

    enum FriendshipStatus: String, Codable {
        case pending
        case accepted
    }
}

struct Message: Codable, Identifiable {
    @DocumentID var id: String?
    var threadId: String
    var senderId: String
    var recipientId: String
    var messageType: MessageType
    var content: String
    var caption: String?
    var rating: Int?
    var reactions: [String: String]
    var timestamp: Date
    var read: Bool

    enum MessageType: String, Codable {
        case text
        case song
    }
}

struct NowPlayingTrack: Codable {
    var spotifyTrackId: String
    var trackName: String
    var artistName: String
    var albumArt: String
    var isPlaying: Bool
    var timestamp: Date
    var progressMs: Int
    var durationMs: Int
}

struct ListeningStats: Codable {
    struct Artist: Codable { var name: String; var plays: Int }
    var userId: String
    var date: String
    var totalListeningTimeMs: Int
    var topArtists: [Artist]
    var songsSent: Int
    var songsReceived: Int
    var uniqueArtistsListened: Int
    var updatedAt: Date
}

final class VibesService: Sendable {
    private let db: Firestore

    init(db: Firestore) { self.db = db }

    func getOrCreateThread(userId1: String, userId2: String) async throws -> String {
        let threadQuery = try await db.collection("messageThreads")
            .whereField("userId1", in: [userId1, userId2])
            .whereField("userId2", in: [userId1, userId2])
            .getDocuments()
        if let existingThread = threadQuery.documents.first { return existingThread.documentID }
        let threadData: [String: Any] = [
            "userId1": userId1, "userId2": userId2, "lastMessageTimestamp": Timestamp(), "lastMessageContent": "",
            "lastMessageType": "text", "unreadCountUser1": 0, "unreadCountUser2": 0, "createdAt": Timestamp(),
        ]
        return try await db.collection("messageThreads").addDocument(data: threadData).documentID
    }

    func sendMessage(_ message: Message) async throws {
        let messageData = try Firestore.Encoder().encode(message)
        try await db.collection("messages").addDocument(data: messageData)
        try await updateThread(threadId: message.threadId, message: message)
        try await recordInteraction(senderId: message.senderId, recipientId: message.recipientId, type: message.messageType == .song ? "song" : "message")
    }

    private func updateThread(threadId: String, message: Message) async throws {
        let updateData: [String: Any] = [
            "lastMessageTimestamp": message.timestamp,
            "lastMessageContent": message.messageType == .song ? "🎵 Song" : message.content,
            "lastMessageType": message.messageType.rawValue,
            "unreadCountUser2": FieldValue.increment(Int64(1)),
        ]
        try await db.collection("messageThreads").document(threadId).updateData(updateData)
    }

    func listenToMessages(threadId: String, completion: @escaping @Sendable ([Message]?, (any Error)?) -> Void) -> ListenerRegistration {
        return db.collection("messages")
            .whereField("threadId", isEqualTo: threadId)
            .order(by: "timestamp", descending: false)
            .addSnapshotListener { snapshot, error in
                guard let documents = snapshot?.documents else { return completion(nil, error) }
                completion(documents.compactMap { try? $0.data(as: Message.self) }, nil)
            }
    }

    func markMessagesAsRead(threadId: String, userId: String) async throws {
        let messages = try await db.collection("messages")
            .whereField("threadId", isEqualTo: threadId)
            .whereField("recipientId", isEqualTo: userId)
            .whereField("read", isEqualTo: false)
            .getDocuments()
        let batch = db.batch()
        for document in messages.documents { batch.updateData(["read": true], forDocument: document.reference) }
        try await batch.commit()
    }

    func addReaction(messageId: String, userId: String, reaction: String) async throws {
        try await db.collection("messages").document(messageId).updateData(["reactions.\(userId)": reaction])
    }

    func sendFriendRequest(from userId: String, to friendId: String) async throws -> String {
        let friendshipData: [String: Any] = [
            "userId": userId, "friendId": friendId, "status": "pending", "initiatorId": userId, "vibestreak": 0,
            "compatibilityScore": 0, "sharedArtists": [], "createdAt": Timestamp(),
        ]
        return try await db.collection("friendships").addDocument(data: friendshipData).documentID
    }

    func acceptFriendRequest(friendshipId: String) async throws {
        try await db.collection("friendships").document(friendshipId).updateData(["status": "accepted", "acceptedAt": Timestamp()])
    }

    func getFriends(userId: String) async throws -> [Friendship] {
        let friendships = try await db.collection("friendships")
            .whereField("status", isEqualTo: "accepted")
            .whereFilter(Filter.orFilter([Filter.whereField("userId", isEqualTo: userId), Filter.whereField("friendId", isEqualTo: userId)]))
            .getDocuments()
        return friendships.documents.compactMap { try? $0.data(as: Friendship.self) }
    }

    func searchUsers(query: String, excludeUserId: String) async throws -> [UserProfile] {
        let users = try await db.collection("users")
            .whereField("username", isGreaterThanOrEqualTo: query)
            .whereField("username", isLessThan: query + "\u{f8ff}")
            .limit(to: 20)
            .getDocuments()
        return users.documents.compactMap { try? $0.data(as: UserProfile.self) }.filter { $0.uid != excludeUserId }
    }

    private func recordInteraction(senderId: String, recipientId: String, type: String) async throws {
        let friendships = try await db.collection("friendships")
            .whereField("status", isEqualTo: "accepted")
            .whereFilter(Filter.orFilter([
                Filter.andFilter([Filter.whereField("userId", isEqualTo: senderId), Filter.whereField("friendId", isEqualTo: recipientId)]),
                Filter.andFilter([Filter.whereField("userId", isEqualTo: recipientId), Filter.whereField("friendId", isEqualTo: senderId)]),
            ]))
            .getDocuments()
        guard let friendshipDoc = friendships.documents.first else { return }
        let interactionData: [String: Any] = [
            "friendshipId": friendshipDoc.documentID, "userId": senderId, "interactionType": type, "timestamp": Timestamp(),
        ]
        try await db.collection("interactions").addDocument(data: interactionData)
        try await friendshipDoc.reference.updateData(["lastInteractionDate": Timestamp()])
    }

    func listenToVibestreak(friendshipId: String, completion: @escaping @Sendable (Int) -> Void) -> ListenerRegistration {
        return db.collection("friendships").document(friendshipId).addSnapshotListener { snapshot, error in
            guard let data = snapshot?.data(), let streak = data["vibestreak"] as? Int else { return }
            completion(streak)
        }
    }

    func updateNowPlaying(userId: String, track: NowPlayingTrack?) async throws {
        if let track = track {
            let trackData: [String: Any] = [
                "spotifyTrackId": track.spotifyTrackId, "trackName": track.trackName, "artistName": track.artistName,
                "albumArt": track.albumArt, "isPlaying": true, "timestamp": Timestamp(), "progressMs": track.progressMs,
                "durationMs": track.durationMs,
            ]
            try await db.collection("nowPlaying").document(userId).setData(trackData)
        } else {
            try await db.collection("nowPlaying").document(userId).delete()
        }
    }

    func listenToFriendsNowPlaying(friendIds: [String], completion: @escaping @Sendable ([String: NowPlayingTrack]) -> Void) -> ListenerRegistration {
        return db.collection("nowPlaying")
            .whereField(FieldPath.documentID(), in: friendIds)
            .addSnapshotListener { snapshot, error in
                guard let documents = snapshot?.documents else { return }
                var nowPlaying: [String: NowPlayingTrack] = [:]
                for doc in documents {
                    if let track = try? doc.data(as: NowPlayingTrack.self) { nowPlaying[doc.documentID] = track }
                }
                completion(nowPlaying)
            }
    }

    static func formatDate(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd"
        return f.string(from: date)
    }

    func saveListeningStats(userId: String, date: Date, stats: ListeningStats) async throws {
        let docId = "\(userId)__\(Self.formatDate(date))"
        try await db.collection("listeningStats").document(docId).setData(from: stats, merge: true)
    }

    func getWeeklyStats(userId: String, weekStart: Date) async throws -> [ListeningStats] {
        let weekEnd = Calendar(identifier: .gregorian).date(byAdding: .day, value: 7, to: weekStart)!
        let stats = try await db.collection("listeningStats")
            .whereField("userId", isEqualTo: userId)
            .whereField("date", isGreaterThanOrEqualTo: Self.formatDate(weekStart))
            .whereField("date", isLessThan: Self.formatDate(weekEnd))
            .getDocuments()
        return stats.documents.compactMap { try? $0.data(as: ListeningStats.self) }
    }
}

@Suite struct VibesScenarioTests {
    static let fixture = "001-vibes"
    static let rules = "seed-001-music-social/firestore.rules"

    @Test(arguments: Scenario.Backend.selected) func threadLookupWithTwoInFiltersIsDeniedByTheRules(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let alice = VibesService(db: s.user("uid_alice"))
            let denied = await #expect(throws: FirestoreErrorCode.self) { _ = try await alice.getOrCreateThread(userId1: "uid_alice", userId2: "uid_bob") }
            #expect(denied?.code == .permissionDenied)
            // Admin code (no rules) finds the existing thread with the same query.
            let found = try await VibesService(db: s.admin).getOrCreateThread(userId1: "uid_alice", userId2: "uid_bob")
            #expect(found == "thread_0")
            // The fix from docs/swift-client.md: one equality query per ordering of the pair.
            let mine = try await s.user("uid_alice").collection("messageThreads")
                .whereField("userId1", isEqualTo: "uid_alice").whereField("userId2", isEqualTo: "uid_bob").getDocuments()
            #expect(mine.documents.map(\.documentID) == ["thread_0"])
        }
    }

    @Test(arguments: Scenario.Backend.selected) func messagesFlowWithReactionsReadsAndInteractions(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let alice = VibesService(db: s.user("uid_alice"))
            let bob = VibesService(db: s.user("uid_bob"))

            // The guide's thread listener is refused: the rule needs sender or recipient.
            let refused = Inbox<String>()
            let guideListener = bob.listenToMessages(threadId: "thread_0") { _, error in
                refused.put((error as? NSError)?.code == FirestoreErrorCode.permissionDenied.rawValue ? "denied" : "other")
            }
            defer { guideListener.remove() }
            #expect(try await refused.next() == "denied")

            // Bob's inbox for the thread, with the recipient constraint the rule needs.
            let inbox = Inbox<[Message]>()
            let listener = s.user("uid_bob").collection("messages")
                .whereField("threadId", isEqualTo: "thread_0").whereField("recipientId", isEqualTo: "uid_bob")
                .order(by: "timestamp").addSnapshotListener { snapshot, _ in
                    if let docs = snapshot?.documents { inbox.put(docs.compactMap { try? $0.data(as: Message.self) }) }
                }
            defer { listener.remove() }
            let initial = try await inbox.next()
            let expected = s.fixture.collection("messages").filter {
                $0.fields["threadId"] as? String == "thread_0" && $0.fields["recipientId"] as? String == "uid_bob"
            }
            #expect(initial.count == expected.count)

            let streak = s.fixture.collection("interactions").filter { $0.fields["friendshipId"] as? String == "fr_00" }.count
            let message = Message(
                threadId: "thread_0", senderId: "uid_alice", recipientId: "uid_bob", messageType: .song, content: "spotify:track:99",
                caption: "new one", rating: 5, reactions: [:], timestamp: Date(), read: false)
            try await alice.sendMessage(message)
            let after = try await inbox.next { $0.count == initial.count + 1 }
            let sent = try #require(after.last)
            #expect(sent.content == "spotify:track:99" && sent.messageType == .song && sent.rating == 5 && sent.read == false)
            #expect(sent.id != nil)

            // updateThread incremented the unread count; recordInteraction found fr_00 through OR/AND.
            let thread = try await s.admin.document("messageThreads/thread_0").getDocument()
            let unreadBefore = s.fixture.document("messageThreads/thread_0")?["unreadCountUser2"] as? Int ?? 0
            #expect(thread.get("unreadCountUser2") as? Int == unreadBefore + 1)
            #expect(thread.get("lastMessageContent") as? String == "🎵 Song")
            let interactions = try await s.admin.collection("interactions").whereField("friendshipId", isEqualTo: "fr_00").getDocuments()
            #expect(interactions.count == streak + 1)
            let friendship = try await s.admin.document("friendships/fr_00").getDocument(as: Friendship.self)
            #expect(abs((friendship.lastInteractionDate ?? .distantPast).timeIntervalSinceNow) < 60)

            // Bob reacts with a dotted path, then reads the thread.
            try await bob.addReaction(messageId: sent.id!, userId: "uid_bob", reaction: "fire")
            let reacted = try await inbox.next { $0.last?.reactions["uid_bob"] == "fire" }
            #expect(reacted.last?.reactions == ["uid_bob": "fire"])
            try await bob.markMessagesAsRead(threadId: "thread_0", userId: "uid_bob")
            let read = try await inbox.next { $0.allSatisfy(\.read) }
            #expect(read.count == initial.count + 1)
            // Carol is not in the conversation: she cannot react.
            await #expect(throws: FirestoreErrorCode.self) {
                try await VibesService(db: s.user("uid_carol")).addReaction(messageId: sent.id!, userId: "uid_carol", reaction: "meh")
            }
        }
    }

    @Test(arguments: Scenario.Backend.selected) func friendsSearchAndFriendRequests(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let alice = VibesService(db: s.user("uid_alice"))
            let friends = try await alice.getFriends(userId: "uid_alice")
            let expected = s.fixture.collection("friendships").filter {
                $0.fields["status"] as? String == "accepted"
                    && ($0.fields["userId"] as? String == "uid_alice" || $0.fields["friendId"] as? String == "uid_alice")
            }
            #expect(Set(friends.compactMap(\.id)) == Set(expected.map(\.id)))
            #expect(friends.allSatisfy { $0.status == .accepted })

            // Prefix search: usernames in ["b", "b\u{f8ff}").
            let found = try await alice.searchUsers(query: "b", excludeUserId: "uid_alice")
            let names = s.fixture.collection("users").compactMap { $0.fields["username"] as? String }.filter { $0.hasPrefix("b") }
            #expect(found.map(\.username) == names.sorted())
            #expect(try await alice.searchUsers(query: "a", excludeUserId: "uid_alice").isEmpty)

            // Erin asks Alice; Alice accepts; the streak listener sees the document.
            let erin = VibesService(db: s.user("uid_erin"))
            let request = try await erin.sendFriendRequest(from: "uid_erin", to: "uid_alice")
            await #expect(throws: FirestoreErrorCode.self) { _ = try await erin.sendFriendRequest(from: "uid_alice", to: "uid_erin") }
            try await alice.acceptFriendRequest(friendshipId: request)
            #expect(try await alice.getFriends(userId: "uid_alice").count == expected.count + 1)
            let streaks = Inbox<Int>()
            let listener = alice.listenToVibestreak(friendshipId: request) { streaks.put($0) }
            defer { listener.remove() }
            #expect(try await streaks.next() == 0)
            try await s.admin.document("friendships/\(request)").updateData(["vibestreak": FieldValue.increment(Int64(3))])
            #expect(try await streaks.next() == 3)
        }
    }

    @Test(arguments: Scenario.Backend.selected) func nowPlayingAndStatsIdsMatchedByRules(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let alice = VibesService(db: s.user("uid_alice"))
            let bob = VibesService(db: s.user("uid_bob"))
            let updates = Inbox<[String: NowPlayingTrack]>()
            let listener = alice.listenToFriendsNowPlaying(friendIds: ["uid_bob", "uid_carol", "uid_judy"]) { updates.put($0) }
            defer { listener.remove() }
            let initial = try await updates.next()
            let present = ["uid_bob", "uid_carol", "uid_judy"].filter { s.fixture.document("nowPlaying/\($0)") != nil }
            #expect(Set(initial.keys) == Set(present))
            let track = NowPlayingTrack(
                spotifyTrackId: "trk_9", trackName: "Track 9", artistName: "Artist Z", albumArt: "", isPlaying: true, timestamp: Date(),
                progressMs: 1000, durationMs: 200_000)
            try await bob.updateNowPlaying(userId: "uid_bob", track: track)
            #expect(try await updates.next { $0["uid_bob"]?.trackName == "Track 9" }["uid_bob"]?.isPlaying == true)
            await #expect(throws: FirestoreErrorCode.self) { try await alice.updateNowPlaying(userId: "uid_bob", track: nil) }
            try await bob.updateNowPlaying(userId: "uid_bob", track: nil)
            #expect(try await updates.next { $0["uid_bob"] == nil }.keys.contains("uid_bob") == false)

            // listeningStats ids must start with the writer's uid.
            let day = ISO8601DateFormatter().date(from: "2026-01-06T12:00:00Z")!
            let stats = ListeningStats(
                userId: "uid_alice", date: "2026-01-06", totalListeningTimeMs: 120_000, topArtists: [.init(name: "Artist A", plays: 4)],
                songsSent: 1, songsReceived: 0, uniqueArtistsListened: 2, updatedAt: Date())
            try await alice.saveListeningStats(userId: "uid_alice", date: day, stats: stats)
            let denied = await #expect(throws: FirestoreErrorCode.self) { try await bob.saveListeningStats(userId: "uid_alice", date: day, stats: stats) }
            #expect(denied?.code == .permissionDenied)
            let weekStart = ISO8601DateFormatter().date(from: "2026-01-05T00:00:00Z")!
            let week = try await alice.getWeeklyStats(userId: "uid_alice", weekStart: weekStart)
            let expected = s.fixture.collection("listeningStats").filter {
                $0.fields["userId"] as? String == "uid_alice" && ($0.fields["date"] as! String) >= "2026-01-05" && ($0.fields["date"] as! String) < "2026-01-12"
            }.count + (s.fixture.document("listeningStats/uid_alice__2026-01-06") == nil ? 1 : 0)
            #expect(week.count == expected)
            #expect(week.first { $0.date == "2026-01-06" }?.topArtists.first?.plays == 4)
        }
    }
}
