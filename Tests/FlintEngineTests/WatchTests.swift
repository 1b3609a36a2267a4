@testable import FlintEngine
import FlintModel
import FlintQuery
import Testing

/// A compact reading of watch events: "add 1", "change c/a [1] -[]", "delete c/b -[1]",
/// "filter 1 count 2", "current 1", "global", "remove 1", "reset 1".
private func describe(_ events: [WatchEvent]) -> [String] {
    events.map { e in
        switch e {
        case .target(let kind, let ids, _, _, let cause):
            let name = ids.isEmpty && kind == .noChange ? "global" : "\(kind) " + ids.map(String.init).joined(separator: ",")
            return cause.map { name + " cause \($0.code.name): \($0.message)" } ?? name
        case .changed(let doc, let targets, let removed):
            return "change \(doc.key.path.canonical) \(targets) -\(removed)"
        case .deleted(let key, let removed, _):
            return "delete \(key.path.canonical) -\(removed)"
        case .existenceFilter(let id, let count, _):
            return "filter \(id) count \(count)"
        }
    }
}

private func query(_ collection: String, where filter: Filter? = nil, orderBy: [Ordering] = [], limit: Int? = nil) -> WatchScope {
    .query(Query(collectionID: collection, filter: filter, orderBy: orderBy, limit: limit))
}

private func n(_ op: FieldFilter.Operator, _ v: Value) -> Filter { .field(FieldFilter(field("n"), op, v)) }

