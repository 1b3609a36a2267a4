import FlintEngine
import FlintModel
import FlintQuery
import Testing

/// Orders, cursors, offset, limit and projections; expected values are the reference emulator's.
struct OrderAndCursorTests {
    static let cases: [(String, Query, [String])] = [
        ("order v", Query(collectionID: "c", orderBy: [asc("v")]), ["null", "b", "nan", "d1", "n1", "d15", "t", "s", "arr", "m"]),
        ("startAt 1", Query(collectionID: "c", orderBy: [asc("v")], startAt: Cursor(values: [1], before: true)),
         ["d1", "n1", "d15", "t", "s", "arr", "m"]),
        ("startAfter 1", Query(collectionID: "c", orderBy: [asc("v")], startAt: Cursor(values: [1], before: false)),
         ["d15", "t", "s", "arr", "m"]),
        ("endAt 1", Query(collectionID: "c", orderBy: [asc("v")], endAt: Cursor(values: [1], before: false)),
         ["null", "b", "nan", "d1", "n1"]),
        ("endBefore 1", Query(collectionID: "c", orderBy: [asc("v")], endAt: Cursor(values: [1], before: true)), ["null", "b", "nan"]),
        ("desc startAt 1", Query(collectionID: "c", orderBy: [desc("v")], startAt: Cursor(values: [1], before: true)),
         ["n1", "d1", "nan", "b", "null"]),
        ("startAfter (1, d1)", Query(collectionID: "c", orderBy: [asc("v"), asc("__name__")], startAt: Cursor(values: [1, ref("c/d1")], before: false)),
         ["n1", "d15", "t", "s", "arr", "m"]),
        ("desc startAfter (1, n1)", Query(collectionID: "c", orderBy: [desc("v"), desc("__name__")], startAt: Cursor(values: [1, ref("c/n1")], before: false)),
         ["d1", "nan", "b", "null"]),
        ("offset 2 limit 3", Query(collectionID: "c", orderBy: [asc("v")], offset: 2, limit: 3), ["nan", "d1", "n1"]),
        ("!= desc limit 4", Query(collectionID: "c", filter: F("v", .notEqual, 7), orderBy: [desc("v")], limit: 4), ["m", "arr", "s", "t"]),
        ("order w with inequality on v", Query(collectionID: "c", filter: F("v", .greaterThan, 0), orderBy: [asc("w")]), []),
        // An inequality that selects nothing (with null, or a range with NaN) adds no order, so
        // the key may come last.
        ("> null or w == 1, by key", Query(collectionID: "c", filter: OR(F("v", .greaterThan, .null), F("w", .equal, 1)), orderBy: [desc("__name__")]),
         ["missing"]),
        ("!= null, by w then key", Query(collectionID: "c", filter: F("v", .notEqual, .null), orderBy: [asc("w"), asc("__name__")]), []),
        ("not-in [null], by key", Query(collectionID: "c", filter: F("v", .notIn, [.null]), orderBy: [asc("__name__")]), []),
        ("< NaN, by key", Query(collectionID: "c", filter: F("v", .lessThan, .double(.nan)), orderBy: [desc("__name__")]), []),
        ("partial cursor on two orders", Query(collectionID: "c", orderBy: [asc("v"), desc("__name__")], startAt: Cursor(values: [1], before: true), limit: 2),
         ["n1", "d1"]),
    ]

    @Test func ordersAndCursorsMatchTheReference() async throws {
        let database = try await database(mixed)
        for (name, query, expected) in Self.cases {
            #expect(try await database.ids(query) == expected, "\(name)")
        }
    }

    @Test func projectionKeepsOnlySelectedFields() async throws {
        let database = try await database(["a": ["x": 1, "y": ["z": 2, "q": 3]], "b": ["y": 1]])
        let docs = try await database.runQuery(Query(collectionID: "c", projection: [path("y.z")])).documents
        #expect(docs.map(\.fields) == [["y": ["z": 2]], [:]])
        let names = try await database.runQuery(Query(collectionID: "c", projection: [.documentID])).documents
        #expect(names.map(\.fields) == [[:], [:]])
        #expect(names.map(\.key.documentID) == ["a", "b"])
    }

