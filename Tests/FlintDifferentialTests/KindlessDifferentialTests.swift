import FlintEngine
import FlintModel
import FlintQuery
import Foundation
import Testing

/// Queries without a collection id and numeric document ids, on Flint's engine and on the
/// reference emulator: the same full names in the same order, or the same error status.
struct KindlessDifferentialTests {
    static let database = DatabaseID(project: "flint-kindless")
    static let paths = [
        "a/1", "a/2", "a/__id9__", "a/1/sub/x", "a/1/sub/x/deep/y", "ab/1", "b/1", "b/1/a/2", "c/__id5__", "c/__id-3__", "c/0", "c/Z",
    ]
    static let lowest = "__id-9223372036854775808__"

    static func reference(_ segments: String...) -> Value {
        .reference(DocumentReference(database: database, key: DocumentKey(unchecked: ResourcePath(segments))))
    }

    static var queries: [(parent: ResourcePath, query: Query)] {
        let low = reference("a", lowest)
        let high = reference("a\u{0}", lowest)
        let a1 = ResourcePath(["a", "1"])
        return [
            (.root, Query(collectionID: nil)),
            (.root, Query(collectionID: nil, allDescendants: true)),
            (a1, Query(parent: a1, collectionID: nil, allDescendants: true)),
            (a1, Query(parent: a1, collectionID: nil)),
            (.root, Query(collectionID: nil, allDescendants: true, filter: .composite(CompositeFilter(.and, [
                .field(FieldFilter(.documentID, .greaterThanOrEqual, low)), .field(FieldFilter(.documentID, .lessThan, high)),
            ])))),
            (.root, Query(collectionID: nil, allDescendants: true, orderBy: [Ordering(.documentID)],
                          startAt: Cursor(values: [low], before: true), endAt: Cursor(values: [high], before: true))),
            (.root, Query(collectionID: nil, allDescendants: true, orderBy: [Ordering(.documentID)],
                          startAt: Cursor(values: [reference("a", "1")], before: false), limit: 3)),
            (.root, Query(collectionID: nil, filter: .field(FieldFilter(try! FieldPath(["v"]), .equal, 1)))),
            (.root, Query(collectionID: nil, orderBy: [Ordering(try! FieldPath(["v"]))])),
            (.root, Query(collectionID: nil, allDescendants: true, filter: .composite(CompositeFilter(.or, [
                .field(FieldFilter(.documentID, .greaterThan, low)), .field(FieldFilter(try! FieldPath(["v", "w x"]), .equal, 1)),
            ])))),
            (a1, Query(parent: a1, collectionID: nil, orderBy: [Ordering(.documentID, descending: true)])),
            (.root, Query(collectionID: "c")),
            (.root, Query(collectionID: "c", limit: 2)),
            (.root, Query(collectionID: "c", filter: .field(FieldFilter(.documentID, .greaterThan, reference("c", lowest))))),
            (.root, Query(collectionID: "c", filter: .field(FieldFilter(.documentID, .lessThan, reference("c", "0"))))),
            (.root, Query(collectionID: "a", allDescendants: true, filter: .field(FieldFilter(.documentID, .greaterThanOrEqual, low)))),
        ]
    }

    /// `paths` written, each `{v: 1}`, to a Flint database and to the same database on the reference.
    static func seeded(_ id: DatabaseID, _ reference: ReferenceEmulator) async throws -> Database {
        let flint = Database(id: id)
        let keys = try paths.map { try DocumentKey(parsing: $0) }
        _ = try await flint.commit(keys.map { .set($0, ["v": 1]) })
        let writes: [[String: Any]] = keys.map { ["update": ["name": id.documentsRoot + "/" + $0.path.canonical, "fields": ["v": ["integerValue": "1"]]]] }
        try #require(try await reference.request("POST", "/v1/" + id.documentsRoot + ":commit", ["writes": writes]).0 == 200)
        return flint
    }