struct WatchTests {
    @Test func initialResultsThenCurrentThenAConsistentPoint() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/b"), ["n": 2]), .set(key("c/a"), ["n": 1]), .set(key("c/z"), ["n": 9]), .set(key("d/a"), ["n": 1])])
        let (stream, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 1, scope: query("c", where: n(.lessThan, 5))), to: stream)
        let events = await db.takeWatchEvents(stream)
        #expect(describe(events) == ["add 1", "change c/a [1] -[]", "change c/b [1] -[]", "current 1", "global"])
        guard case .target(.noChange, _, let token?, let readTime?, nil) = events.last else {
            Issue.record("the consistent point carries a token and a read time")
            return
        }
        #expect(ResumeToken.decode(token) == readTime)
        #expect(await db.takeWatchEvents(stream).isEmpty)
    }

    @Test func changesArriveAsEnterModifyLeaveAndDelete() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/a"), ["n": 1]), .set(key("c/b"), ["n": 2])])
        let (stream, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 3, scope: query("c", where: n(.lessThan, 5))), to: stream)
        _ = await db.takeWatchEvents(stream)

        _ = try await db.commit([.set(key("c/c"), ["n": 3]), .set(key("c/a"), ["n": 10]), .set(key("other/x"), ["n": 1])])
        _ = try await db.commit([.delete(key("c/b"))])
        let events = await db.takeWatchEvents(stream)
        #expect(describe(events) == ["change c/a [] -[3]", "delete c/b -[3]", "change c/c [3] -[]", "global"])
        if case .changed(let doc, _, _) = events[0] { #expect(doc.fields == ["n": 10]) }

        // A write that changes nothing the target shows sends nothing.
        _ = try await db.commit([.set(key("c/a"), ["n": 11])])
        #expect(await db.takeWatchEvents(stream).isEmpty)
    }

    @Test func aSlowReaderGetsTheLatestStateOnce() async throws {
        let (db, _) = makeDatabase()
        let (stream, signal) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 1, scope: .documents([key("c/a")])), to: stream)
        #expect(describe(await db.takeWatchEvents(stream)) == ["add 1", "current 1", "global"])
        for i in 1...500 { _ = try await db.commit([.set(key("c/a"), ["n": .integer(Int64(i))])]) }
        let events = await db.takeWatchEvents(stream)
        #expect(describe(events) == ["change c/a [1] -[]", "global"])
        if case .changed(let doc, _, _) = events[0] { #expect(doc.fields == ["n": 500]) }
        // The signal holds one pending wake-up however many commits happened.
        var wakeUps = 0
        await db.closeWatch(stream)
        for await _ in signal { wakeUps += 1 }
        #expect(wakeUps == 1)
    }

    @Test func limitWindowsLetDocumentsEnterAndLeave() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/a"), ["n": 1]), .set(key("c/b"), ["n": 2]), .set(key("c/c"), ["n": 3])])
        let (stream, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 2, scope: query("c", orderBy: [Ordering(field("n"))], limit: 2)), to: stream)
        #expect(describe(await db.takeWatchEvents(stream)) == ["add 2", "change c/a [2] -[]", "change c/b [2] -[]", "current 2", "global"])
        _ = try await db.commit([.set(key("c/z"), ["n": 0])])
        #expect(describe(await db.takeWatchEvents(stream)) == ["change c/z [2] -[]", "change c/b [] -[2]", "global"])
        _ = try await db.commit([.delete(key("c/z"))])
        #expect(describe(await db.takeWatchEvents(stream)) == ["change c/b [2] -[]", "delete c/z -[2]", "global"])
    }

    @Test func oneEventPerDocumentForEveryTargetItConcerns() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/a"), ["n": 1])])
        let (stream, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 1, scope: query("c", where: n(.lessThan, 5))), to: stream)
        try await db.addWatchTarget(WatchTarget(id: 2, scope: query("c", where: n(.greaterThan, 2))), to: stream)
        try await db.addWatchTarget(WatchTarget(id: 3, scope: .documents([key("c/a")])), to: stream)
        #expect(describe(await db.takeWatchEvents(stream)) == [
            "add 1", "add 2", "add 3", "change c/a [1, 3] -[]", "current 1", "current 2", "current 3", "global",
        ])
        _ = try await db.commit([.set(key("c/a"), ["n": 4])])
        #expect(describe(await db.takeWatchEvents(stream)) == ["change c/a [1, 2, 3] -[]", "global"])
        _ = try await db.commit([.set(key("c/a"), ["n": 7])])
        #expect(describe(await db.takeWatchEvents(stream)) == ["change c/a [2, 3] -[1]", "global"])
    }

    @Test func resumingSendsOnlyWhatChangedWithAnExistenceFilter() async throws {
        let (db, clock) = makeDatabase(retentionSeconds: 60)
        _ = try await db.commit([.set(key("c/a"), ["n": 1]), .set(key("c/b"), ["n": 2]), .set(key("c/c"), ["n": 3])])
        let (first, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 1, scope: query("c")), to: first)
        guard case .target(.noChange, _, let token?, _, _) = await db.takeWatchEvents(first).last else {
            Issue.record("no token")
            return
        }
        await db.closeWatch(first)
        clock.advance(seconds: 1)
        _ = try await db.commit([.set(key("c/b"), ["n": 20]), .delete(key("c/c")), .set(key("c/d"), ["n": 4])])

        let (second, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 1, scope: query("c"), resumeToken: token), to: second)
        let events = await db.takeWatchEvents(second)
        #expect(describe(events) == [
            "add 1", "change c/b [1] -[]", "change c/d [1] -[]", "delete c/c -[1]", "filter 1 count 3", "current 1", "global",
        ])
        guard case .existenceFilter(_, _, let bloom?) = events[4] else {
            Issue.record("the filter carries the names")
            return
        }
        for id in ["a", "b", "d"] { #expect(bloom.mightContain("projects/p1/databases/(default)/documents/c/\(id)")) }

        // Beyond retention, or with a token from elsewhere, the target is reset and sent whole.
        clock.advance(seconds: 120)
        for resume in [WatchTarget(id: 2, scope: query("c"), resumeToken: token), WatchTarget(id: 3, scope: query("c"), resumeToken: [1, 2, 3])] {
            try await db.addWatchTarget(resume, to: second)
            let id = resume.id
            let events = await db.takeWatchEvents(second)
            #expect(describe(events) == [
                "add \(id)", "reset \(id)", "change c/a [\(id)] -[]", "change c/b [\(id)] -[]", "change c/d [\(id)] -[]", "current \(id)", "global",
            ])
            // The reset already carries where the client's view will stand, as the current does.
            guard case .target(.reset, _, let resetToken?, let resetTime?, nil) = events[1],
                case .target(.current, _, let currentToken, let currentTime, nil) = events[5]
            else {
                Issue.record("the reset carries a token and a read time")
                continue
            }
            #expect(resetToken == currentToken && resetTime == currentTime)
        }
    }

    @Test func chosenTargetIdsFollowTheHighestSeen() async throws {
        let (db, _) = makeDatabase()
        let (stream, _) = await db.openWatch()
        var ids: [Int32] = []
        for requested: Int32 in [0, 10, 0, 5, 0] {
            ids.append(try await db.addWatchTarget(WatchTarget(id: requested, scope: query("c")), to: stream))
        }
        await db.removeWatchTarget(12, from: stream)
        ids.append(try await db.addWatchTarget(WatchTarget(id: 0, scope: query("c")), to: stream))
        // A rejected target uses up its id too.
        ids.append(try await db.addWatchTarget(WatchTarget(id: 0, scope: .query(Query(collectionID: "c", filter: n(.in, .array([]))))), to: stream))
        ids.append(try await db.addWatchTarget(WatchTarget(id: 0, scope: query("c")), to: stream))
        #expect(ids == [1, 10, 11, 5, 12, 13, 14, 15])
    }

    @Test func documentTargetsSendNothingForAMissingDocument() async throws {
        let (db, _) = makeDatabase()
        let (stream, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 4, scope: .documents([key("c/a"), key("c/b")])), to: stream)
        #expect(describe(await db.takeWatchEvents(stream)) == ["add 4", "current 4", "global"])
        _ = try await db.commit([.set(key("c/b"), ["x": true]), .set(key("c/zz"), [:])])
        #expect(describe(await db.takeWatchEvents(stream)) == ["change c/b [4] -[]", "global"])
        _ = try await db.commit([.delete(key("c/b"))])
        #expect(describe(await db.takeWatchEvents(stream)) == ["delete c/b -[4]", "global"])
    }

    @Test func targetIdsRemovalOnceAndRejectedTargets() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/a"), ["n": 1])])
        let (stream, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 5, scope: query("c")), to: stream)
        await #expect(throws: FlintError.invalidArgument("Target ID 5 is already in use on this stream.")) {
            try await db.addWatchTarget(WatchTarget(id: 5, scope: query("c")), to: stream)
        }
        // Id 0 takes the one after the highest the stream has seen, as on the reference.
        let chosen = try await db.addWatchTarget(WatchTarget(id: 0, scope: .documents([key("c/a")]), once: true), to: stream)
        #expect(chosen == 6)
        #expect(describe(await db.takeWatchEvents(stream)) == [
            "add 5", "add \(chosen)", "change c/a [5, \(chosen)] -[]", "current 5", "current \(chosen)", "global", "remove \(chosen)",
        ])
        await db.removeWatchTarget(5, from: stream)
        await db.removeWatchTarget(99, from: stream)
        #expect(describe(await db.takeWatchEvents(stream)) == ["remove 5"])
        _ = try await db.commit([.set(key("c/a"), ["n": 2])])
        #expect(await db.takeWatchEvents(stream).isEmpty)

        let bad = Query(collectionID: "c", filter: n(.in, .array([])))
        try await db.addWatchTarget(WatchTarget(id: 6, scope: .query(bad)), to: stream)
        let events = describe(await db.takeWatchEvents(stream))
        #expect(events.count == 2)
        #expect(events.first == "add 6")
        #expect(events.last?.hasPrefix("remove 6 cause INVALID_ARGUMENT: ") == true)
    }

    /// A target's query is planned before its offset and limit are looked at, as the
    /// reference plans it: a repeated order is its cause, not a negative limit; alone, the
    /// negative limit or offset is.
    @Test func aTargetsOrderIsToldBeforeItsBounds() async throws {
        let (db, _) = makeDatabase()
        let (stream, _) = await db.openWatch()
        let twice = [Ordering(field("n")), Ordering(field("n"))]
        let cases: [(Query, String)] = [
            (Query(collectionID: "c", orderBy: twice, limit: -1), "order by clause cannot contain duplicate fields n"),
            (Query(collectionID: "c", orderBy: twice, offset: -1), "order by clause cannot contain duplicate fields n"),
            (Query(collectionID: "c", limit: -1), "limit is negative"),
            (Query(collectionID: "c", offset: -1, limit: -1), "offset is negative"),
        ]
        for (i, (query, cause)) in cases.enumerated() {
            let id = Int32(i + 1)
            try await db.addWatchTarget(WatchTarget(id: id, scope: .query(query)), to: stream)
            #expect(describe(await db.takeWatchEvents(stream)) == ["add \(id)", "remove \(id) cause INVALID_ARGUMENT: \(cause)"])
        }
    }

    @Test func clearingDeletesWhatListenersHold() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/a"), ["n": 1]), .set(key("c/b"), ["n": 2])])
        let (stream, _) = await db.openWatch()
        try await db.addWatchTarget(WatchTarget(id: 1, scope: query("c", orderBy: [Ordering(field("n"))], limit: 5)), to: stream)
        _ = await db.takeWatchEvents(stream)
        await db.clear()
        #expect(describe(await db.takeWatchEvents(stream)) == ["delete c/a -[1]", "delete c/b -[1]", "global"])
    }

    @Test func bloomFiltersHoldTheirNamesAtAboutOnePercentFalsePositives() {
        let names = (0..<200).map { "projects/p/databases/(default)/documents/c/doc\($0)" }
        let filter = BloomFilter(names: names)
        #expect(filter.hashCount == 7)
        #expect(filter.bitmap.count * 8 - filter.padding == 1920)
        #expect(names.allSatisfy(filter.mightContain))
        let strangers = (0..<2000).filter { filter.mightContain("projects/p/databases/(default)/documents/x/\($0)") }.count
        #expect(strangers < 60)  // about 1% expected
        #expect(!BloomFilter(names: []).mightContain("a"))
    }
}

