@testable import FlintEngine
import FlintModel
import FlintQuery
import Testing

/// The admin API's bulk delete: whole collection groups go, one document per commit, so the
/// deletions are seen as any other.
struct BulkDeleteTests {
    static let paths = ["c/a", "d/a", "d/a/e/f", "c/a/d/b", "c/a/d/b/g/h", "x/y"]

    static func seeded() async throws -> Database {
        let (db, _) = makeDatabase()
        _ = try await db.commit(paths.map { .set(key($0), ["n": 1]) })
        return db
    }

    static func remaining(_ db: Database) async throws -> [String] {
        try await paths.asyncFilter { try await db.get(key($0)) != nil }
    }

    @Test func theNamedGroupsGoWhereverTheyAreAndTheirSubcollectionsStay() async throws {
        let db = try await Self.seeded()
        #expect(try await db.bulkDelete(collectionIDs: ["d", "absent"]) == 2)
        #expect(try await Self.remaining(db) == ["c/a", "d/a/e/f", "c/a/d/b/g/h", "x/y"])
        #expect(try await db.bulkDelete(collectionIDs: ["d"]) == 0)
        #expect(try await db.bulkDelete(collectionIDs: ["c", "x"]) == 2)
        #expect(try await Self.remaining(db) == ["d/a/e/f", "c/a/d/b/g/h"])
    }

    @Test func namespacesNarrowTheDelete() async throws {
        let db = try await Self.seeded()
        #expect(try await db.bulkDelete(collectionIDs: ["c"], namespaceIDs: ["elsewhere"]) == 0)
        #expect(try await Self.remaining(db) == Self.paths)
        #expect(try await db.bulkDelete(collectionIDs: ["x"], namespaceIDs: ["", "elsewhere"]) == 1)
        #expect(try await db.bulkDelete(collectionIDs: [], namespaceIDs: [""]) == 5)
        #expect(try await Self.remaining(db) == [])
        await #expect(throws: FlintError(.failedPrecondition, "collection_ids and namespace_ids cannot both be empty.")) {
            try await db.bulkDelete(collectionIDs: [])
        }
    }

    @Test func listenersSeeTheDocumentsGo() async throws {
        let db = try await Self.seeded()
        let (stream, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 1, scope: .query(Query(collectionID: "d", allDescendants: true))), to: stream)
        _ = await db.takeWatchEvents(stream)
        try await db.bulkDelete(collectionIDs: ["d"])
        var deleted: [String] = []
        for case .deleted(let key, let removed, _) in await db.takeWatchEvents(stream) {
            #expect(removed == [1])
            deleted.append(key.path.canonical)
        }
        #expect(deleted.sorted() == ["c/a/d/b", "d/a"])
    }

    @Test func aTransactionThatReadADeletedDocumentLoses() async throws {
        let db = try await Self.seeded()
        let tx = try await db.beginTransaction()
        #expect(try await db.get(key("x/y"), transaction: tx)?.fields == ["n": 1])
        try await db.bulkDelete(collectionIDs: ["x"])
        await #expect(throws: FlintError(.aborted, "Too much contention on these documents. Please try again.")) {
            try await db.commit([.set(key("x/y"), ["n": 2])], transaction: tx)
        }
        #expect(try await db.get(key("x/y")) == nil)
    }
}

extension Array {
    func asyncFilter(_ keep: (Element) async throws -> Bool) async rethrows -> [Element] {
        var kept: [Element] = []
        for element in self where try await keep(element) { kept.append(element) }
        return kept
    }
}
