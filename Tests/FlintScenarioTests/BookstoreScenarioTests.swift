import FlintFirestore
import Foundation
import Testing

// Seed 000, the society bookstore: the guide's FirestoreService, its notification view model,
// and its Cloud Functions (request created / updated, the daily overdue check), run against
// fixtures/000-bookstore.json with rules-samples/seed-000-bookstore/firestore.rules.

// MARK: - The guide's models

struct Book: Identifiable, Codable {
    @DocumentID var id: String?
    let title: String
    let author: String
    let isbn: String?
    let genre: String
    let description: String
    let condition: String
    let coverImageUrl: String?
    let ownerId: String
    let ownerName: String
    let societyId: String
    let isAvailable: Bool
    let borrowedBy: String?
    @ServerTimestamp var createdAt: Timestamp?
    @ServerTimestamp var updatedAt: Timestamp?

    func toDictionary() -> [String: Any] {
        return [
            "title": title, "author": author, "isbn": isbn ?? "", "genre": genre, "description": description,
            "condition": condition, "coverImageUrl": coverImageUrl ?? "", "ownerId": ownerId, "ownerName": ownerName,
            "societyId": societyId, "isAvailable": isAvailable, "borrowedBy": borrowedBy ?? "",
            "createdAt": FieldValue.serverTimestamp(), "updatedAt": FieldValue.serverTimestamp(),
        ]
    }

    static func fromDictionary(_ data: [String: Any], id: String) -> Book? {
        guard let title = data["title"] as? String, let author = data["author"] as? String, let genre = data["genre"] as? String,
            let description = data["description"] as? String, let condition = data["condition"] as? String,
            let ownerId = data["ownerId"] as? String, let ownerName = data["ownerName"] as? String,
            let societyId = data["societyId"] as? String, let isAvailable = data["isAvailable"] as? Bool
        else { return nil }
        return Book(
            id: id, title: title, author: author, isbn: data["isbn"] as? String, genre: genre, description: description,
            condition: condition, coverImageUrl: data["coverImageUrl"] as? String, ownerId: ownerId, ownerName: ownerName,
            societyId: societyId, isAvailable: isAvailable, borrowedBy: data["borrowedBy"] as? String,
            createdAt: data["createdAt"] as? Timestamp, updatedAt: data["updatedAt"] as? Timestamp)
    }
}

enum RequestStatus: String, Sendable { case pending, approved, rejected, returned, overdue }

struct BookRequest: Sendable {
    var id: String?
    var bookId: String
    var borrowerId: String
    var borrowerName: String
    var borrowerFlatNumber: String
    var ownerId: String
    var societyId: String
    var requestDate: Date
    var status: RequestStatus
    var responseDate: Date?
    var returnDate: Date?
    var dueDate: Date?
    var notes: String?

    func toDictionary() -> [String: Any] {
        var dict: [String: Any] = [
            "bookId": bookId, "borrowerId": borrowerId, "borrowerName": borrowerName, "borrowerFlatNumber": borrowerFlatNumber,
            "ownerId": ownerId, "societyId": societyId, "requestDate": Timestamp(date: requestDate), "status": status.rawValue,
        ]
        if let responseDate = responseDate { dict["responseDate"] = Timestamp(date: responseDate) }
        if let returnDate = returnDate { dict["returnDate"] = Timestamp(date: returnDate) }
        if let dueDate = dueDate { dict["dueDate"] = Timestamp(date: dueDate) }
        if let notes = notes { dict["notes"] = notes }
        return dict
    }

    static func fromDictionary(_ data: [String: Any], id: String) -> BookRequest? {
        guard let bookId = data["bookId"] as? String, let borrowerId = data["borrowerId"] as? String,
            let ownerId = data["ownerId"] as? String, let societyId = data["societyId"] as? String,
            let requestDate = data["requestDate"] as? Timestamp, let status = (data["status"] as? String).flatMap(RequestStatus.init)
        else { return nil }
        return BookRequest(
            id: id, bookId: bookId, borrowerId: borrowerId, borrowerName: data["borrowerName"] as? String ?? "",
            borrowerFlatNumber: data["borrowerFlatNumber"] as? String ?? "", ownerId: ownerId, societyId: societyId,
            requestDate: requestDate.dateValue(), status: status, responseDate: (data["responseDate"] as? Timestamp)?.dateValue(),
            returnDate: (data["returnDate"] as? Timestamp)?.dateValue(), dueDate: (data["dueDate"] as? Timestamp)?.dateValue(),
            notes: data["notes"] as? String)
    }
}

