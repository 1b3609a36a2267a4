import FlintEngine
import FlintModel
import FlintQuery
import FlintTesting
import Testing

/// Indexes are built on first use and then kept current by every write. After random writes,
/// every query answered through an index must equal the same query answered by scanning the
/// versions at the same read time.
struct IndexConsistencyTests {
    static let values: [Value] = [1, 2, 3, 2.0, "a", "b", .null, .double(.nan), [1, 2], ["a"], [], true]

    static func randomDocument(_ rng: inout SeededGenerator) -> MapValue {
        var m = MapValue()
        for f in ["g", "t", "tags"] where Int.random(in: 0..<4, using: &rng) > 0 {
            m[f] = values[Int.random(in: 0..<values.count, using: &rng)]
        }
        return m
    }

    static let queries: [Query] = [
        Query(collectionID: "c", filter: F("g", .equal, 2), orderBy: [desc("t")]),
        Query(collectionID: "c", filter: F("g", .equal, 2), orderBy: [desc("t")], limit: 3),
        Query(collectionID: "c", filter: F("tags", .arrayContains, 1), orderBy: [asc("t")], limit: 4),
        Query(collectionID: "c", filter: AND(F("g", .equal, "a"), F("t", .greaterThan, 1)), limit: 5),
        Query(collectionID: "c", orderBy: [asc("t")], offset: 2, limit: 5),
        Query(collectionID: "c", filter: F("g", .equal, 1), orderBy: [asc("t")], startAt: Cursor(values: [2], before: false)),
        Query(collectionID: "c", limit: 7),
        Query(collectionID: "c", filter: F("g", .equal, 2), orderBy: [desc("__name__")], limit: 7),
        Query(collectionID: "c", allDescendants: true, filter: F("g", .equal, 2), orderBy: [desc("t")]),
        Query(collectionID: "c", allDescendants: true, orderBy: [asc("t")], limit: 6),
        Query(collectionID: "c", allDescendants: true, filter: F("tags", .arrayContains, "a")),
        Query(parent: ResourcePath(["p", "x1"]), collectionID: "c", allDescendants: true, limit: 6),
        // `in` is read once per value and merged; 2 and 2.0 are one value.
        Query(collectionID: "c", filter: F("g", .in, [1, 2, 2.0, "a"])),
        Query(collectionID: "c", filter: F("g", .in, [3, 1, "b"]), orderBy: [desc("t")], offset: 1, limit: 3),
        Query(collectionID: "c", filter: F("g", .in, [1, 2]), orderBy: [desc("g")], limit: 4),
        Query(collectionID: "c", filter: AND(F("g", .in, [1, 2, 3]), F("tags", .arrayContains, 1)), orderBy: [asc("t")]),
        Query(collectionID: "c", filter: AND(F("g", .in, [1, 2]), F("t", .in, [1, 2, "a"])), limit: 5),
        Query(collectionID: "c", filter: F("g", .in, [1, 2]), orderBy: [asc("t")], startAt: Cursor(values: [2], before: true)),
        Query(collectionID: "c", allDescendants: true, filter: F("g", .in, [2, "a", true]), orderBy: [desc("t")], limit: 6),
        Query(collectionID: "c", filter: F("g", .in, [.null, 1])),
        // array-contains-any likewise; a document holding several of the values comes once.
        Query(collectionID: "c", filter: F("tags", .arrayContainsAny, [1, 2, "a", 2.0])),
        Query(collectionID: "c", filter: F("tags", .arrayContainsAny, [2, 1]), orderBy: [desc("t")], offset: 1, limit: 2),
        Query(collectionID: "c", filter: AND(F("tags", .arrayContainsAny, [1, "a"]), F("g", .in, [1, 2, "a"])), limit: 4),
        Query(collectionID: "c", allDescendants: true, filter: F("tags", .arrayContainsAny, [1, 2]), orderBy: [asc("t")], limit: 5),
    ]

    @Test func indexedAnswersEqualScannedAnswersAfterRandomWrites() async throws {
        var rng = SeededGenerator(seed: 7)
        let database = Database(id: db)
        for round in 0..<40 {
            var writes: [Write] = []
            for _ in 0..<10 {
                let parent = ["", "p/x1/", "p/x2/", "p/x1/c/d3/"][Int.random(in: 0..<4, using: &rng)]
                let key = try DocumentKey(parsing: "\(parent)c/d\(Int.random(in: 0..<20, using: &rng))")
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: writes.append(.delete(key))
                case 1: writes.append(Write(.update(key, Self.randomDocument(&rng)), updateMask: [path("g")]))
                default: writes.append(.set(key, Self.randomDocument(&rng)))
                }
            }
            _ = try await database.commit(writes)
            if round % 13 == 12 { await database.clear(under: ResourcePath(["p", "x2"])) }
            for (i, q) in Self.queries.enumerated() {
                let indexed = try await database.runQuery(q)
                let scanned = try await database.runQuery(q, readTime: indexed.readTime)
                #expect(indexed.documents.map(\.key) == scanned.documents.map(\.key), "round \(round) query \(i)")
                #expect(indexed.documents.map(\.fields) == scanned.documents.map(\.fields), "round \(round) query \(i)")
            }
        }
    }
}
