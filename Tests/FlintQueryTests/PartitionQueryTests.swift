import FlintEngine
import FlintModel
import FlintQuery
import Testing

struct PartitionQueryTests {
    static let group = Query(collectionID: "g", allDescendants: true, orderBy: [Ordering(.documentID)])

    func seeded() async throws -> Database {
        let database = Database(id: db)
        let paths = (0..<10).map { i in i % 3 == 0 ? "g/d\(i)" : "p/x\(i % 3)/g/d\(i)" }
        _ = try await database.commit(paths.map { .set(try! DocumentKey(parsing: $0), ["i": .integer(Int64($0.count))]) })
        return database
    }

    @Test func partitionsSplitTheGroupIntoRangesThatCoverEveryDocumentOnce() async throws {
        let database = try await seeded()
        let (cursors, next) = try await database.partitionQuery(Self.group, partitionCount: 3)
        #expect(cursors.count == 2)
        #expect(next == nil)
        let all = try await database.runQuery(Self.group).documents.map(\.key)
        #expect(all.count == 10)
        #expect(cursors == [all[3], all[6]])
        var covered: [DocumentKey] = []
        let bounds: [DocumentKey?] = [nil] + cursors.map { $0 } + [nil]
        for (start, end) in zip(bounds, bounds.dropFirst()) {
            var part = Self.group
            if let start { part.startAt = Cursor(values: [.reference(DocumentReference(database: db, key: start))], before: true) }
            if let end { part.endAt = Cursor(values: [.reference(DocumentReference(database: db, key: end))], before: true) }
            covered += try await database.runQuery(part).documents.map(\.key)
        }
        #expect(covered == all)
    }

    @Test func pagesAndLimits() async throws {
        let database = try await seeded()
        var token: String? = nil
        var cursors: [DocumentKey] = []
        repeat {
            let page = try await database.partitionQuery(Self.group, partitionCount: 5, pageSize: 1, pageToken: token)
            #expect(page.cursors.count <= 1)
            cursors += page.cursors
            token = page.nextPageToken
        } while token != nil
        #expect(cursors.count == 4)
        #expect(cursors == cursors.sorted())
        #expect(try await database.partitionQuery(Self.group, partitionCount: 100).cursors.count == 9)
        #expect(try await database.partitionQuery(Self.group, partitionCount: 1).cursors.isEmpty)
    }

    @Test func onlyPlainCollectionGroupQueriesArePartitioned() async throws {
        let database = try await seeded()
        for (query, count) in [
            (Query(collectionID: "g", orderBy: [Ordering(.documentID)]), 3),
            (Query(collectionID: "g", allDescendants: true, filter: F("i", .equal, 1)), 3),
            (Query(collectionID: "g", allDescendants: true, orderBy: [Ordering(.documentID, descending: true)]), 3),
            (Query(collectionID: "g", allDescendants: true, limit: 2), 3),
            (Self.group, 0),
        ] {
            let e = await #expect(throws: FlintError.self) { try await database.partitionQuery(query, partitionCount: count) }
            #expect(e?.code == .invalidArgument)
        }
    }
}
