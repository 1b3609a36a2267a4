import FlintEngine
import FlintFixtures
import FlintModel
import FlintQuery
import Foundation
import Testing

/// The queries the five guides run, against their fixtures. Each result must equal a brute-force
/// evaluation over the dataset (filter by hand, sort by hand); a few carry exact expectations.
struct SeedQueryTests {
    static func f(_ s: String) -> FieldPath { try! FieldPath(parsing: s) }
    static func eq(_ field: String, _ v: Value) -> Filter { .field(FieldFilter(f(field), .equal, v)) }
    static func and(_ fs: Filter...) -> Filter { .composite(CompositeFilter(.and, fs)) }
    static func or(_ fs: Filter...) -> Filter { .composite(CompositeFilter(.or, fs)) }

    static func load(_ file: String) async throws -> (Database, [(DocumentKey, MapValue)]) {
        let (db, dataset) = try await FixtureLoadingTests.load(file)
        return (db, dataset.documents)
    }

    /// Documents of `collection` (a path) satisfying `keep`, sorted by `order`.
    static func expected(_ docs: [(DocumentKey, MapValue)], in collection: String, keep: (MapValue) -> Bool,
                         order: ((DocumentKey, MapValue), (DocumentKey, MapValue)) -> Bool = { $0.0 < $1.0 }) -> [String] {
        docs.filter { $0.0.collection.canonical == collection && keep($0.1) }.sorted(by: order).map(\.0.path.canonical)
    }