struct SnapshotAssemblerTests {
    private func changes(_ s: ViewSnapshot) -> [String] {
        s.changes.map { "\($0.kind.rawValue) \($0.document.key.documentID) \($0.oldIndex) \($0.newIndex)" }
    }

    @Test func snapshotsIndexChangesAsTheSDKsDo() async throws {
        let (db, _) = makeDatabase()
        _ = try await db.commit([.set(key("c/a"), ["n": 1]), .set(key("c/b"), ["n": 2]), .set(key("c/c"), ["n": 3])])
        let (stream, _) = await db.openWatch()
        let q = Query(collectionID: "c", filter: n(.lessThan, 10), orderBy: [Ordering(field("n"))])
        try await db.addWatchTarget(WatchTarget(id: 1, scope: .query(q)), to: stream)
        try await db.addWatchTarget(WatchTarget(id: 2, scope: .query(Query(collectionID: "empty"))), to: stream)
        var views = SnapshotAssembler()
        views.register(1, query: try NormalizedQuery(q, database: db.id))
        views.register(2, query: try NormalizedQuery(Query(collectionID: "empty"), database: db.id))

        var out = views.apply(await db.takeWatchEvents(stream)).snapshots
        #expect(out.map(\.targetID) == [1, 2])
        #expect(out[0].documents.map(\.key.documentID) == ["a", "b", "c"])
        #expect(changes(out[0]) == ["added a -1 0", "added b -1 1", "added c -1 2"])
        #expect(out[1].documents.isEmpty && out[1].changes.isEmpty)

        // a moves to the end, b leaves, d arrives first.
        _ = try await db.commit([.set(key("c/a"), ["n": 5]), .set(key("c/b"), ["n": 50]), .set(key("c/d"), ["n": 0])])
        out = views.apply(await db.takeWatchEvents(stream)).snapshots
        #expect(out.count == 1)
        #expect(out[0].documents.map(\.key.documentID) == ["d", "c", "a"])
        // Each index counts the changes before it: after b left and d arrived, a sat at 1.
        #expect(changes(out[0]) == ["removed b 1 -1", "added d -1 0", "modified a 1 2"])

        _ = try await db.commit([.set(key("c/zz"), ["n": 99])])
        #expect(views.apply(await db.takeWatchEvents(stream)).snapshots.isEmpty)

        let bad = Query(collectionID: "c", filter: n(.in, .array([])))
        try await db.addWatchTarget(WatchTarget(id: 3, scope: .query(bad)), to: stream)
        views.register(3, query: nil)
        let failures = views.apply(await db.takeWatchEvents(stream)).removed
        #expect(failures.map(\.0) == [3])
        #expect(failures.first?.1?.code == .invalidArgument)

        await db.removeWatchTarget(2, from: stream)
        let removed = views.apply(await db.takeWatchEvents(stream)).removed
        #expect(removed.map(\.0) == [2] && removed.first?.1 == nil)
    }
}