    @Test func collectionGroupsSpanParentsAndRespectScope() async throws {
        let database = Database(id: db)
        _ = try await database.commit([
            .set(try DocumentKey(parsing: "users/a/profiles/p1"), ["phone": "1"]),
            .set(try DocumentKey(parsing: "users/b/profiles/p2"), ["phone": "2"]),
            .set(try DocumentKey(parsing: "users/b/profiles/p2/profiles/p3"), ["phone": "1"]),
            .set(try DocumentKey(parsing: "profiles/p0"), ["phone": "1"]),
            .set(try DocumentKey(parsing: "users/a/other/p4"), ["phone": "1"]),
        ])
        let all = Query(collectionID: "profiles", allDescendants: true, filter: F("phone", .equal, "1"))
        #expect(try await database.runQuery(all).documents.map(\.key.path.canonical) == [
            "profiles/p0", "users/a/profiles/p1", "users/b/profiles/p2/profiles/p3",
        ])
        // Below the root a group query may only scan names in ascending order, as on the reference.
        var scoped = Query(collectionID: "profiles", allDescendants: true)
        scoped.parent = try DocumentKey(parsing: "users/b").path
        #expect(try await database.runQuery(scoped).documents.map(\.key.path.canonical) == ["users/b/profiles/p2", "users/b/profiles/p2/profiles/p3"])
        var filtered = all
        filtered.parent = scoped.parent
        await #expect(throws: FlintError.invalidArgument("collection group queries are only allowed at the root parent")) {
            try await database.runQuery(filtered)
        }
        var descending = scoped
        descending.orderBy = [desc("__name__")]
        await #expect(throws: FlintError(
            .failedPrecondition, "collection group queries are only allowed if they're at the root or they're an ascending primary key scan"
        )) {
            try await database.runQuery(descending)
        }
        let direct = Query(parent: try DocumentKey(parsing: "users/a").path, collectionID: "profiles")
        #expect(try await database.ids(direct) == ["p1"])
    }

    @Test func readTimeQueriesSeeTheOldSnapshot() async throws {
        let clock = ManualClockBox.make()
        let database = Database(id: db, clock: clock)
        let first = try await database.commit([.set(try DocumentKey(parsing: "c/a"), ["n": 1])])
        clock.advance(seconds: 1)
        _ = try await database.commit([.set(try DocumentKey(parsing: "c/a"), ["n": 2]), .set(try DocumentKey(parsing: "c/b"), ["n": 1])])
        let old = try await database.runQuery(Query(collectionID: "c", filter: F("n", .equal, 1)), readTime: first.commitTime)
        #expect(old.documents.map(\.key.documentID) == ["a"])
        #expect(old.readTime == first.commitTime)
        #expect(try await database.ids(Query(collectionID: "c", filter: F("n", .equal, 1))) == ["b"])
    }
}

