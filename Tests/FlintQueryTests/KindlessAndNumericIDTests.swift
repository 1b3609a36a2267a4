import FlintEngine
import FlintModel
import FlintQuery
import FlintTesting
import Testing

/// Queries without a collection id (what the server SDKs' recursive deletes send) and numeric
/// document ids (`__id<n>__`), which sort before every other id. Expected results are the
/// reference emulator's for the same data and requests.
struct KindlessAndNumericIDTests {
    static let paths = ["a/1", "a/2", "a/1/sub/x", "ab/1", "b/1", "b/1/a/2", "c/__id5__", "c/__id-3__", "c/0"]
    static let lowest = "__id-9223372036854775808__"

    func seeded() async throws -> Database {
        let database = Database(id: db, clock: ManualClock())
        _ = try await database.commit(try Self.paths.map { .set(try DocumentKey(parsing: $0), ["v": 1]) })
        return database
    }

    func names(_ database: Database, _ query: Query) async throws -> [String] {
        try await database.runQuery(query).documents.map(\.key.path.canonical)
    }

    /// A reference to a path that need not be a valid document name (`a\0` has a NUL byte).
    func key(_ segments: String...) -> Value {
        .reference(DocumentReference(database: db, key: DocumentKey(unchecked: ResourcePath(segments))))
    }

    @Test func numericIDsSortFirstInEveryQueryPath() async throws {
        let database = try await seeded()
        #expect(try await database.ids(Query(collectionID: "c")) == ["__id-3__", "__id5__", "0"])
        // Ordered by name with a limit: read straight from the collection's sorted ids.
        #expect(try await database.ids(Query(collectionID: "c", limit: 2)) == ["__id-3__", "__id5__"])
        // Backwards by name (the reference serves it only beside a filter on another field).
        #expect(try await database.ids(Query(collectionID: "c", filter: F("v", .equal, 1), orderBy: [desc("__name__")])) == ["0", "__id5__", "__id-3__"])
        // Through a composite index (equality on v), and through a collection-group index.
        #expect(try await database.ids(Query(collectionID: "c", filter: F("v", .equal, 1), limit: 3)) == ["__id-3__", "__id5__", "0"])
        #expect(
            try await database.ids(Query(collectionID: "c", allDescendants: true, filter: F("v", .equal, 1), limit: 2))
                == ["__id-3__", "__id5__"])
        let aboveLowest = Query(collectionID: "c", filter: F("__name__", .greaterThan, key("c", Self.lowest)))
        #expect(try await database.ids(aboveLowest) == ["__id-3__", "__id5__", "0"])
        let belowZero = Query(collectionID: "c", filter: F("__name__", .lessThan, ref("c/0")))
        #expect(try await database.ids(belowZero) == ["__id-3__", "__id5__"])
    }

    @Test func kindlessQueriesReadEveryCollectionBelowTheParent() async throws {
        let database = try await seeded()
        #expect(try await names(database, Query(collectionID: nil)) == ["a/1", "a/2", "ab/1", "b/1", "c/__id-3__", "c/__id5__", "c/0"])
        #expect(
            try await names(database, Query(collectionID: nil, allDescendants: true)) == [
                "a/1", "a/1/sub/x", "a/2", "ab/1", "b/1", "b/1/a/2", "c/__id-3__", "c/__id5__", "c/0",
            ])
        let underA1 = Query(parent: try DocumentKey(parsing: "a/1").path, collectionID: nil, allDescendants: true)
        #expect(try await names(database, underA1) == ["a/1/sub/x"])
        let count = try await database.runAggregation(
            Query(collectionID: nil, allDescendants: true), aggregations: [Aggregation(alias: "n", .count(upTo: nil))])
        #expect(count["n"] == .integer(9))
    }

    /// What `recursiveDelete` and Python's `Query.recursive()` send to find everything in
    /// collection `a`: the lowest id in `a`, up to the lowest id in `a\0`.
    @Test func theSDKsRecursiveRangeCoversOneCollectionAndItsDescendants() async throws {
        let database = try await seeded()
        let low = key("a", Self.lowest)
        let high = key("a\u{0}", Self.lowest)
        let range = Query(
            collectionID: nil, allDescendants: true,
            filter: AND(F("__name__", .greaterThanOrEqual, low), F("__name__", .lessThan, high)))
        #expect(try await names(database, range) == ["a/1", "a/1/sub/x", "a/2"])
        let cursors = Query(
            collectionID: nil, allDescendants: true, orderBy: [asc("__name__")],
            startAt: Cursor(values: [low], before: true), endAt: Cursor(values: [high], before: true))
        #expect(try await names(database, cursors) == ["a/1", "a/1/sub/x", "a/2"])
        // Paging by name, ids only, as the Node SDK does.
        let page = Query(
            collectionID: nil, allDescendants: true, orderBy: [asc("__name__")], startAt: Cursor(values: [ref("a/1")], before: false),
            limit: 3, projection: [.documentID])
        #expect(try await names(database, page) == ["a/1/sub/x", "a/2", "ab/1"])
    }

    @Test func kindlessQueriesOnlyFilterAndOrderByName() async throws {
        let database = try await seeded()
        let filtered = await #expect(throws: FlintError.self) { try await database.runQuery(Query(collectionID: nil, filter: F("v", .equal, 1))) }
        #expect(filtered?.message == "kind is required for filter: v")
        let ordered = await #expect(throws: FlintError.self) { try await database.runQuery(Query(collectionID: nil, orderBy: [asc("v")])) }
        #expect(ordered?.message == "kind is required for all orders except __key__ ascending")
        let descending = await #expect(throws: FlintError.self) {
            try await database.runQuery(Query(collectionID: nil, orderBy: [desc("__name__")]))
        }
        #expect(descending?.code == .invalidArgument)
        // A nearest-neighbour search reads every kind, as on the reference.
        _ = try await database.commit([.set(try DocumentKey(parsing: "a/1"), ["e": .vector([1, 0])]), .set(try DocumentKey(parsing: "b/1"), ["e": .vector([0, 1])])])
        let nearest = FindNearest(field: try FieldPath(parsing: "e"), queryVector: [1, 0], measure: .euclidean, limit: 5)
        #expect(try await database.runQuery(Query(collectionID: nil, findNearest: nearest)).documents.map(\.key.path.canonical) == ["a/1", "b/1"])
    }

    @Test func listingWithoutACollectionIDPagesAcrossCollections() async throws {
        let database = try await seeded()
        var all: [String] = []
        var token: String?
        repeat {
            let page = try await database.listDocuments(ListDocumentsRequest(collectionID: nil, pageSize: 2, pageToken: token))
            #expect(page.documents.count <= 2)
            all += page.documents.map(\.key.path.canonical)
            token = page.nextPageToken
        } while token != nil
        #expect(all == ["a/1", "a/2", "ab/1", "b/1", "c/__id-3__", "c/__id5__", "c/0"])
        let under = try await database.listDocuments(ListDocumentsRequest(parent: try DocumentKey(parsing: "b/1").path, collectionID: nil))
        #expect(under.documents.map(\.key.path.canonical) == ["b/1/a/2"])
        #expect(under.nextPageToken == nil)
    }
}