    @Test func kindlessQueriesAndNumericIDsAgreeWithTheReference() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential kindless test skipped")
            return
        }
        defer { reference.stop() }
        let flint = try await Self.seeded(Self.database, reference)
        let root = "/v1/" + Self.database.documentsRoot

        var refused = 0
        for (i, (parent, query)) in Self.queries.enumerated() {
            let at = parent.isEmpty ? root : root + "/" + parent.canonical
            let (code, body) = try await reference.request("POST", at + ":runQuery", QueryDifferentialTests.json(query))
            let prefix = Self.database.documentsRoot + "/"
            let expected = QueryDifferentialTests.outcome(code, body) { String($0.dropFirst(prefix.count)) }
            if case .error = expected { refused += 1 }
            let got: QueryDifferentialTests.Outcome
            do throws(FlintError) {
                got = .ids(try await flint.runQuery(query).documents.map(\.key.path.canonical))
            } catch {
                got = .error(error.code)
                // In the reference's words too.
                #expect(error.message == ((body as? [String: Any])?["error"] as? [String: Any])?["message"] as? String, "query \(i)")
            }
            #expect(got == expected, "query \(i)")
        }
        // Only the filter and the order on a field need a collection id.
        #expect(refused == 4)
    }

    /// ListDocuments without a collection id (REST: a `GET` of the root or a document with a
    /// trailing `/`) lists every collection directly below, page by page; only name order is
    /// allowed, and no missing documents.
    @Test func listingEveryCollectionAgreesWithTheReference() async throws {
        guard let reference = await ReferenceEmulator.start() else {
            print("reference emulator not available; differential kindless listing test skipped")
            return
        }
        defer { reference.stop() }
        let database = DatabaseID(project: "flint-kindless-list")
        let flint = try await Self.seeded(database, reference)
        let root = "/v1/" + database.documentsRoot

        let cases: [(parent: String, query: String, request: ListDocumentsRequest)] = [
            ("", "", ListDocumentsRequest(collectionID: nil)),
            ("a/1/", "", ListDocumentsRequest(parent: ResourcePath(["a", "1"]), collectionID: nil)),
            ("b/1/", "", ListDocumentsRequest(parent: ResourcePath(["b", "1"]), collectionID: nil)),
            ("zz/1/", "", ListDocumentsRequest(parent: ResourcePath(["zz", "1"]), collectionID: nil)),
            ("", "?orderBy=__name__", ListDocumentsRequest(collectionID: nil, orderBy: "__name__")),
            ("", "?orderBy=__name__%20desc", ListDocumentsRequest(collectionID: nil, orderBy: "__name__ desc")),
            ("", "?orderBy=v", ListDocumentsRequest(collectionID: nil, orderBy: "v")),
            ("", "?showMissing=true", ListDocumentsRequest(collectionID: nil, showMissing: true)),
            ("", "?showMissing=true&pageSize=-1", ListDocumentsRequest(collectionID: nil, pageSize: -1, showMissing: true)),
        ]
        let prefix = database.documentsRoot + "/"
        for (parent, query, request) in cases {
            let (status, body) = try await reference.request("GET", root + "/" + parent + query)
            let expected: [String]
            if status == 200 {
                let documents = (body as? [String: Any])?["documents"] as? [[String: Any]] ?? []
                expected = documents.compactMap { ($0["name"] as? String).map { String($0.dropFirst(prefix.count)) } }
            } else {
                expected = [((body as? [String: Any])?["error"] as? [String: Any])?["message"] as? String ?? "status \(status)"]
            }
            var got: [String]
            do throws(FlintError) {
                got = try await flint.listDocuments(request).documents.map(\.key.path.canonical)
            } catch {
                got = [error.message]
            }
            #expect(got == expected, "\(parent)\(query)")
        }

        // Three at a time, following each server's own page tokens.
        var expected: [[String]] = []
        var token: String?
        repeat {
            let page = token.map { "&pageToken=" + $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! } ?? ""
            let (_, body) = try await reference.request("GET", root + "/?pageSize=3" + page)
            let documents = (body as? [String: Any])?["documents"] as? [[String: Any]] ?? []
            expected.append(documents.compactMap { ($0["name"] as? String).map { String($0.dropFirst(prefix.count)) } })
            token = (body as? [String: Any])?["nextPageToken"] as? String
        } while token != nil && expected.count < 10
        var got: [[String]] = []
        token = nil
        repeat {
            let page = try await flint.listDocuments(ListDocumentsRequest(collectionID: nil, pageSize: 3, pageToken: token))
            got.append(page.documents.map(\.key.path.canonical))
            token = page.nextPageToken
        } while token != nil && got.count < 10
        // A full last page is followed by a token, and the page after it lists nothing, on both.
        #expect(got == expected)
        #expect(expected.last == [])
        #expect(expected.joined().count == 9)
    }
}
