import FlintEngine
import FlintFixtures
import FlintModel
import FlintQuery
import Foundation
import Testing

/// Which queries production serves with its automatic single-field indexes and which need a
/// composite index or a collection-group override; and Flint's opt-in mode that refuses them.
struct IndexRequirementTests {
    static func f(_ s: String) -> FieldPath { try! FieldPath(parsing: s) }
    static func needs(_ q: Query) throws -> [String] {
        let r = IndexRequirements.of(try NormalizedQuery(q, database: DatabaseID(project: "p")))
        return r.composites.map { $0.spec.json } + r.fieldOverrides.map { "override \($0.collectionGroup).\($0.field.canonical)" }
    }
    static func eq(_ field: String, _ v: Value) -> Filter { .field(FieldFilter(f(field), .equal, v)) }

    @Test func singleFieldIndexesServeSimpleQueries() throws {
        #expect(try Self.needs(Query(collectionID: "books", filter: .composite(CompositeFilter(.and, [Self.eq("a", 1), Self.eq("b", 2)])))) == [])
        #expect(try Self.needs(Query(collectionID: "books", orderBy: [Ordering(Self.f("t"), descending: true)], limit: 5)) == [])
        #expect(try Self.needs(Query(collectionID: "books", filter: .field(FieldFilter(Self.f("t"), .greaterThan, 1)), orderBy: [Ordering(Self.f("t"))])) == [])
        #expect(try Self.needs(Query(collectionID: "books", filter: Self.eq("t", 1), orderBy: [Ordering(Self.f("t"))])) == [])
    }