struct SnapshotIndexingTests {
    /// The order-statistics path must index exactly as the change-by-change walk does.
    @Test func bothIndexingPathsAgreeOnRandomChanges() throws {
        var random = SystemRandomNumberGenerator()
        let query = try NormalizedQuery(Query(collectionID: "c", orderBy: [Ordering(field("n"))]), database: DatabaseID(project: "p"))
        let t = Timestamp(microseconds: 1)
        func doc(_ id: Int, _ n: Int, _ version: Int64) -> Document {
            Document(key: key("c/d\(id)"), fields: ["n": .integer(Int64(n))], createTime: t, updateTime: Timestamp(microseconds: version))
        }
        for round in 0..<50 {
            var walk = SnapshotAssembler(largeChangeCount: Int.max)
            var tree = SnapshotAssembler(largeChangeCount: 0)
            walk.register(1, query: query)
            tree.register(1, query: query)
            var live: [Int: Int] = [:]
            var events: [WatchEvent] = [.target(.current, ids: [1], resumeToken: nil, readTime: nil, cause: nil)]
            for id in 0..<40 where Bool.random(using: &random) {
                live[id] = Int.random(in: 0..<20, using: &random)
                events.append(.changed(doc(id, live[id]!, 1), targetIDs: [1], removedTargetIDs: []))
            }
            events.append(.target(.noChange, ids: [], resumeToken: nil, readTime: t, cause: nil))
            _ = walk.apply(events)
            _ = tree.apply(events)
            for step in 0..<5 {
                var batch: [WatchEvent] = []
                for id in 0..<40 where Int.random(in: 0..<3, using: &random) == 0 {
                    if live[id] != nil, Bool.random(using: &random) {
                        live[id] = nil
                        batch.append(.deleted(key("c/d\(id)"), removedTargetIDs: [1], readTime: t))
                    } else {
                        live[id] = Int.random(in: 0..<20, using: &random)
                        batch.append(.changed(doc(id, live[id]!, Int64(2 + step)), targetIDs: [1], removedTargetIDs: []))
                    }
                }
                batch.append(.target(.noChange, ids: [], resumeToken: nil, readTime: t, cause: nil))
                let a = walk.apply(batch).snapshots
                let b = tree.apply(batch).snapshots
                #expect(a.map(\.changes) == b.map(\.changes), "round \(round) step \(step)")
                #expect(a.map { $0.documents.map(\.key) } == b.map { $0.documents.map(\.key) })
                if let last = b.last { #expect(last.documents.count == live.count) }
            }
        }
    }
}