struct BookNotification: Sendable {
    var id: String?
    var userId: String
    var type: String
    var title: String
    var message: String
    var isRead: Bool
    var relatedId: String?

    static func fromDictionary(_ data: [String: Any], id: String) -> BookNotification? {
        guard let userId = data["userId"] as? String, let type = data["type"] as? String else { return nil }
        return BookNotification(
            id: id, userId: userId, type: type, title: data["title"] as? String ?? "", message: data["message"] as? String ?? "",
            isRead: data["isRead"] as? Bool ?? false, relatedId: data["relatedId"] as? String)
    }
}

// MARK: - The guide's service, ported

final class BookstoreService: Sendable {
    private let db: Firestore

    init(db: Firestore) { self.db = db }

    func addBook(_ book: Book) async throws -> String {
        let docRef = try await db.collection("books").addDocument(data: book.toDictionary())
        return docRef.documentID
    }

    func getBooks(for societyId: String) async throws -> [Book] {
        let snapshot = try await db.collection("books")
            .whereField("societyId", isEqualTo: societyId)
            .whereField("isAvailable", isEqualTo: true)
            .order(by: "createdAt", descending: true)
            .getDocuments()
        return snapshot.documents.compactMap { document in Book.fromDictionary(document.data(), id: document.documentID) }
    }

    func getUserBooks(userId: String) async throws -> [Book] {
        let snapshot = try await db.collection("books")
            .whereField("ownerId", isEqualTo: userId)
            .order(by: "createdAt", descending: true)
            .getDocuments()
        return snapshot.documents.compactMap { document in Book.fromDictionary(document.data(), id: document.documentID) }
    }

    func updateBookAvailability(bookId: String, isAvailable: Bool) async throws {
        try await db.collection("books").document(bookId).updateData(["isAvailable": isAvailable, "updatedAt": FieldValue.serverTimestamp()])
    }

    func addBookRequest(_ request: BookRequest) async throws -> String {
        let docRef = try await db.collection("bookRequests").addDocument(data: request.toDictionary())
        return docRef.documentID
    }

    func updateBookRequest(_ request: BookRequest) async throws {
        guard let id = request.id else {
            throw NSError(domain: "FirestoreService", code: 1002, userInfo: [NSLocalizedDescriptionKey: "Request ID is missing"])
        }
        try await db.collection("bookRequests").document(id).updateData(request.toDictionary())
    }

    func listenToRequests(for userId: String, completion: @escaping @Sendable ([BookRequest]) -> Void) -> ListenerRegistration {
        return db.collection("bookRequests")
            .whereField("borrowerId", isEqualTo: userId)
            .addSnapshotListener { snapshot, error in
                guard let documents = snapshot?.documents else {
                    completion([])
                    return
                }
                completion(documents.compactMap { document in BookRequest.fromDictionary(document.data(), id: document.documentID) })
            }
    }

    func addNotification(_ data: [String: Any]) async throws -> String {
        try await db.collection("notifications").addDocument(data: data).documentID
    }

    func markNotificationAsRead(notificationId: String) async throws {
        try await db.collection("notifications").document(notificationId).updateData(["isRead": true])
    }

    func getSocieties() async throws -> [String] {
        try await db.collection("societies").getDocuments().documents.map(\.documentID)
    }
}

/// The guide's NotificationViewModel, publishing into a callback instead of @Published.
final class NotificationFeed: Sendable {
    private let db: Firestore
    let updates = Inbox<(notifications: [BookNotification], unreadCount: Int)>()

    init(db: Firestore) { self.db = db }

    func startListening(for userId: String) -> ListenerRegistration {
        db.collection("notifications")
            .whereField("userId", isEqualTo: userId)
            .order(by: "createdAt", descending: true)
            .addSnapshotListener { [updates] snapshot, error in
                guard let documents = snapshot?.documents else { return }
                let notifications = documents.compactMap { document in BookNotification.fromDictionary(document.data(), id: document.documentID) }
                updates.put((notifications, notifications.filter { !$0.isRead }.count))
            }
    }
}