    @Test func compositeIndexesAreNamedFieldByField() throws {
        #expect(try Self.needs(Query(collectionID: "books", filter: .composite(CompositeFilter(.and, [Self.eq("societyId", "s"), Self.eq("isAvailable", true)])),
                                     orderBy: [Ordering(Self.f("createdAt"), descending: true)]))
                == [#"{ "collectionGroup": "books", "queryScope": "COLLECTION", "fields": [{ "fieldPath": "isAvailable", "order": "ASCENDING" }, { "fieldPath": "societyId", "order": "ASCENDING" }, { "fieldPath": "createdAt", "order": "DESCENDING" }] }"#])
        #expect(try Self.needs(Query(collectionID: "c", filter: .field(FieldFilter(Self.f("a"), .greaterThan, 1)), orderBy: [Ordering(Self.f("b"))]))
                == [#"{ "collectionGroup": "c", "queryScope": "COLLECTION", "fields": [{ "fieldPath": "b", "order": "ASCENDING" }, { "fieldPath": "a", "order": "ASCENDING" }] }"#])
        #expect(try Self.needs(Query(collectionID: "c", filter: .field(FieldFilter(Self.f("tags"), .arrayContains, "x")), orderBy: [Ordering(Self.f("t"), descending: true)]))
                == [#"{ "collectionGroup": "c", "queryScope": "COLLECTION", "fields": [{ "fieldPath": "tags", "arrayConfig": "CONTAINS" }, { "fieldPath": "t", "order": "DESCENDING" }] }"#])
        let or = Query(collectionID: "c", filter: .composite(CompositeFilter(.or, [Self.eq("a", 1), Self.eq("b", 2)])), orderBy: [Ordering(Self.f("t"))])
        #expect(try Self.needs(or).count == 2)
        #expect(try Self.needs(Query(collectionID: "profiles", allDescendants: true, filter: Self.eq("phone", "1"))) == ["override profiles.phone"])
    }

    @Test func requireModeRefusesUndeclaredAndAcceptsDeclaredIndexes() async throws {
        let file = #"""
            { "indexes": [ { "collectionGroup": "books", "queryScope": "COLLECTION", "fields": [
                { "fieldPath": "societyId", "order": "ASCENDING" }, { "fieldPath": "isAvailable", "order": "ASCENDING" },
                { "fieldPath": "createdAt", "order": "DESCENDING" }, { "fieldPath": "__name__", "order": "DESCENDING" } ] } ],
              "fieldOverrides": [ { "collectionGroup": "profiles", "fieldPath": "phone",
                "indexes": [ { "order": "ASCENDING", "queryScope": "COLLECTION" }, { "order": "ASCENDING", "queryScope": "COLLECTION_GROUP" } ] } ] }
            """#
        let (indexes, overrides, _) = try IndexFile.parse(Data(file.utf8))
        #expect(indexes.count == 1)
        #expect(overrides == [FieldOverride(collectionGroup: "profiles", field: Self.f("phone"), mode: .ascending)])
        var config = DatabaseConfiguration()
        config.requireIndexes = true
        config.declaredIndexes = indexes
        config.fieldOverrides = overrides
        let db = Database(id: DatabaseID(project: "p"), configuration: config)
        let served = Query(collectionID: "books", filter: .composite(CompositeFilter(.and, [Self.eq("isAvailable", true), Self.eq("societyId", "s")])),
                           orderBy: [Ordering(Self.f("createdAt"), descending: true)])
        _ = try await db.runQuery(served)
        _ = try await db.runQuery(Query(collectionID: "profiles", allDescendants: true, filter: Self.eq("phone", "1")))
        let refused = Query(collectionID: "books", filter: Self.eq("ownerId", "u"), orderBy: [Ordering(Self.f("createdAt"), descending: true)])
        let error = await #expect(throws: FlintError.self) { try await db.runQuery(refused) }
        #expect(error?.code == .failedPrecondition)
        #expect(error?.message == """
            The query requires an index. Add it to firestore.indexes.json:
              { "collectionGroup": "books", "queryScope": "COLLECTION", "fields": [{ "fieldPath": "ownerId", "order": "ASCENDING" }, { "fieldPath": "createdAt", "order": "DESCENDING" }] }
            """)
        let report = await db.indexUsageReport()
        #expect(report.composites.count == 2)
        #expect(report.firestoreIndexesJSON.contains(#""fieldPath": "ownerId", "order": "ASCENDING""#))
        let reparsed = try IndexFile.parse(Data(report.firestoreIndexesJSON.utf8))
        #expect(reparsed.indexes.count == 2)
        #expect(reparsed.overrides.count == 1)
    }

    @Test func withoutRequireModeQueriesRunAndAreReported() async throws {
        let db = Database(id: DatabaseID(project: "p"))
        _ = try await db.runQuery(Query(collectionID: "c", filter: Self.eq("a", 1), orderBy: [Ordering(Self.f("b"))]))
        #expect(await db.indexUsageReport().composites.map(\.spec.json) == [
            #"{ "collectionGroup": "c", "queryScope": "COLLECTION", "fields": [{ "fieldPath": "a", "order": "ASCENDING" }, { "fieldPath": "b", "order": "ASCENDING" }] }"#
        ])
    }

    /// Each index production would use, counted per query and written as the reference's
    /// report writes it: ending in `__name__` in the direction of the last order, a
    /// collection-group single-field index as an index of that field.
    @Test func indexUsesAreCountedPerQuery() async throws {
        let db = Database(id: DatabaseID(project: "p"))
        let byOwner = Query(collectionID: "books", filter: Self.eq("ownerId", "u"), orderBy: [Ordering(Self.f("createdAt"), descending: true)])
        _ = try await db.runQuery(byOwner)
        _ = try await db.runQuery(Query(collectionID: "profiles", allDescendants: true, filter: Self.eq("phone", "1")))
        _ = try await db.runQuery(byOwner)
        _ = try await db.runQuery(Query(collectionID: "books", filter: Self.eq("ownerId", "u")))
        _ = try await db.runQuery(Query(collectionID: "books", filter: Self.eq("ownerId", "u"), orderBy: [Ordering(Self.f("createdAt")), Ordering(.documentID, descending: true)]))
        let uses = await db.indexUseCounts().map { use in
            "\(use.index.scope.rawValue) \(use.index.collectionGroup) "
                + use.index.fields.map { "\($0.0.canonical) \($0.1)" }.joined(separator: ", ") + " ×\(use.queries)"
        }
        #expect(uses == [
            "COLLECTION books ownerId ascending, createdAt descending, __name__ descending ×2",
            "COLLECTION_GROUP profiles phone ascending, __name__ ascending ×1",
            "COLLECTION books ownerId ascending, createdAt ascending, __name__ descending ×1",
        ])
    }

    /// A vector index, as firebase-tools writes it for `findNearest`, is read (a file holding
    /// one used to stop Flint from starting); with indexes required, a vector search needs one
    /// for its equality filters' fields and a vector of its size, as production does. The
    /// usage report leaves vector searches out, as the reference's does.
    @Test func vectorIndexesAreReadAndRequiredForVectorSearches() async throws {
        let file = #"""
            { "indexes": [
                { "collectionGroup": "docs", "queryScope": "COLLECTION", "fields": [
                  { "fieldPath": "embedding", "vectorConfig": { "dimension": 3, "flat": {} } } ] },
                { "collectionGroup": "docs", "queryScope": "COLLECTION", "fields": [
                  { "fieldPath": "color", "order": "ASCENDING" }, { "fieldPath": "__name__", "order": "ASCENDING" },
                  { "fieldPath": "embedding", "vectorConfig": { "dimension": 3, "flat": {} } } ] } ],
              "fieldOverrides": [ { "collectionGroup": "docs", "fieldPath": "expiresAt", "ttl": true, "indexes": [] } ] }
            """#
        let (indexes, overrides, _) = try IndexFile.parse(Data(file.utf8))
        #expect(indexes.map(\.json) == [
            #"{ "collectionGroup": "docs", "queryScope": "COLLECTION", "fields": [{ "fieldPath": "embedding", "vectorConfig": { "dimension": 3, "flat": {} } }] }"#,
            #"{ "collectionGroup": "docs", "queryScope": "COLLECTION", "fields": [{ "fieldPath": "color", "order": "ASCENDING" }, { "fieldPath": "__name__", "order": "ASCENDING" }, { "fieldPath": "embedding", "vectorConfig": { "dimension": 3, "flat": {} } }] }"#,
        ])
        #expect(overrides.isEmpty)
        var config = DatabaseConfiguration()
        config.requireIndexes = true
        config.declaredIndexes = indexes
        let db = Database(id: DatabaseID(project: "p"), configuration: config)
        _ = try await db.commit([.set(try DocumentKey(parsing: "docs/a"), ["color": "red", "embedding": .vector([1, 2, 3])])])
        func nearest(_ vector: [Double], filter: Filter? = nil, in collection: String = "docs") -> Query {
            Query(collectionID: collection, filter: filter, findNearest: FindNearest(
                field: Self.f("embedding"), queryVector: vector, measure: .euclidean, limit: 5))
        }
        #expect(try await db.runQuery(nearest([1, 2, 3])).documents.count == 1)
        #expect(try await db.runQuery(nearest([1, 2, 3], filter: Self.eq("color", "red"))).documents.count == 1)
        for (query, missing) in [
            (nearest([1, 2]), #"{ "fieldPath": "embedding", "vectorConfig": { "dimension": 2, "flat": {} } }"#),
            (nearest([1, 2, 3], filter: Self.eq("size", 1)), #"{ "fieldPath": "size", "order": "ASCENDING" }, { "fieldPath": "embedding", "vectorConfig": { "dimension": 3, "flat": {} } }"#),
            (nearest([1, 2, 3], in: "other"), #"{ "fieldPath": "embedding", "vectorConfig": { "dimension": 3, "flat": {} } }"#),
        ] {
            let error = await #expect(throws: FlintError.self) { try await db.runQuery(query) }
            #expect(error?.code == .failedPrecondition)
            #expect(error?.message.contains(missing) == true, "\(error?.message ?? "")")
        }
        #expect(await db.indexUseCounts().isEmpty)
        let report = await db.indexUsageReport()
        #expect(try IndexFile.parse(Data(report.firestoreIndexesJSON.utf8)).indexes.count == 5)
    }

    /// A field override replaces a field's automatic single-field indexes with those it lists:
    /// `"indexes": []` exempts the field, so even an equality on it needs an index in
    /// production, and one listing only ascending leaves a descending order without one. A
    /// TTL setting alone changes nothing.
    @Test func fieldOverridesTakeAwayAutomaticIndexes() async throws {
        let file = #"""
            { "fieldOverrides": [
                { "collectionGroup": "logs", "fieldPath": "body", "indexes": [] },
                { "collectionGroup": "logs", "fieldPath": "at", "indexes": [ { "order": "ASCENDING", "queryScope": "COLLECTION" } ] },
                { "collectionGroup": "logs", "fieldPath": "expires", "ttl": true } ] }
            """#
        let parsed = try IndexFile.parse(Data(file.utf8))
        #expect(parsed.settings == [
            SingleFieldSetting(collectionGroup: "logs", field: Self.f("body"), modes: []),
            SingleFieldSetting(collectionGroup: "logs", field: Self.f("at"), modes: [.ascending]),
        ])
        var config = DatabaseConfiguration()
        config.requireIndexes = true
        config.singleFieldSettings = parsed.settings
        let db = Database(id: DatabaseID(project: "p"), configuration: config)
        // Untouched fields, the ascending index left to `at`, and another collection's `body`.
        _ = try await db.runQuery(Query(collectionID: "logs", filter: Self.eq("level", "warn")))
        _ = try await db.runQuery(Query(collectionID: "logs", orderBy: [Ordering(Self.f("at"))]))
        _ = try await db.runQuery(Query(collectionID: "logs", filter: Self.eq("expires", 1)))
        _ = try await db.runQuery(Query(collectionID: "other", filter: Self.eq("body", "x")))
        for (query, missing) in [
            (Query(collectionID: "logs", filter: Self.eq("body", "x")),
             #"field override: { "collectionGroup": "logs", "fieldPath": "body", "indexes": [{ "queryScope": "COLLECTION", "order": "ASCENDING" }] }"#),
            (Query(collectionID: "logs", orderBy: [Ordering(Self.f("at"), descending: true)]),
             #"field override: { "collectionGroup": "logs", "fieldPath": "at", "indexes": [{ "queryScope": "COLLECTION", "order": "DESCENDING" }] }"#),
            (Query(collectionID: "logs", filter: .field(FieldFilter(Self.f("body"), .arrayContains, "x"))),
             #"field override: { "collectionGroup": "logs", "fieldPath": "body", "indexes": [{ "queryScope": "COLLECTION", "arrayConfig": "CONTAINS" }] }"#),
        ] {
            let error = await #expect(throws: FlintError.self) { try await db.runQuery(query) }
            #expect(error?.code == .failedPrecondition)
            #expect(error?.message.contains(missing) == true, "\(error?.message ?? "")")
        }
        // A composite index holding the field serves it.
        config.declaredIndexes = [IndexSpec(collectionGroup: "logs", scope: .collection, fields: [(Self.f("level"), .ascending), (Self.f("body"), .ascending)])]
        let declared = Database(id: DatabaseID(project: "p"), configuration: config)
        _ = try await declared.runQuery(Query(collectionID: "logs", filter: .composite(CompositeFilter(.and, [Self.eq("level", "warn"), Self.eq("body", "x")]))))
        // Not required, the same queries run; automatic indexes are not reported as used.
        let open = Database(id: DatabaseID(project: "p"))
        _ = try await open.runQuery(Query(collectionID: "logs", filter: Self.eq("body", "x")))
        #expect(await open.indexUseCounts().isEmpty)
    }

    @Test func badIndexFilesNameTheProblem() {
        for (text, message) in [
            ("[]", "must be an object"),
            (#"{"indexes": [{"collectionGroup": "c"}]}"#, "indexes[0] needs \"collectionGroup\" and a non-empty \"fields\" list."),
            (#"{"indexes": [{"collectionGroup": "c", "fields": [{"fieldPath": "a", "order": "UP"}]}]}"#, "indexes[0].fields[0].order must be ASCENDING or DESCENDING, not UP."),
            (#"{"indexes": [{"collectionGroup": "c", "queryScope": "X", "fields": [{"fieldPath": "a", "order": "ASCENDING"}]}]}"#, "queryScope must be COLLECTION or COLLECTION_GROUP"),
            (#"{"indexez": []}"#, #"firestore.indexes.json holds "indexes" and "fieldOverrides", not "indexez"."#),
            (#"{"indexes": "x"}"#, "indexes must be a list."),
            (#"{"indexes": [{"collectionGroup": "c", "fields": [{"fieldPath": "v", "vectorConfig": {"dimension": 0, "flat": {}}}]}]}"#, #"indexes[0].fields[0].vectorConfig needs a "dimension" from 1 to 2048."#),
            (#"{"indexes": [{"collectionGroup": "c", "fields": [{"fieldPath": "v", "vectorConfig": {"dimension": "3", "flat": {}}}]}]}"#, #"indexes[0].fields[0].vectorConfig needs a "dimension" from 1 to 2048."#),
            (#"{"indexes": [{"collectionGroup": "c", "fields": [{"fieldPath": "v", "vectorConfig": {"dimension": 3}}]}]}"#, #"indexes[0].fields[0].vectorConfig must be {"dimension": 3, "flat": {}}."#),
            (#"{"indexes": [{"collectionGroup": "c", "fields": [{"fieldPath": "v"}]}]}"#, #"indexes[0].fields[0] needs "order", "arrayConfig" or "vectorConfig"."#),
        ] {
            let e = #expect(throws: FlintError.self) { try IndexFile.parse(Data(text.utf8)) }
            #expect(e?.message.contains(message) == true, "\(e?.message ?? "")")
        }
    }
}