struct ExplainTests {
    @Test func planOnlyReadsNothingAndAnalyzeCountsTheScan() async throws {
        let database = try await database((0..<50).reduce(into: [String: MapValue]()) { $0["d\($1)"] = ["g": .integer(Int64($1 % 5)), "t": .integer(Int64($1))] })
        let q = Query(collectionID: "c", filter: F("g", .equal, 2), orderBy: [desc("t")], limit: 3)
        let plan = try await database.runQuery(q, explain: ExplainOptions(analyze: false))
        #expect(plan.documents.isEmpty)
        #expect(plan.explainMetrics?.indexesUsed == [["query_scope": "Collection", "properties": "(g ASC, t DESC, __name__ DESC)"]])
        #expect(plan.explainMetrics?.executionStats == nil)
        let analyzed = try await database.runQuery(q, explain: ExplainOptions(analyze: true))
        #expect(analyzed.documents.map(\.key.documentID) == ["d47", "d42", "d37"])
        let stats = try #require(analyzed.explainMetrics?.executionStats)
        #expect(stats.resultsReturned == 3)
        #expect(stats.debugStats["index_entries_scanned"] == "3")
        #expect(stats.debugStats["billing_details"] == .map(["documents_billable": "3", "index_entries_billable": "0", "min_query_cost": "0"]))
        // At a past time Flint scans, but the plan still names the index production reads.
        let scan = try await database.runQuery(q, readTime: analyzed.readTime, explain: ExplainOptions(analyze: true))
        #expect(scan.explainMetrics?.executionStats?.debugStats["documents_scanned"] == "50")
        #expect(scan.explainMetrics?.indexesUsed == [["query_scope": "Collection", "properties": "(g ASC, t DESC, __name__ DESC)"]])
        let none = try await database.runQuery(Query(collectionID: "c", filter: F("g", .equal, 9)), explain: ExplainOptions(analyze: true))
        #expect(none.explainMetrics?.executionStats?.debugStats["billing_details"]
            == .map(["documents_billable": "0", "index_entries_billable": "0", "min_query_cost": "1"]))
    }

    /// Production's plan names the field index for `in` as for an equality, the element index
    /// for array membership, and a vector index after the equality fields for a vector search.
    @Test func thePlanNamesTheIndexProductionReads() async throws {
        let database = try await database(["a": ["g": 1, "tags": .array([.string("x")]), "v": .vector([1, 0])]])
        func plan(_ q: Query) async throws -> Value? {
            try await database.runQuery(q, explain: ExplainOptions(analyze: false)).explainMetrics?.indexesUsed.first?["properties"]
        }
        #expect(try await plan(Query(collectionID: "c")) == "(__name__ ASC)")
        #expect(try await plan(Query(collectionID: "c", filter: F("g", .in, .array([1, 2])))) == "(g ASC, __name__ ASC)")
        #expect(try await plan(Query(collectionID: "c", filter: F("tags", .arrayContainsAny, .array(["x"])), orderBy: [desc("g")]))
            == "(tags CONTAINS, g DESC, __name__ DESC)")
        #expect(try await plan(Query(collectionID: "c", filter: F("g", .greaterThan, 0))) == "(g ASC, __name__ ASC)")
        let nearest = FindNearest(field: path("v"), queryVector: [1, 0, 0], measure: .euclidean, limit: 1)
        #expect(try await plan(Query(collectionID: "c", filter: F("g", .equal, 1), findNearest: nearest)) == "(g ASC, __name__ ASC, v VECTOR<3>)")
    }

    @Test func anExplainedAggregationIsOneResultBilledPerThousandEntries() async throws {
        let database = try await database((0..<2_500).reduce(into: [String: MapValue]()) { $0["d\($1)"] = ["g": .integer(Int64($1 % 2))] })
        let count = [Aggregation(alias: "n", .count(upTo: nil))]
        let plan = try await database.runAggregation(Query(collectionID: "c", filter: F("g", .equal, 1)), aggregations: count, explain: ExplainOptions(analyze: false))
        #expect(plan.values.isEmpty)
        #expect(plan.explainMetrics?.indexesUsed == [["query_scope": "Collection", "properties": "(g ASC, __name__ ASC)"]])
        #expect(plan.explainMetrics?.executionStats == nil)
        let analyzed = try await database.runAggregation(Query(collectionID: "c", filter: F("g", .equal, 1)), aggregations: count, explain: ExplainOptions(analyze: true))
        #expect(analyzed["n"] == .integer(1_250))
        let stats = try #require(analyzed.explainMetrics?.executionStats)
        #expect(stats.resultsReturned == 1)
        #expect(stats.readOperations == 2)
        let few = try await database.runAggregation(Query(collectionID: "c", limit: 3), aggregations: count, explain: ExplainOptions(analyze: true))
        #expect(few["n"] == .integer(3))
        #expect(few.explainMetrics?.executionStats?.readOperations == 1)
    }
}
