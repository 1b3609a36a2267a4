import FlintEngine
import FlintModel
import Testing

struct ReadTests {
    @Test func batchGetKeepsOrderReportsMissingAndMasks() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("l/a"), ["n": 3, "m": ["x": 1, "y": 2]]), .set(key("l/b"), ["n": 2])])
        let r = try await db.batchGet([key("l/b"), key("l/zz"), key("l/a")], mask: [field("m.y"), field("q")])
        #expect(r.documents.map(\.0) == [key("l/b"), key("l/zz"), key("l/a")])
        #expect(r.documents[0].1?.fields == [:])
        #expect(r.documents[1].1 == nil)
        #expect(r.documents[2].1?.fields == ["m": ["y": 2]])
        let twice = try await db.batchGet([key("l/a"), key("l/zz"), key("l/a"), key("l/b"), key("l/zz")])
        #expect(twice.documents.map(\.0) == [key("l/a"), key("l/zz"), key("l/b")])
    }

    @Test func readTimeSeesEarlierVersionsWithinRetention() async throws {
        let (db, clock) = makeDatabase(retentionSeconds: 60)
        let v1 = try await db.commit([.set(key("c/a"), ["v": 1])])
        clock.advance(seconds: 10)
        let v2 = try await db.commit([.set(key("c/a"), ["v": 2]), .set(key("c/b"), [:])])
        clock.advance(seconds: 10)
        _ = try await db.commit([.delete(key("c/a"))])
        clock.advance(seconds: 1)
        #expect(try await db.get(key("c/a")) == nil)
        #expect(try await db.get(key("c/a"), readTime: v1.commitTime)?.fields == ["v": 1])
        #expect(try await db.get(key("c/a"), readTime: v2.commitTime)?.fields == ["v": 2])
        #expect(try await db.get(key("c/b"), readTime: v1.commitTime) == nil)
        let listed = try await db.listDocuments(ListDocumentsRequest(collectionID: "c", readTime: v1.commitTime))
        #expect(listed.documents.map(\.key.documentID) == ["a"])
        let batch = try await db.batchGet([key("c/a")], readTime: v2.commitTime)
        #expect(batch.readTime == v2.commitTime)
        #expect(batch.documents[0].1?.updateTime == v2.commitTime)

        await #expect(throws: FlintError.invalidArgument("The requested 'read_time' cannot be in the future.")) {
            try await db.get(key("c/a"), readTime: clock.now().adding(microseconds: 5_000_000))
        }
        clock.advance(seconds: 60)
        await #expect(throws: FlintError(.failedPrecondition, "The requested 'read_time' is too old.")) {
            try await db.get(key("c/a"), readTime: v1.commitTime)
        }
    }

    @Test func listIsOrderedByIDAndPagesThroughOneSnapshot() async throws {
        let (db, clock) = makeDatabase()
        let ids = ["b", "a", "\u{e9}", "e\u{301}", "Z", "c"]
        _ = try await db.commit(ids.map { .set(key("l/\($0)"), ["id": .string($0)]) })
        clock.advance(seconds: 1)
        var page = try await db.listDocuments(ListDocumentsRequest(collectionID: "l", pageSize: 4))
        var seen = page.documents.map(\.key.documentID)
        #expect(seen == ["Z", "a", "b", "c"])
        // Changes after the first page do not leak into later pages.
        _ = try await db.commit([.set(key("l/d"), [:]), .delete(key("l/\u{e9}"))])
        while let token = page.nextPageToken {
            page = try await db.listDocuments(ListDocumentsRequest(collectionID: "l", pageSize: 4, pageToken: token))
            seen += page.documents.map(\.key.documentID)
        }
        #expect(seen == ["Z", "a", "b", "c", "e\u{301}", "\u{e9}"])
        let fresh = try await db.listDocuments(ListDocumentsRequest(collectionID: "l"))
        #expect(fresh.documents.map(\.key.documentID) == ["Z", "a", "b", "c", "d", "e\u{301}"])
        #expect(fresh.nextPageToken == nil)
    }

    @Test func listOrderByExcludesDocumentsWithoutTheField() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([
            .set(key("l/a"), ["n": 3]), .set(key("l/b"), ["n": 2]), .set(key("l/c"), ["n": 1]),
            .set(key("l/d"), ["other": 1]), .set(key("l/e"), ["n": 2]),
        ])
        let desc = try await db.listDocuments(ListDocumentsRequest(collectionID: "l", orderBy: "n desc"))
        #expect(desc.documents.map(\.key.documentID) == ["a", "e", "b", "c"])
        let asc = try await db.listDocuments(ListDocumentsRequest(collectionID: "l", pageSize: 2, orderBy: "n", mask: ["n"]))
        #expect(asc.documents.map(\.key.documentID) == ["c", "b"])
        let next = try await db.listDocuments(ListDocumentsRequest(collectionID: "l", pageSize: 2, pageToken: asc.nextPageToken, orderBy: "n"))
        #expect(next.documents.map(\.key.documentID) == ["e", "a"])
    }

    @Test func showMissingListsParentsOfSubcollections() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([
            .set(key("l/b"), [:]), .set(key("l/a"), [:]), .set(key("l/m/sub/x"), [:]),
            .set(key("l/c/sub2/x"), [:]), .set(key("l/c"), [:]),
        ])
        let all = try await db.listDocuments(ListDocumentsRequest(collectionID: "l", showMissing: true))
        #expect(all.documents.map(\.key.documentID) == ["a", "b", "c", "m"])
        #expect(all.documents.map { $0.document == nil } == [false, false, false, true])
        var ids: [String] = []
        var token: String? = nil
        repeat {
            let p = try await db.listDocuments(ListDocumentsRequest(collectionID: "l", pageSize: 1, pageToken: token, showMissing: true))
            ids += p.documents.map(\.key.documentID)
            token = p.nextPageToken
        } while token != nil
        #expect(ids == ["a", "b", "c", "m"])
        let plain = try await db.listDocuments(ListDocumentsRequest(collectionID: "l"))
        #expect(plain.documents.map(\.key.documentID) == ["a", "b", "c"])
    }

    @Test func listRejectsBadArguments() async throws {
        let (db, _) = makeDatabase()
        await #expect(throws: FlintError.invalidArgument("Page size must be nonnegative.")) {
            try await db.listDocuments(ListDocumentsRequest(collectionID: "l", pageSize: -1))
        }
        await #expect(throws: FlintError.invalidArgument("invalid page token")) {
            try await db.listDocuments(ListDocumentsRequest(collectionID: "l", pageToken: "garbage"))
        }
        await #expect(throws: FlintError.invalidArgument("cannot specify an order when show_missing is true")) {
            var request = ListDocumentsRequest(collectionID: "l", showMissing: true)
            request.orderBy = "n"
            return try await db.listDocuments(request)
        }
        // Order terms: names as each field is read, then (after the page token) repeats and
        // fields after `__name__`, as the reference tells them.
        let orders: [(String, String?, String)] = [
            ("__x__,n+foo", nil, "Invalid reserved name in field path __x__"),
            ("n+foo,n,n", nil, #"Invalid order by clause "n+foo,n,n"."#),
            ("a.__key__", nil, #"Invalid property path member name "__key__"."#),
            ("__name__.x", nil, "the name __key__ is reserved"),
            // A term's field is the run of segments at its start, read before the rest of the term.
            ("__x__.", nil, "Invalid reserved name in field path __x__"),
            ("a,`\\x5f_x__`-a", nil, "Invalid reserved name in field path __x__"),
            ("__key__+foo", nil, #"Invalid property path member name "__key__"."#),
            ("a.`\\q` desc", nil, #"Invalid property path "a.`\q`". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\]|(?:\\.))+`)"#),
            ("__name__.", nil, #"Invalid order by clause "__name__."."#),
            ("`a`b", nil, #"Invalid order by clause "`a`b"."#),
            ("n,n", "garbage", "invalid page token"),
            ("n, n", nil, "order by clause cannot contain duplicate fields n"),
            ("__name__ desc,n", nil, "order by clause cannot contain more fields after the key"),
        ]
        for (orderBy, token, message) in orders {
            await #expect(throws: FlintError.invalidArgument(message), "\(orderBy)") {
                try await db.listDocuments(ListDocumentsRequest(collectionID: "l", pageToken: token, orderBy: orderBy))
            }
        }
        // The mask is read after the page size and before the order, path by path: a path that
        // does not parse is told after an earlier path's reserved name.
        let unparsable = "Invalid property path \"/\". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)"
        let masks: [([String], Int, String, String)] = [
            (["/"], -1, "", "Page size must be nonnegative."),
            (["/"], 0, "__x__", unparsable),
            (["__x__", "/"], 0, "", "Invalid reserved name in field path __x__"),
            (["a.__name__", "/"], 0, "", unparsable),
            (["a.__name__", "b"], 0, "/", "the name __key__ is reserved"),
        ]
        for (mask, pageSize, orderBy, message) in masks {
            await #expect(throws: FlintError.invalidArgument(message), "\(mask)") {
                try await db.listDocuments(ListDocumentsRequest(collectionID: "l", pageSize: pageSize, orderBy: orderBy, mask: mask))
            }
        }
        // Across collections only `__name__` ascending is allowed, told before repeats.
        await #expect(throws: FlintError.invalidArgument("kind is required for all orders except __key__ ascending")) {
            try await db.listDocuments(ListDocumentsRequest(collectionID: nil, orderBy: "n,n"))
        }
        await #expect(throws: FlintError.invalidArgument("order by clause cannot contain more fields after the key")) {
            try await db.listDocuments(ListDocumentsRequest(collectionID: nil, orderBy: "__name__,__name__"))
        }
    }

    /// A listing's checks in the reference's order: its transaction; missing documents without
    /// a collection; the page size; the collection id's form; an order beside missing documents;
    /// the mask; the order; the read time's form; the page token; the collection id's length
    /// (not measured when missing documents are shown); then the read time against the clock.
    @Test func aListingsChecksComeInTheReferencesOrder() async throws {
        let (db, _) = makeDatabase()
        let closed = try await db.beginTransaction()
        try await db.rollback(closed)
        let long = String(repeating: "x", count: 1501)
        let badTime = Result<Timestamp, FlintError>.failure(.invalidArgument("Only timestamps past epoch are supported."))
        func listing(_ id: String?, _ change: (inout ListDocumentsRequest) -> Void) -> ListDocumentsRequest {
            var request = ListDocumentsRequest(collectionID: id)
            change(&request)
            return request
        }
        let cases: [(ListDocumentsRequest, FlintError)] = [
            (listing("__x__") { $0.transaction = closed; $0.pageSize = -1 }, .invalidArgument("Transaction is invalid or closed.")),
            (listing(nil) { $0.transaction = closed; $0.showMissing = true }, .invalidArgument("Transaction is invalid or closed.")),
            (listing("__x__") { $0.pageSize = -1 }, .invalidArgument("Page size must be nonnegative.")),
            (listing("a/b") { $0.mask = ["/"] }, .invalidArgument(#"Collection id "a/b" is invalid because it contains "/"."#)),
            (listing("__x__") { $0.showMissing = true; $0.orderBy = "n" }, .invalidArgument(#"Collection id "__x__" is invalid because it is reserved."#)),
            (listing(long) { $0.showMissing = true; $0.orderBy = "n" }, .invalidArgument("cannot specify an order when show_missing is true")),
            (listing(long) { $0.mask = ["__x__"] }, .invalidArgument("Invalid reserved name in field path __x__")),
            (listing("c") { $0.orderBy = "__x__"; $0.readTime = badTime }, .invalidArgument("Invalid reserved name in field path __x__")),
            (listing("c") { $0.readTime = badTime; $0.pageToken = "garbage" }, .invalidArgument("Only timestamps past epoch are supported.")),
            (listing(long) { $0.readTime = badTime }, .invalidArgument("Only timestamps past epoch are supported.")),
            (listing(long) { $0.pageToken = "garbage" }, .invalidArgument("invalid page token")),
            (listing(long) { $0.readTime = .success(Timestamp(microseconds: 1)) }, .invalidArgument("The query kind is longer than 1500 bytes.")),
            (listing("c") { $0.readTime = .success(Timestamp(microseconds: 1)) }, FlintError(.failedPrecondition, "The requested 'read_time' is too old.")),
        ]
        for (request, error) in cases {
            await #expect(throws: error, "\(request.collectionID?.prefix(8) ?? "nil") \(request.orderBy) \(request.mask ?? [])") {
                try await db.listDocuments(request)
            }
        }
        // With missing documents shown, a collection id too long to hold anything lists nothing.
        let shown = try await db.listDocuments(listing(long) { $0.showMissing = true })
        #expect(shown.documents.isEmpty)
    }

    /// Pages as the reference gives them: 30 documents when no size is asked, never more than
    /// 150, each full page followed by a token, and every document reached by following them.
    @Test func listPagesAreThirtyByDefaultAndAtMostAHundredAndFifty() async throws {
        let (db, _) = makeDatabase()
        let ids = (0..<200).map { String(format: "d%03d", $0) }
        _ = try await db.commit(ids.map { .set(key("l/\($0)"), ["n": .integer(Int64($0.dropFirst())!)]) })
        _ = try await db.commit([.set(key("l/d050x/s/y"), [:])])
        let cases: [(pageSize: Int, orderBy: String, showMissing: Bool, first: Int)] = [
            (0, "", false, 30), (1000, "", false, 150), (151, "", false, 150), (149, "", false, 149),
            (0, "n desc", false, 30), (Int(Int32.max), "n", false, 150), (-1, "", true, 30), (500, "", true, 150),
        ]
        for c in cases {
            var request = ListDocumentsRequest(collectionID: "l", pageSize: c.pageSize, orderBy: c.orderBy, showMissing: c.showMissing)
            var page = try await db.listDocuments(request)
            #expect(page.documents.count == c.first, "\(c)")
            var seen = page.documents.map(\.key.documentID)
            while let token = page.nextPageToken {
                request.pageToken = token
                page = try await db.listDocuments(request)
                #expect(page.documents.count <= c.first, "\(c)")
                seen += page.documents.map(\.key.documentID)
            }
            let expected = c.orderBy == "n desc" ? Array(ids.reversed()) : (c.showMissing ? (ids + ["d050x"]).sorted() : ids)
            #expect(seen == expected, "\(c)")
        }
    }

    /// With missing documents shown, the reference takes any page size (one below 1 gives the
    /// default page) and answers whole documents whatever the mask.
    @Test func showMissingIgnoresPageSizeSignAndMask() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("l/a"), ["n": 1, "m": 2]), .set(key("l/p/s/x"), [:])])
        let page = try await db.listDocuments(ListDocumentsRequest(collectionID: "l", pageSize: -1, mask: ["n"], showMissing: true))
        #expect(page.documents.map(\.key.documentID) == ["a", "p"])
        #expect(page.documents.first?.document?.fields == ["n": 1, "m": 2])
        #expect(page.documents.last?.document == nil)
        let masked = try await db.listDocuments(ListDocumentsRequest(collectionID: "l", mask: ["n"]))
        #expect(masked.documents.first?.document?.fields == ["n": 1])
    }

    @Test func collectionIDsAtRootAndUnderDocumentsWithPaging() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([
            .set(key("t/1"), [:]), .set(key("c/1"), [:]), .set(key("l/m/sub/x"), [:]),
            .set(key("l/m/other/y"), [:]), .set(key("gone/1"), [:]),
        ])
        _ = try await db.commit([.delete(key("gone/1"))])
        #expect(try await db.listCollectionIDs(parent: .root).collectionIDs == ["c", "l", "t"])
        #expect(try await db.listCollectionIDs(parent: ResourcePath(["l", "m"])).collectionIDs == ["other", "sub"])
        #expect(try await db.listCollectionIDs(parent: ResourcePath(["l", "none"])).collectionIDs == [])
        let first = try await db.listCollectionIDs(parent: .root, pageSize: 2)
        #expect(first.collectionIDs == ["c", "l"])
        let second = try await db.listCollectionIDs(parent: .root, pageSize: 2, pageToken: first.nextPageToken)
        #expect(second == CollectionIDsPage(collectionIDs: ["t"], nextPageToken: nil))
        // A full page is followed by a token even when nothing follows, as on the reference.
        let whole = try await db.listCollectionIDs(parent: ResourcePath(["l", "m"]), pageSize: 2)
        #expect(whole.collectionIDs == ["other", "sub"])
        let token = try #require(whole.nextPageToken)
        let after = try await db.listCollectionIDs(parent: ResourcePath(["l", "m"]), pageSize: 2, pageToken: token)
        #expect(after == CollectionIDsPage(collectionIDs: [], nextPageToken: nil))
        // The page size, then a requested read time against the clock, then the token, as the
        // reference checks them.
        let old = Timestamp(microseconds: 1)
        await #expect(throws: FlintError.invalidArgument("page_size must be greater than or equal to zero.")) {
            try await db.listCollectionIDs(parent: .root, pageSize: -1, pageToken: "garbage", readTime: old)
        }
        await #expect(throws: FlintError(.failedPrecondition, "The requested 'read_time' is too old.")) {
            try await db.listCollectionIDs(parent: .root, pageToken: "garbage", readTime: old)
        }
        await #expect(throws: FlintError.invalidArgument("invalid page token")) {
            try await db.listCollectionIDs(parent: .root, pageToken: "garbage")
        }
    }

    @Test func aFullLastPageOfDocumentsIsFollowedByAnEmptyOne() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit(["a", "b", "c", "d"].map { .set(key("l/\($0)"), ["n": 1]) } + [.set(key("l/m/s/x"), [:])])
        for request in [
            ListDocumentsRequest(collectionID: "l", pageSize: 2), ListDocumentsRequest(collectionID: "l", pageSize: 2, orderBy: "n"),
            ListDocumentsRequest(collectionID: "l", pageSize: 5, showMissing: true),
        ] {
            var pages: [[String]] = []
            var page = try await db.listDocuments(request)
            pages.append(page.documents.map(\.key.documentID))
            while let token = page.nextPageToken, pages.count < 5 {
                var next = request
                next.pageToken = token
                page = try await db.listDocuments(next)
                pages.append(page.documents.map(\.key.documentID))
            }
            let expected = request.showMissing ? [["a", "b", "c", "d", "m"], []] : [["a", "b"], ["c", "d"], []]
            #expect(pages == expected, "\(request)")
        }
    }

    @Test func clearRemovesASubtreeOrEverything() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("a/1"), [:]), .set(key("a/1/s/1"), [:]), .set(key("b/1"), [:])])
        await db.clear(under: ResourcePath(["a", "1"]))
        #expect(try await db.get(key("a/1")) == nil)
        #expect(try await db.get(key("a/1/s/1")) == nil)
        #expect(try await db.get(key("b/1")) != nil)
        await db.clear()
        #expect(await db.documentCount == 0)
        #expect(try await db.listCollectionIDs(parent: .root).collectionIDs == [])
    }
}
