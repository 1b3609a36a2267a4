import FlintFirestore
import Foundation
import Testing

// Seed 002, LifeSignal (safety check-ins): the guide's FirebaseUserAdapter and the token
// update of FirebaseNotificationAdapter, run against fixtures/002-lifesignal.json. The guide
// publishes no security rules, so none are loaded; the signed-in user comes from the adapter's
// `uid` instead of `Auth.auth().currentUser`.

struct LifeSignalUser: Equatable, Sendable {
    var id: String
    var firstName: String
    var lastName: String
    var phoneNumber: String
    var profilePictureURL: String?
    var emergencyNote: String?
    var lastCheckInTime: Date?
    var checkInInterval: TimeInterval
    var reminderInterval: TimeInterval
}

enum UserError: Error { case notAuthenticated, userNotFound, invalidData }

struct FirebaseUserAdapter: Sendable {
    let db: Firestore
    let uid: String?

    func getUser() async throws -> LifeSignalUser {
        guard let userId = uid else { throw UserError.notAuthenticated }
        let document = try await db.collection("users").document(userId).getDocument()
        guard let data = document.data() else { throw UserError.userNotFound }
        return try mapToUser(data, id: userId)
    }

    func updateUser(_ user: LifeSignalUser) async throws {
        guard let userId = uid else { throw UserError.notAuthenticated }
        let data = mapToData(user)
        try await db.collection("users").document(userId).updateData(data)
    }

    func registerForNotifications(token: String) async throws {
        guard let userId = uid else { throw UserError.notAuthenticated }
        try await db.collection("users").document(userId).updateData(["fcmToken": token])
    }

    private func mapToUser(_ data: [String: Any], id: String) throws -> LifeSignalUser {
        guard let firstName = data["firstName"] as? String, let lastName = data["lastName"] as? String,
            let phoneNumber = data["phoneNumber"] as? String
        else { throw UserError.invalidData }
        return LifeSignalUser(
            id: id, firstName: firstName, lastName: lastName, phoneNumber: phoneNumber,
            profilePictureURL: data["profilePictureURL"] as? String, emergencyNote: data["emergencyNote"] as? String,
            lastCheckInTime: (data["lastCheckInTime"] as? Timestamp)?.dateValue(),
            checkInInterval: (data["checkInInterval"] as? NSNumber)?.doubleValue ?? 86400,
            reminderInterval: (data["reminderInterval"] as? NSNumber)?.doubleValue ?? 7200)
    }

    private func mapToData(_ user: LifeSignalUser) -> [String: Any] {
        var data: [String: Any] = [
            "firstName": user.firstName, "lastName": user.lastName, "phoneNumber": user.phoneNumber,
            "checkInInterval": user.checkInInterval, "reminderInterval": user.reminderInterval,
            "updatedAt": FieldValue.serverTimestamp(),
        ]
        if let profilePictureURL = user.profilePictureURL { data["profilePictureURL"] = profilePictureURL }
        if let emergencyNote = user.emergencyNote { data["emergencyNote"] = emergencyNote }
        if let lastCheckInTime = user.lastCheckInTime { data["lastCheckInTime"] = Timestamp(date: lastCheckInTime) }
        return data
    }
}

@Suite struct LifeSignalScenarioTests {
    static let fixture = "002-lifesignal"

    @Test(arguments: Scenario.Backend.selected) func theUserAdapterReadsProfilesAsStored(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: nil, backend: backend) { s in
            for (id, fields) in s.fixture.collection("users") {
                let user = try await FirebaseUserAdapter(db: s.user(id), uid: id).getUser()
                #expect(user.firstName == fields["firstName"] as? String)
                #expect(user.phoneNumber == fields["phoneNumber"] as? String)
                #expect(user.profilePictureURL == fields["profilePictureURL"] as? String)
                #expect(user.emergencyNote == fields["emergencyNote"] as? String)
                #expect(user.lastCheckInTime == fields["lastCheckInTime"] as? Date)
                #expect(user.checkInInterval == (fields["checkInInterval"] as? Double ?? 86400))
            }
            await #expect(throws: UserError.self) { _ = try await FirebaseUserAdapter(db: s.user("nobody"), uid: "nobody").getUser() }
            await #expect(throws: UserError.self) { _ = try await FirebaseUserAdapter(db: s.user("x"), uid: nil).getUser() }
        }
    }

    @Test(arguments: Scenario.Backend.selected) func updatingAUserStampsTheServerTime(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: nil, backend: backend) { s in
            let adapter = FirebaseUserAdapter(db: s.user("ls_user_1"), uid: "ls_user_1")
            var user = try await adapter.getUser()
            let checkIn = Date(timeIntervalSince1970: 1_767_600_000.25)
            user.emergencyNote = "Diabetic"
            user.lastCheckInTime = checkIn
            user.checkInInterval = 3600
            let before = Date()
            try await adapter.updateUser(user)
            let after = Date()

            let stored = try await s.admin.document("users/ls_user_1").getDocument()
            let stamp = try #require(stored.get("updatedAt") as? Timestamp).dateValue()
            #expect(stamp >= before.addingTimeInterval(-0.001) && stamp <= after.addingTimeInterval(0.001))
            #expect(stored.updateTime?.dateValue() == stamp)
            // Fields the adapter does not send are kept.
            #expect(stored.get("createdAt") as? Timestamp == Timestamp(date: s.fixture.document("users/ls_user_1")!["createdAt"] as! Date))
            #expect(stored.get("fcmToken") as? String == "fcm_ls_user_1")
            let reread = try await adapter.getUser()
            #expect(reread == user)

            try await adapter.registerForNotifications(token: "fcm_new")
            #expect(try await s.admin.document("users/ls_user_1").getDocument().get("fcmToken") as? String == "fcm_new")
            // updateData needs the document: a user without a profile gets NOT_FOUND.
            let missing = await #expect(throws: FirestoreErrorCode.self) {
                try await FirebaseUserAdapter(db: s.user("ghost"), uid: "ghost").updateUser(user)
            }
            #expect(missing?.code == .notFound)
        }
    }

    @Test(arguments: Scenario.Backend.selected) func checkInsAndPingsAreQueryableByUser(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: nil, backend: backend) { s in
            let db = s.user("ls_user_0")
            let latest = try await db.collection("checkIns").whereField("userId", isEqualTo: "ls_user_0")
                .order(by: "timestamp", descending: true).limit(to: 1).getDocuments()
            let expected = s.fixture.collection("checkIns").filter { $0.fields["userId"] as? String == "ls_user_0" }
                .max { ($0.fields["timestamp"] as! Date) < ($1.fields["timestamp"] as! Date) }
            #expect(latest.documents.first?.documentID == expected?.id)
            let open = try await db.collection("pings").whereField("isResponded", isEqualTo: false).count.getAggregation(source: .server)
            #expect(open.count.intValue == s.fixture.collection("pings").filter { $0.fields["isResponded"] as? Bool == false }.count)
        }
    }
}
