import FlintFirestore
import Foundation
import Testing

// Seed 003, Halloo (elderly care): the guide's nested-collection service (CollectionPath,
// profiles keyed by phone number, habits and messages under them), its cascade delete, batch
// and transaction patterns, listeners with documentChanges, cursor paging, and the SMS webhook
// function's collection-group lookup, run against fixtures/003-halloo.json with
// rules-samples/seed-003-elder-care/firestore.rules. The guide names its habit model `Task`,
// which would hide Swift's `Task`; it is `Habit` here. The models are not in the guide and
// follow the fixture's fields.

private enum CollectionPath {
    case users
    case userProfiles(userId: String)
    case profileHabits(userId: String, profileId: String)
    case profileMessages(userId: String, profileId: String)
    case userGalleryEvents(userId: String)

    var path: String {
        switch self {
        case .users: return "users"
        case .userProfiles(let userId): return "users/\(userId)/profiles"
        case .profileHabits(let userId, let profileId): return "users/\(userId)/profiles/\(profileId)/habits"
        case .profileMessages(let userId, let profileId): return "users/\(userId)/profiles/\(profileId)/messages"
        case .userGalleryEvents(let userId): return "users/\(userId)/gallery_events"
        }
    }
}

struct ElderlyProfile: Codable, Equatable {
    var id: String
    var userId: String
    var name: String
    var phoneNumber: String
    var relationship: String
    var status: String
    var timeZone: String
    var createdAt: Date
    var updatedAt: Date
}

struct Habit: Codable, Equatable {
    var id: String
    var userId: String
    var profileId: String
    var title: String
    var category: String
    var frequency: String
    var scheduledTime: Date
    var nextScheduledDate: Date?
    var status: String
    var requiresPhoto: Bool
    var createdAt: Date
}

struct SMSResponse: Codable {
    var id: String
    var userId: String
    var profileId: String
    var taskId: String?
    var textResponse: String?
    var photoURL: String?
    var isCompleted: Bool
    var receivedAt: Date
}

enum DatabaseError: Error, Equatable { case networkUnavailable, permissionDenied, documentNotFound, documentAlreadyExists, batchSizeExceeded, other }

extension String {
    func normalizedE164() -> String {
        var cleaned = self.filter { $0.isNumber }
        if !cleaned.hasPrefix("1") { cleaned = "1" + cleaned }
        return "+\(cleaned)"
    }
}

final class HallooService: Sendable {
    let db: Firestore

    init(db: Firestore) { self.db = db }

    func fetchProfiles(userId: String) async throws -> [ElderlyProfile] {
        let snapshot = try await db.collection(CollectionPath.userProfiles(userId: userId).path).getDocuments()
        return snapshot.documents.compactMap { doc in try? doc.data(as: ElderlyProfile.self) }
    }

    func saveProfile(_ profile: ElderlyProfile, userId: String) async throws {
        do {
            try await db.collection(CollectionPath.userProfiles(userId: userId).path).document(profile.id)
                .setData(try Firestore.Encoder().encode(profile))
        } catch let error as NSError {
            switch error.code {
            case FirestoreErrorCode.unavailable.rawValue: throw DatabaseError.networkUnavailable
            case FirestoreErrorCode.permissionDenied.rawValue: throw DatabaseError.permissionDenied
            case FirestoreErrorCode.notFound.rawValue: throw DatabaseError.documentNotFound
            case FirestoreErrorCode.alreadyExists.rawValue: throw DatabaseError.documentAlreadyExists
            default: throw DatabaseError.other
            }
        }
    }

    func fetchHabits(userId: String, profileId: String) async throws -> [Habit] {
        let snapshot = try await db.collection(CollectionPath.profileHabits(userId: userId, profileId: profileId).path)
            .whereField("status", isEqualTo: "active")
            .order(by: "scheduledTime")
            .getDocuments()
        return snapshot.documents.compactMap { doc in try? doc.data(as: Habit.self) }
    }

    func fetchAllUserHabits(userId: String) async throws -> [Habit] {
        var allHabits: [Habit] = []
        for profile in try await fetchProfiles(userId: userId) {
            allHabits.append(contentsOf: try await fetchHabits(userId: userId, profileId: profile.id))
        }
        return allHabits
    }

    func deleteProfile(_ profileId: String, userId: String) async throws {
        let profileRef = db.collection(CollectionPath.userProfiles(userId: userId).path).document(profileId)
        try await deleteSubcollection(parent: profileRef, collectionName: "habits")
        try await deleteSubcollection(parent: profileRef, collectionName: "messages")
        try await profileRef.delete()
        try await db.collection("users").document(userId).updateData([
            "profileCount": FieldValue.increment(Int64(-1)), "updatedAt": FieldValue.serverTimestamp(),
        ])
    }