    @Test func bookstoreQueries() async throws {
        let (db, docs) = try await Self.load("000-bookstore.json")
        let available = Query(collectionID: "books", filter: Self.and(Self.eq("societyId", "soc_lake"), Self.eq("isAvailable", true)),
                              orderBy: [Ordering(Self.f("createdAt"), descending: true)])
        let got = try await db.runQuery(available).documents.map(\.key.path.canonical)
        #expect(got.count == 10)
        #expect(Array(got.prefix(3)) == ["books/book_037", "books/book_034", "books/book_031"])
        #expect(got == Self.expected(docs, in: "books", keep: { $0["societyId"] == "soc_lake" && $0["isAvailable"] == true },
                                     order: { $0.1["createdAt"]! > $1.1["createdAt"]! }))
        let mine = Query(collectionID: "books", filter: Self.eq("ownerId", "user_03"), orderBy: [Ordering(Self.f("createdAt"), descending: true)])
        #expect(try await db.runQuery(mine).documents.map(\.key.path.canonical)
                == Self.expected(docs, in: "books", keep: { $0["ownerId"] == "user_03" }, order: { $0.1["createdAt"]! > $1.1["createdAt"]! }))
        let requests = Query(collectionID: "bookRequests", filter: Self.eq("borrowerId", "user_06"))
        let r = try await db.runQuery(requests).documents.map(\.key.path.canonical)
        #expect(r.count == 5)
        #expect(r == Self.expected(docs, in: "bookRequests", keep: { $0["borrowerId"] == "user_06" }))
    }

    @Test func vibesQueries() async throws {
        let (db, docs) = try await Self.load("001-vibes.json")
        let friends = Query(collectionID: "friendships", filter: Self.and(
            Self.eq("status", "accepted"), Self.or(Self.eq("userId", "uid_alice"), Self.eq("friendId", "uid_alice"))))
        #expect(try await db.runQuery(friends).documents.map(\.key.path.canonical) == ["friendships/fr_00", "friendships/fr_01", "friendships/fr_09"])
        let prefix = Query(collectionID: "users", filter: Self.and(
            .field(FieldFilter(Self.f("username"), .greaterThanOrEqual, "g")),
            .field(FieldFilter(Self.f("username"), .lessThan, "g\u{f8ff}"))))
        #expect(try await db.runQuery(prefix).documents.map(\.key.path.canonical) == ["users/uid_grace"])
        let threads = Query(collectionID: "messageThreads", filter: Self.and(
            .field(FieldFilter(Self.f("userId1"), .in, ["uid_alice", "uid_carol"])),
            .field(FieldFilter(Self.f("userId2"), .in, ["uid_alice", "uid_carol"]))))
        #expect(try await db.runQuery(threads).documents.map(\.key.path.canonical) == ["messageThreads/thread_1"])
        let messages = Query(collectionID: "messages", filter: Self.eq("threadId", "thread_2"), orderBy: [Ordering(Self.f("timestamp"), descending: true)])
        #expect(try await db.runQuery(messages).documents.map(\.key.path.canonical)
                == Self.expected(docs, in: "messages", keep: { $0["threadId"] == "thread_2" }, order: { $0.1["timestamp"]! > $1.1["timestamp"]! }))
        let week = Query(collectionID: "listeningStats", filter: Self.and(Self.eq("userId", "uid_bob"),
            .field(FieldFilter(Self.f("date"), .greaterThanOrEqual, "2026-01-06")), .field(FieldFilter(Self.f("date"), .lessThan, "2026-01-09"))))
        #expect(try await db.runQuery(week).documents.map(\.key.documentID) == ["uid_bob__2026-01-06", "uid_bob__2026-01-07", "uid_bob__2026-01-08"])
        let unread = Query(collectionID: "notifications", filter: Self.and(Self.eq("userId", "uid_bob"), Self.eq("read", false)))
        #expect(try await db.runQuery(unread).documents.map(\.key.path.canonical)
                == Self.expected(docs, in: "notifications", keep: { $0["userId"] == "uid_bob" && $0["read"] == false }))
    }

    @Test func hallooQueries() async throws {
        let (db, docs) = try await Self.load("003-halloo.json")
        let profile = "users/family_0/profiles/+155500000000"
        let habits = Query(parent: try DocumentKey(parsing: profile).path, collectionID: "habits",
                           filter: Self.eq("status", "active"), orderBy: [Ordering(Self.f("scheduledTime"))])
        #expect(try await db.runQuery(habits).documents.map(\.key.path.canonical)
                == Self.expected(docs, in: profile + "/habits", keep: { $0["status"] == "active" }, order: { $0.1["scheduledTime"]! < $1.1["scheduledTime"]! }))
        let today = Value.timestamp(RFC3339.parse("2026-01-05T00:00:00Z")!)
        let tomorrow = Value.timestamp(RFC3339.parse("2026-01-06T00:00:00Z")!)
        let dueToday = Query(parent: try DocumentKey(parsing: profile).path, collectionID: "habits", filter: Self.and(
            Self.eq("status", "active"), .field(FieldFilter(Self.f("nextScheduledDate"), .greaterThanOrEqual, today)),
            .field(FieldFilter(Self.f("nextScheduledDate"), .lessThan, tomorrow))), orderBy: [Ordering(Self.f("nextScheduledDate"))])
        let due = try await db.runQuery(dueToday).documents
        #expect(!due.isEmpty)
        #expect(due.map(\.key.path.canonical) == Self.expected(docs, in: profile + "/habits",
            keep: { $0["status"] == "active" && $0["nextScheduledDate"]! >= today && $0["nextScheduledDate"]! < tomorrow },
            order: { ($0.1["nextScheduledDate"]!, $0.0) < ($1.1["nextScheduledDate"]!, $1.0) }))
        // Cursor paging through messages, newest first, two at a time.
        var page = Query(parent: try DocumentKey(parsing: profile).path, collectionID: "messages",
                         orderBy: [Ordering(Self.f("receivedAt"), descending: true), Ordering(.documentID, descending: true)], limit: 2)
        var seen: [String] = []
        while true {
            let docs = try await db.runQuery(page).documents
            seen += docs.map(\.key.documentID)
            guard docs.count == 2, let last = docs.last else { break }
            page.startAt = Cursor(values: [last.fields["receivedAt"]!, .reference(DocumentReference(database: db.id, key: last.key))], before: false)
        }
        #expect(seen == Self.expected(docs, in: profile + "/messages", keep: { _ in true },
                                      order: { $0.1["receivedAt"]! > $1.1["receivedAt"]! }).map { String($0.split(separator: "/").last!) })
        let byPhone = Query(collectionID: "profiles", allDescendants: true, filter: Self.eq("phoneNumber", "+155510010100"))
        #expect(try await db.runQuery(byPhone).documents.map(\.key.path.canonical) == ["users/family_1/profiles/+155510010100"])
    }

    @Test func messageAIQueries() async throws {
        let (db, docs) = try await Self.load("004-messageai.json")
        let direct = Query(collectionID: "conversations", filter: Self.and(Self.eq("isGroup", false),
            .field(FieldFilter(Self.f("participantIDs"), .arrayContains, "mai_ana"))))
        #expect(try await db.runQuery(direct).documents.map(\.key.documentID) == ["conv_0", "conv_1", "conv_6"])
        let inbox = Query(collectionID: "conversations", filter: .field(FieldFilter(Self.f("participantIDs"), .arrayContains, "mai_cai")),
                          orderBy: [Ordering(Self.f("lastMessageTime"), descending: true)], limit: 3)
        #expect(try await db.runQuery(inbox).documents.map(\.key.path.canonical) == Array(Self.expected(docs, in: "conversations",
            keep: { if case .array(let p)? = $0["participantIDs"] { p.contains("mai_cai") } else { false } },
            order: { $0.1["lastMessageTime"]! > $1.1["lastMessageTime"]! }).prefix(3)))
        let latest = Query(parent: try DocumentKey(parsing: "conversations/conv_3").path, collectionID: "messages",
                           orderBy: [Ordering(Self.f("timestamp"), descending: true)], limit: 2)
        #expect(try await db.runQuery(latest).documents.map(\.key.documentID) == ["conv_3_m6", "conv_3_m5"])
    }
}