/// The guide's Cloud Functions, as document triggers and a scheduled job.
enum BookstoreFunctions {
    static func install(_ triggers: DocumentTriggers) {
        let admin = triggers.firestore
        triggers.document("bookRequests/{requestId}").onCreate { snap, context in
            let request = snap.data()
            let requestId = context.params["requestId"]!
            let ownerDoc = try await admin.collection("users").document(request["ownerId"] as! String).getDocument()
            guard ownerDoc.exists else { return }
            try await admin.collection("notifications").addDocument(data: [
                "userId": request["ownerId"]!, "type": "book_request", "title": "New Book Request",
                "message": "\(request["borrowerName"]!) (\(request["borrowerFlatNumber"]!)) wants to borrow your book",
                "isRead": false, "relatedId": requestId, "createdAt": FieldValue.serverTimestamp(), "societyId": request["societyId"]!,
            ])
        }
        triggers.document("bookRequests/{requestId}").onUpdate { change, context in
            let beforeData = change.before.data()!
            let afterData = change.after.data()!
            guard beforeData["status"] as? String != afterData["status"] as? String else { return }
            let borrowerDoc = try await admin.collection("users").document(afterData["borrowerId"] as! String).getDocument()
            guard borrowerDoc.exists else { return }
            let type: String
            let title: String
            switch afterData["status"] as? String {
            case "approved":
                (type, title) = ("request_approved", "Request Approved!")
                let dueDate = Calendar(identifier: .gregorian).date(byAdding: .day, value: 7, to: Date())!
                try await change.after.reference.updateData(["dueDate": Timestamp(date: dueDate)])
            case "rejected": (type, title) = ("request_rejected", "Request Declined")
            case "returned": (type, title) = ("book_returned", "Book Returned")
            case "overdue": (type, title) = ("overdue", "Book Overdue")
            default: return
            }
            try await admin.collection("notifications").addDocument(data: [
                "userId": afterData["borrowerId"]!, "type": type, "title": title, "message": title, "isRead": false,
                "relatedId": context.params["requestId"]!, "createdAt": FieldValue.serverTimestamp(), "societyId": afterData["societyId"]!,
            ])
        }
    }

    /// checkOverdueBooks: approved requests past their due date become overdue, with a notice.
    static func checkOverdueBooks(_ admin: Firestore, today: Date) async throws -> Int {
        let overdueQuery = try await admin.collection("bookRequests")
            .whereField("status", isEqualTo: "approved")
            .whereField("dueDate", isLessThanOrEqualTo: Timestamp(date: today))
            .getDocuments()
        let batch = admin.batch()
        var notifications: [[String: Any]] = []
        for doc in overdueQuery.documents {
            let request = doc.data()
            batch.updateData(["status": "overdue"], forDocument: doc.reference)
            notifications.append([
                "userId": request["borrowerId"]!, "type": "overdue", "title": "Book Overdue",
                "message": "Your borrowed book is overdue. Please return it to \(request["ownerName"] ?? "the owner") immediately.",
                "isRead": false, "relatedId": doc.documentID, "createdAt": FieldValue.serverTimestamp(), "societyId": request["societyId"]!,
            ])
        }
        try await batch.commit()
        let notificationBatch = admin.batch()
        for notification in notifications {
            notificationBatch.setData(notification, forDocument: admin.collection("notifications").document())
        }
        try await notificationBatch.commit()
        return overdueQuery.count
    }

    /// autoApproveRequests as the guide wrote it: it filters on `requestedAt`, a field the
    /// app never writes (requests carry `requestDate`), so it approves nothing.
    static func autoApproveRequests(_ admin: Firestore, now: Date) async throws -> Int {
        let yesterday = now.addingTimeInterval(-24 * 60 * 60)
        let pending = try await admin.collection("bookRequests")
            .whereField("status", isEqualTo: "pending")
            .whereField("requestedAt", isLessThanOrEqualTo: Timestamp(date: yesterday))
            .getDocuments()
        let batch = admin.batch()
        for doc in pending.documents {
            batch.updateData(["status": "auto_approved", "respondedAt": FieldValue.serverTimestamp()], forDocument: doc.reference)
        }
        try await batch.commit()
        return pending.count
    }
}

// MARK: - Scenarios

@Suite struct BookstoreScenarioTests {
    static let fixture = "000-bookstore"
    static let rules = "seed-000-bookstore/firestore.rules"