    private func deleteSubcollection(parent: DocumentReference, collectionName: String) async throws {
        let snapshot = try await parent.collection(collectionName).limit(to: 500).getDocuments()
        guard !snapshot.documents.isEmpty else { return }
        let batch = db.batch()
        for document in snapshot.documents { batch.deleteDocument(document.reference) }
        try await batch.commit()
        if snapshot.documents.count == 500 { try await deleteSubcollection(parent: parent, collectionName: collectionName) }
    }

    func createHabitsBatch(habits: [Habit], userId: String, profileId: String) async throws {
        guard habits.count <= 500 else { throw DatabaseError.batchSizeExceeded }
        let batch = db.batch()
        for habit in habits {
            let habitRef = db.collection(CollectionPath.profileHabits(userId: userId, profileId: profileId).path).document(habit.id)
            batch.setData(try Firestore.Encoder().encode(habit), forDocument: habitRef)
        }
        try await batch.commit()
    }

    func createProfileWithCountUpdate(profile: ElderlyProfile, userId: String) async throws {
        let db = self.db
        try await db.runTransaction { transaction, errorPointer in
            let userRef = db.collection("users").document(userId)
            let userDoc = try transaction.getDocument(userRef)
            guard let currentCount = userDoc.data()?["profileCount"] as? Int else {
                errorPointer?.pointee = NSError(domain: "DatabaseError", code: -1, userInfo: [NSLocalizedDescriptionKey: "Profile count not found"])
                return nil
            }
            guard currentCount < 4 else {
                errorPointer?.pointee = NSError(domain: "DatabaseError", code: -1, userInfo: [NSLocalizedDescriptionKey: "Maximum 4 profiles allowed"])
                return nil
            }
            let profileRef = db.collection(CollectionPath.userProfiles(userId: userId).path).document(profile.id)
            transaction.setData(try Firestore.Encoder().encode(profile), forDocument: profileRef)
            transaction.updateData(["profileCount": currentCount + 1, "updatedAt": FieldValue.serverTimestamp()], forDocument: userRef)
            return nil
        }
    }

    func completeHabit(userId: String, profileId: String, habitId: String) async throws {
        let db = self.db
        try await db.runTransaction { transaction, errorPointer in
            let habitRef = db.collection(CollectionPath.profileHabits(userId: userId, profileId: profileId).path).document(habitId)
            transaction.updateData(["status": "completed"], forDocument: habitRef)
            let profileRef = db.collection(CollectionPath.userProfiles(userId: userId).path).document(profileId)
            transaction.updateData(["completedHabitCount": FieldValue.increment(Int64(1))], forDocument: profileRef)
            return nil
        }
    }

    func observeHabits(userId: String, profileId: String, _ handle: @escaping @Sendable (DocumentChangeType, Habit, UInt, UInt) -> Void) -> ListenerRegistration {
        db.collection(CollectionPath.profileHabits(userId: userId, profileId: profileId).path)
            .addSnapshotListener { snapshot, error in
                guard let snapshot = snapshot else { return }
                snapshot.documentChanges.forEach { change in
                    guard let habit = try? change.document.data(as: Habit.self) else { return }
                    handle(change.type, habit, change.oldIndex, change.newIndex)
                }
            }
    }

    func fetchMessages(userId: String, profileId: String, limit: Int = 20, lastDocument: DocumentSnapshot? = nil) async throws
        -> ([SMSResponse], DocumentSnapshot?)
    {
        var query = db.collection(CollectionPath.profileMessages(userId: userId, profileId: profileId).path)
            .order(by: "receivedAt", descending: true)
            .limit(to: limit)
        if let lastDoc = lastDocument { query = query.start(afterDocument: lastDoc) }
        let snapshot = try await query.getDocuments()
        return (snapshot.documents.compactMap { doc in try? doc.data(as: SMSResponse.self) }, snapshot.documents.last)
    }
}

/// processSMSResponse: the webhook finds the profile by phone across every user.
enum HallooFunctions {
    static func processSMSResponse(_ admin: Firestore, from: String, body: String) async throws -> String? {
        let profileId = from.normalizedE164()
        let profilesSnapshot = try await admin.collectionGroup("profiles").whereField("phoneNumber", isEqualTo: profileId).limit(to: 1).getDocuments()
        guard let profileDoc = profilesSnapshot.documents.first else { return nil }
        let userId = profileDoc.reference.parent.parent!.documentID
        let messageRef = admin.collection("users/\(userId)/profiles/\(profileDoc.documentID)/messages").document()
        try await messageRef.setData([
            "id": messageRef.documentID, "userId": userId, "profileId": profileDoc.documentID, "taskId": NSNull(), "textResponse": body,
            "photoURL": NSNull(), "isCompleted": true, "receivedAt": FieldValue.serverTimestamp(),
        ])
        return messageRef.path
    }
}

