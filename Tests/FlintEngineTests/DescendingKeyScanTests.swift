import FlintEngine
import FlintModel
import FlintQuery
import Testing

/// A query ordered by `__name__` descending alone, filtering on nothing but `__name__`, is
/// refused as the reference refuses it: FAILED_PRECONDITION, once the read time and the rules
/// have passed it. A filter on another field makes it a scan of that field's index, which is
/// served.
struct DescendingKeyScanTests {
    static let refusal = FlintError(.failedPrecondition, "Firestore does not support descending key scans")
    static let byNameDescending = [Ordering(.documentID, descending: true)]

    /// c/a and c/e have s == "x", c/b has s == "y".
    static func seeded(_ db: Database) async throws {
        _ = try await db.commit([.set(key("c/a"), ["s": "x"]), .set(key("c/b"), ["s": "y"]), .set(key("c/e"), ["s": "x"])])
    }

    static func ids(_ db: Database, _ q: Query, readTime: Timestamp? = nil, auth: AuthContext = .owner) async -> Result<[String], FlintError> {
        do throws(FlintError) {
            return .success(try await db.runQuery(q, readTime: readTime, auth: auth).documents.map(\.key.documentID))
        } catch {
            return .failure(error)
        }
    }

    static func name(_ db: Database, _ path: String) -> Value { .reference(DocumentReference(database: db.id, key: key(path))) }

    @Test func aKeyScanBackwardsIsRefused() async throws {
        let (db, _) = makeDatabase()
        try await Self.seeded(db)
        let refused: [Query] = [
            Query(collectionID: "c", orderBy: Self.byNameDescending),
            Query(collectionID: "c", orderBy: Self.byNameDescending, limit: 2),
            Query(collectionID: "c", orderBy: Self.byNameDescending, limit: 0),
            Query(collectionID: "c", allDescendants: true, orderBy: Self.byNameDescending),
            Query(collectionID: "c", filter: .field(FieldFilter(.documentID, .equal, Self.name(db, "c/a"))), orderBy: Self.byNameDescending),
            Query(collectionID: "c", filter: .field(FieldFilter(.documentID, .greaterThan, Self.name(db, "c/a"))), orderBy: Self.byNameDescending),
            Query(collectionID: "c", filter: .field(FieldFilter(.documentID, .notEqual, Self.name(db, "c/a"))), orderBy: Self.byNameDescending),
            Query(
                collectionID: "c", orderBy: Self.byNameDescending,
                startAt: Cursor(values: [Self.name(db, "c/b")], before: true)),
        ]
        for q in refused {
            #expect(await Self.ids(db, q) == .failure(Self.refusal), "\(q)")
        }
        await #expect(throws: Self.refusal) {
            try await db.runAggregation(
                Query(collectionID: "c", orderBy: Self.byNameDescending), aggregations: [Aggregation(alias: "n", .count(upTo: nil))])
        }
        // A sum would also put its field after the name; the scan is what the reference names.
        await #expect(throws: Self.refusal) {
            try await db.runAggregation(
                Query(collectionID: "c", orderBy: Self.byNameDescending), aggregations: [Aggregation(alias: "n", .sum(try FieldPath(parsing: "n")))])
        }
    }

    @Test func aFilterOnAnotherFieldOrAnotherOrderIsServed() async throws {
        let (db, _) = makeDatabase()
        try await Self.seeded(db)
        let s = try FieldPath(parsing: "s")
        let served: [(Query, [String])] = [
            (Query(collectionID: "c", filter: .field(FieldFilter(s, .equal, "x")), orderBy: Self.byNameDescending), ["e", "a"]),
            (Query(collectionID: "c", filter: .field(FieldFilter(s, .in, ["x"])), orderBy: Self.byNameDescending), ["e", "a"]),
            (Query(collectionID: "c", filter: .unary(UnaryFilter(s, .isNull)), orderBy: Self.byNameDescending), []),
            // An inequality that can select nothing adds no order; the answer is empty.
            (Query(collectionID: "c", filter: .field(FieldFilter(s, .greaterThan, .null)), orderBy: Self.byNameDescending), []),
            (Query(collectionID: "c", orderBy: [Ordering(s, descending: true)]), ["b", "e", "a"]),
            (Query(collectionID: "c", orderBy: [Ordering(s, descending: true), Ordering(.documentID, descending: true)]), ["b", "e", "a"]),
            (Query(collectionID: "c", orderBy: [Ordering(.documentID)]), ["a", "b", "e"]),
        ]
        for (q, expected) in served {
            #expect(await Self.ids(db, q) == .success(expected), "\(q)")
        }
    }

    @Test func theReadTimeAndTheRulesAreToldFirst() async throws {
        let rules = """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /open/{id} { allow read: if true; }
                match /closed/{id} { allow read: if false; }
              }
            }
            """
        let db = RulesEnforcementTests.database(rules, project: "k")
        let future = Timestamp(microseconds: 4_102_444_800_000_000)
        let open = Query(collectionID: "open", orderBy: Self.byNameDescending)
        let closed = Query(collectionID: "closed", orderBy: Self.byNameDescending)
        #expect(await Self.ids(db, open, auth: .unauthenticated) == .failure(Self.refusal))
        #expect(try #require(await Self.ids(db, closed, auth: .unauthenticated).failure).code == .permissionDenied)
        #expect(await Self.ids(db, open, readTime: future) == .failure(.invalidArgument("The requested 'read_time' cannot be in the future.")))
    }

    @Test func listingByNameDescendingIsRefusedToo() async throws {
        let (db, _) = makeDatabase()
        try await Self.seeded(db)
        await #expect(throws: Self.refusal) {
            try await db.listDocuments(ListDocumentsRequest(collectionID: "c", orderBy: "__name__ desc"))
        }
        let bySDescending = try await db.listDocuments(ListDocumentsRequest(collectionID: "c", orderBy: "s desc"))
        #expect(bySDescending.documents.map(\.key.documentID) == ["b", "e", "a"])
    }

    @Test func aListenTargetScanningKeysBackwardsIsRemovedWithTheCause() async throws {
        let (db, _) = makeDatabase()
        try await Self.seeded(db)
        let (stream, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 1, scope: .query(Query(collectionID: "c", orderBy: Self.byNameDescending))), to: stream)
        let events = await db.takeWatchEvents(stream)
        guard case .target(.remove, [1], _, _, let cause?) = events.last else {
            Issue.record("the target is removed with a cause: \(events)")
            return
        }
        #expect(cause == Self.refusal)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
}