    @Test(arguments: Scenario.Backend.selected) func societyMembersBrowseAvailableBooksNewestFirst(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let service = BookstoreService(db: s.user("user_00"))
            let books = try await service.getBooks(for: "soc_green")
            let expected = s.fixture.collection("books")
                .filter { $0.fields["societyId"] as? String == "soc_green" && $0.fields["isAvailable"] as? Bool == true }
                .sorted { ($0.fields["createdAt"] as! Date) > ($1.fields["createdAt"] as! Date) }
                .map(\.id)
            #expect(!expected.isEmpty)
            #expect(books.map(\.id) == expected)
            #expect(books.allSatisfy { $0.societyId == "soc_green" && $0.isAvailable })
            #expect(books.first?.createdAt != nil)
            // Another society's shelf is not theirs to browse.
            let denied = await #expect(throws: FirestoreErrorCode.self) { try await service.getBooks(for: "soc_lake") }
            #expect(denied?.code == .permissionDenied)
            #expect(try await service.getSocieties().count == s.fixture.collection("societies").count)
        }
    }

    @Test(arguments: Scenario.Backend.selected) func getUserBooksIsDeniedBecauseRulesAreNotFilters(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let owner = s.user("user_03")
            let service = BookstoreService(db: owner)
            let denied = await #expect(throws: FirestoreErrorCode.self) { try await service.getUserBooks(userId: "user_03") }
            #expect(denied?.code == .permissionDenied)
            // The fix from docs/swift-client.md: constrain the society too, as the rule needs.
            let mine = try await owner.collection("books")
                .whereField("societyId", isEqualTo: "soc_green")
                .whereField("ownerId", isEqualTo: "user_03")
                .order(by: "createdAt", descending: true)
                .getDocuments()
            let expected = s.fixture.collection("books").filter { $0.fields["ownerId"] as? String == "user_03" }.map(\.id)
            #expect(Set(mine.documents.map(\.documentID)) == Set(expected))
        }
    }

    @Test(arguments: Scenario.Backend.selected) func aBookRequestFlowsFromPendingToApprovedWithNotifications(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            BookstoreFunctions.install(s.triggers)
            let borrower = BookstoreService(db: s.user("user_09"))
            let owner = BookstoreService(db: s.user("user_06"))

            // The owner's notification screen is open.
            let feed = NotificationFeed(db: s.user("user_06"))
            let feedListener = feed.startListening(for: "user_06")
            defer { feedListener.remove() }
            let initialUnread = s.fixture.collection("notifications")
                .filter { $0.fields["userId"] as? String == "user_06" && $0.fields["isRead"] as? Bool == false }.count
            #expect(try await feed.updates.next().unreadCount == initialUnread)

            // The borrower watches their requests.
            let requests = Inbox<[BookRequest]>()
            let requestListener = borrower.listenToRequests(for: "user_09") { requests.put($0) }
            defer { requestListener.remove() }
            let before = try await requests.next()
            #expect(before.count == s.fixture.collection("bookRequests").filter { $0.fields["borrowerId"] as? String == "user_09" }.count)

            let request = BookRequest(
                bookId: "book_006", borrowerId: "user_09", borrowerName: "Lena Nair", borrowerFlatNumber: "109", ownerId: "user_06",
                societyId: "soc_green", requestDate: Date(), status: .pending, notes: "Weekend read")
            let requestId = try await borrower.addBookRequest(request)
            await s.triggers.settle()
            #expect(s.triggers.failures.isEmpty, "\(s.triggers.failures)")

            // onBookRequestCreated told the owner.
            let ownerView = try await feed.updates.next { $0.notifications.contains { $0.relatedId == requestId } }
            #expect(ownerView.unreadCount == initialUnread + 1)
            let notice = try #require(ownerView.notifications.first)
            #expect(notice.type == "book_request" && notice.relatedId == requestId)
            #expect(try await requests.next { $0.contains { $0.id == requestId } }.first { $0.id == requestId }?.status == .pending)

            // The borrower may not approve their own request.
            var approved = request
            approved.id = requestId
            approved.status = .approved
            approved.responseDate = Date()
            let denied = await #expect(throws: FirestoreErrorCode.self) { try await borrower.updateBookRequest(approved) }
            #expect(denied?.code == .permissionDenied)
            // The owner approves; onBookRequestUpdated sets a due date a week out and tells the borrower.
            try await owner.updateBookRequest(approved)
            await s.triggers.settle()
            #expect(s.triggers.failures.isEmpty, "\(s.triggers.failures)")
            let seen = try await requests.next { $0.first { $0.id == requestId }?.dueDate != nil }
            let dueDate = try #require(seen.first { $0.id == requestId }?.dueDate)
            #expect(abs(dueDate.timeIntervalSinceNow - 7 * 86_400) < 600)
            let borrowerNotices = try await s.user("user_09").collection("notifications")
                .whereField("userId", isEqualTo: "user_09").whereField("relatedId", isEqualTo: requestId).getDocuments()
            #expect(borrowerNotices.documents.map { $0.data()["type"] as? String } == ["request_approved"])

            // Reading it clears the badge; users cannot write notifications themselves.
            try await owner.markNotificationAsRead(notificationId: notice.id!)
            #expect(try await feed.updates.next { $0.notifications.first?.isRead == true }.unreadCount == initialUnread)
            let refused = await #expect(throws: FirestoreErrorCode.self) { try await owner.addNotification(["userId": "user_06", "type": "spam"]) }
            #expect(refused?.code == .permissionDenied)
        }
    }

    @Test(arguments: Scenario.Backend.selected) func theDailyOverdueCheckMarksAndNotifies(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            BookstoreFunctions.install(s.triggers)
            // The fixture's approved requests are due in January 2026; run the job on 2026-01-28.
            let today = ISO8601DateFormatter().date(from: "2026-01-28T00:00:00Z")!
            let due = s.fixture.collection("bookRequests").filter {
                $0.fields["status"] as? String == "approved" && ($0.fields["dueDate"] as? Date).map { $0 <= today } == true
            }
            #expect(!due.isEmpty)
            let processed = try await BookstoreFunctions.checkOverdueBooks(s.admin, today: today)
            #expect(processed == due.count)
            await s.triggers.settle()
            for request in due {
                let doc = try await s.admin.collection("bookRequests").document(request.id).getDocument()
                #expect(doc.get("status") as? String == "overdue")
                // The job writes one notice and onBookRequestUpdated, seeing the status change,
                // writes another: the guide's functions notify twice.
                let notices = try await s.admin.collection("notifications").whereField("relatedId", isEqualTo: request.id)
                    .whereField("type", isEqualTo: "overdue").getDocuments()
                #expect(notices.count == 2)
            }
            // autoApproveRequests filters on a field nobody writes.
            #expect(try await BookstoreFunctions.autoApproveRequests(s.admin, now: today) == 0)
        }
    }

    @Test(arguments: Scenario.Backend.selected) func ownersPublishBooksAndToggleAvailability(_ backend: Scenario.Backend) async throws {
        try await Scenario.run(fixture: Self.fixture, rules: Self.rules, backend: backend) { s in
            let owner = BookstoreService(db: s.user("user_03"))
            let book = Book(
                title: "Malgudi Days", author: "R. K. Narayan", isbn: nil, genre: "Fiction", description: "Stories", condition: "Good",
                coverImageUrl: nil, ownerId: "user_03", ownerName: "Kiran Khan", societyId: "soc_green", isAvailable: true, borrowedBy: nil)
            let id = try await owner.addBook(book)
            var shelf = try await owner.getBooks(for: "soc_green")
            #expect(shelf.first?.id == id)  // newest first: its server timestamp is the latest
            #expect(shelf.first?.title == "Malgudi Days")
            try await owner.updateBookAvailability(bookId: id, isAvailable: false)
            shelf = try await owner.getBooks(for: "soc_green")
            #expect(!shelf.contains { $0.id == id })
            // Someone else's book cannot be changed, nor a book created for another owner.
            let neighbour = BookstoreService(db: s.user("user_06"))
            await #expect(throws: FirestoreErrorCode.self) { try await neighbour.updateBookAvailability(bookId: id, isAvailable: true) }
            await #expect(throws: FirestoreErrorCode.self) { _ = try await neighbour.addBook(book) }
            let stored = try await s.admin.collection("books").document(id).getDocument(as: Book.self)
            #expect(stored.id == id && stored.isAvailable == false && stored.updatedAt != nil)
        }
    }
}