@Suite struct HallooScenarioTests {
    static let fixture = "003-halloo"
    static let rules = "seed-003-elder-care/firestore.rules"

    func habit(_ i: Int, _ profileId: String, status: String = "active") -> Habit {
        Habit(
            id: String(format: "h%05d", i), userId: "family_0", profileId: profileId, title: "Walk \(i)", category: "exercise", frequency: "daily",
            scheduledTime: Date(timeIntervalSince1970: 1_767_600_000 + Double(i) * 60), nextScheduledDate: nil, status: status, requiresPhoto: false,
            createdAt: Date())
    }

    @Test(arguments: Scenario.Backend.selected) func nestedProfilesAndActiveHabits(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let service = HallooService(db: s.user("family_0"))
            let profiles = try await service.fetchProfiles(userId: "family_0")
            #expect(profiles.map(\.id).sorted() == s.fixture.collection("users/family_0/profiles").map(\.id).sorted())
            let habits = try await service.fetchAllUserHabits(userId: "family_0")
            var expected: [String] = []
            for p in profiles.sorted(by: { $0.id < $1.id }) {
                expected += s.fixture.collection("users/family_0/profiles/\(p.id)/habits").filter { $0.fields["status"] as? String == "active" }
                    .sorted { ($0.fields["scheduledTime"] as! Date, $0.id) < ($1.fields["scheduledTime"] as! Date, $1.id) }.map(\.id)
            }
            #expect(habits.map(\.id) == expected)
            // Another family sees nothing of it.
            await #expect(throws: FirestoreErrorCode.self) { _ = try await HallooService(db: s.user("family_1")).fetchProfiles(userId: "family_0") }
            let profile = ElderlyProfile(
                id: "5551234567".normalizedE164(), userId: "family_0", name: "Intruder", phoneNumber: "+15551234567", relationship: "x",
                status: "pending", timeZone: "UTC", createdAt: Date(), updatedAt: Date())
            await #expect(throws: DatabaseError.permissionDenied) { try await HallooService(db: s.user("family_1")).saveProfile(profile, userId: "family_0") }
        }
    }

    @Test(arguments: Scenario.Backend.selected) func theProfileLimitIsEnforcedInATransaction(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let service = HallooService(db: s.user("family_0"))
            let start = s.fixture.document("users/family_0")!["profileCount"] as! Int
            #expect(start == 2)
            func profile(_ phone: String) -> ElderlyProfile {
                ElderlyProfile(
                    id: phone.normalizedE164(), userId: "family_0", name: "Elder \(phone)", phoneNumber: phone.normalizedE164(), relationship: "Aunt",
                    status: "pending", timeZone: "UTC", createdAt: Date(), updatedAt: Date())
            }
            // Two created at once: both land, the count is exact.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for phone in ["555 000 1111", "555 000 2222"] {
                    group.addTask { try await service.createProfileWithCountUpdate(profile: profile(phone), userId: "family_0") }
                }
                try await group.waitForAll()
            }
            #expect(try await s.admin.document("users/family_0").getDocument().get("profileCount") as? Int == 4)
            // The fifth is refused by the block, and nothing is written.
            let error = await #expect(throws: NSError.self) { try await service.createProfileWithCountUpdate(profile: profile("555 000 3333"), userId: "family_0") }
            #expect(error?.localizedDescription == "Maximum 4 profiles allowed")
            #expect(try await service.fetchProfiles(userId: "family_0").count == 4)
            #expect(try await s.admin.document("users/family_0/profiles/+15550003333").getDocument().exists == false)
        }
    }

    @Test(arguments: Scenario.Backend.selected) func cascadeDeleteRemovesMoreThan500NestedDocuments(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let service = HallooService(db: s.user("family_0"))
            let profileId = "+155500000000"
            let habitsPath = "users/family_0/profiles/\(profileId)/habits"
            let seeded = s.fixture.collection(habitsPath).count
            try await service.createHabitsBatch(habits: (0..<500).map { habit($0, profileId) }, userId: "family_0", profileId: profileId)
            try await service.createHabitsBatch(habits: (500..<620).map { habit($0, profileId) }, userId: "family_0", profileId: profileId)
            await #expect(throws: DatabaseError.batchSizeExceeded) {
                try await service.createHabitsBatch(habits: (0..<501).map { habit($0, profileId) }, userId: "family_0", profileId: profileId)
            }
            let counted = try await s.admin.collection(habitsPath).count.getAggregation(source: .server)
            #expect(counted.count.intValue == seeded + 620)

            try await service.deleteProfile(profileId, userId: "family_0")
            #expect(try await s.admin.collection(habitsPath).count.getAggregation(source: .server).count == 0)
            #expect(try await s.admin.collection("users/family_0/profiles/\(profileId)/messages").getDocuments().isEmpty)
            #expect(try await s.admin.document("users/family_0/profiles/\(profileId)").getDocument().exists == false)
            #expect(try await s.admin.document("users/family_0").getDocument().get("profileCount") as? Int == 1)
            // The other profile's data is untouched.
            let other = s.fixture.collection("users/family_0/profiles").map(\.id).first { $0 != profileId }!
            #expect(try await s.admin.collection("users/family_0/profiles/\(other)/habits").getDocuments().count
                == s.fixture.collection("users/family_0/profiles/\(other)/habits").count)
        }
    }

    @Test(arguments: Scenario.Backend.selected) func smsWebhookFindsTheProfileByPhoneAndMessagesPage(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let profileId = "+155500000000"
            let path = try #require(try await HallooFunctions.processSMSResponse(s.admin, from: "(55) 500-000-000", body: "Took my pills"))
            #expect(path.hasPrefix("users/family_0/profiles/\(profileId)/messages/"))
            #expect(try await HallooFunctions.processSMSResponse(s.admin, from: "+1 999 999 9999", body: "?") == nil)

            // The family pages through the messages, newest first, five at a time.
            let service = HallooService(db: s.user("family_0"))
            var pages: [[SMSResponse]] = []
            var last: DocumentSnapshot?
            repeat {
                let (page, cursor) = try await service.fetchMessages(userId: "family_0", profileId: profileId, limit: 5, lastDocument: last)
                if !page.isEmpty { pages.append(page) }
                last = page.count == 5 ? cursor : nil
            } while last != nil
            let all = pages.flatMap { $0 }
            let fixture = s.fixture.collection("users/family_0/profiles/\(profileId)/messages")
            #expect(all.count == fixture.count + 1)
            #expect(all.first?.textResponse == "Took my pills")
            #expect(Set(all.map(\.id)).count == all.count)
            #expect(all.map(\.receivedAt) == all.map(\.receivedAt).sorted(by: >))
            #expect(pages.dropLast().allSatisfy { $0.count == 5 })
            // The messages rule lets anyone create one (its comment trusts the webhook).
            let stranger = s.admin.signedOut()
            try await stranger.collection("users/family_0/profiles/\(profileId)/messages").document("spoof").setData(["textResponse": "hi"])
            await #expect(throws: FirestoreErrorCode.self) { try await stranger.document("users/family_0/profiles/\(profileId)/messages/spoof").getDocument() }
        }
    }

    @Test(arguments: Scenario.Backend.selected) func habitListenersSeeEachChangeWithItsIndexes(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let service = HallooService(db: s.user("family_0"))
            let profileId = "+155501001010"
            let existing = s.fixture.collection("users/family_0/profiles/\(profileId)/habits").map(\.id).sorted()
            let changes = Inbox<String>()
            let listener = service.observeHabits(userId: "family_0", profileId: profileId) { type, habit, old, new in
                changes.put("\(type) \(habit.id) \(old == UInt(NSNotFound) ? -1 : Int(old)) \(new == UInt(NSNotFound) ? -1 : Int(new))")
            }
            defer { listener.remove() }
            for (i, id) in existing.enumerated() { #expect(try await changes.next() == "added \(id) -1 \(i)") }

            let new = habit(1, profileId)
            try await service.createHabitsBatch(habits: [new], userId: "family_0", profileId: profileId)
            let position = (existing + [new.id]).sorted().firstIndex(of: new.id)!
            #expect(try await changes.next() == "added \(new.id) -1 \(position)")
            try await service.completeHabit(userId: "family_0", profileId: profileId, habitId: new.id)
            #expect(try await changes.next() == "modified \(new.id) \(position) \(position)")
            let profile = try await s.admin.document("users/family_0/profiles/\(profileId)").getDocument()
            #expect(profile.get("completedHabitCount") as? Int == 1)
            try await s.user("family_0").document("users/family_0/profiles/\(profileId)/habits/\(new.id)").delete()
            #expect(try await changes.next() == "removed \(new.id) \(position) -1")
        }
    }
}
