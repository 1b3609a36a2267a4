import FlintEngine
import FlintModel
import FlintQuery
import FlintTesting
import Foundation
import Testing

/// What a client SDK keeps from a listen stream: one cache of documents and, per target, the
/// names it holds. Built only from watch events, as the SDKs build theirs.
private struct ClientView {
    var cache: [DocumentKey: MapValue] = [:]
    var members: [Int32: Set<DocumentKey>] = [:]
    var resumeToken: [UInt8]?
    /// Existence filters whose count disagreed with the view: the SDK would re-query.
    var mismatchedFilters: [String] = []

    mutating func apply(_ events: [WatchEvent]) {
        for event in events {
            switch event {
            case .target(let kind, let ids, let token, _, _):
                switch kind {
                case .reset: for id in ids { members[id] = [] }
                case .remove: for id in ids { members[id] = nil }
                case .add: for id in ids where members[id] == nil { members[id] = [] }
                case .noChange where ids.isEmpty: resumeToken = token ?? resumeToken
                case .noChange, .current: break
                }
            case .changed(let doc, let targets, let removed):
                cache[doc.key] = doc.fields
                for t in targets { members[t, default: []].insert(doc.key) }
                for t in removed { members[t]?.remove(doc.key) }
            case .deleted(let key, let removed, _):
                cache[key] = nil
                for t in removed { members[t]?.remove(key) }
            case .existenceFilter(let id, let count, _):
                let held = members[id]?.count ?? 0
                if held != count { mismatchedFilters.append("target \(id): filter \(count), view \(held)") }
            }
        }
    }
}

/// Random writes under listeners on random targets: after every commit, each target's view,
/// built from the events alone, must equal a fresh run of its query. Closing the stream and
/// resuming from the last token must keep that true with only the differences sent.
struct WatchConsistencyTests {
    static let keys: [DocumentKey] =
        (0..<12).map { key("c/d\($0)") } + (0..<4).map { key("x/p\($0 % 2)/c/s\($0)") } + [key("c/d0/c/deep")]
    static let numbers: [Value] = [0, 1, 2, 3, 4, 5, 2.5, .null, "3", [1, 2]]
    static let tags: [Value] = ["red", "blue", "green"]

    static func pick<T>(_ items: [T], _ rng: inout SeededGenerator) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }

    static func randomFields(_ rng: inout SeededGenerator) -> MapValue {
        var m = MapValue()
        if Int.random(in: 0..<6, using: &rng) > 0 { m["n"] = pick(numbers, &rng) }
        if Bool.random(using: &rng) { m["tags"] = .array((0..<Int.random(in: 0...2, using: &rng)).map { _ in pick(tags, &rng) }) }
        if Bool.random(using: &rng) { m["g"] = pick(["a", "b"], &rng) }
        return m
    }

    static func randomWrite(_ rng: inout SeededGenerator) -> Write {
        let k = pick(keys, &rng)
        switch Int.random(in: 0..<10, using: &rng) {
        case 0, 1: return .delete(k)
        case 2: return Write(.update(k, ["g": pick(["a", "b"], &rng)]), updateMask: [field("g")])
        case 3: return Write(.update(k, [:]), updateMask: [], transforms: [FieldTransform(field("n"), .increment(1))])
        case 4:
            let union = FieldTransform(field("tags"), .appendMissingElements([pick(tags, &rng)]))
            return Write(.update(k, [:]), updateMask: [], transforms: [union])
        default: return .set(k, randomFields(&rng))
        }
    }

    static func randomFilter(_ rng: inout SeededGenerator, depth: Int = 0) -> Filter? {
        let n = field("n")
        switch Int.random(in: 0..<11, using: &rng) {
        case 0: return nil
        case 1: return .field(FieldFilter(n, .lessThan, pick(numbers, &rng)))
        case 2: return .field(FieldFilter(n, .greaterThanOrEqual, pick(numbers, &rng)))
        case 3: return .field(FieldFilter(n, .equal, pick(numbers, &rng)))
        case 4: return .field(FieldFilter(n, .in, [pick(numbers, &rng), pick(numbers, &rng)]))
        case 5: return .field(FieldFilter(n, .notEqual, pick(numbers, &rng)))
        case 6: return .field(FieldFilter(field("tags"), .arrayContains, pick(tags, &rng)))
        case 7: return .field(FieldFilter(field("tags"), .arrayContainsAny, [pick(tags, &rng), pick(tags, &rng)]))
        case 8: return .field(FieldFilter(field("g"), .equal, pick(["a", "b"], &rng)))
        default:
            guard depth == 0 else { return .unary(UnaryFilter(n, .isNull)) }
            let parts = (0..<2).compactMap { _ in randomFilter(&rng, depth: 1) }
            guard !parts.isEmpty else { return nil }
            return .composite(CompositeFilter(Bool.random(using: &rng) ? .and : .or, parts))
        }
    }

    static func randomScope(_ rng: inout SeededGenerator) -> WatchScope {
        if Int.random(in: 0..<5, using: &rng) == 0 {
            return .documents((0..<Int.random(in: 1...3, using: &rng)).map { _ in pick(keys, &rng) })
        }
        var q = Query(collectionID: "c", allDescendants: Int.random(in: 0..<3, using: &rng) == 0, filter: randomFilter(&rng))
        if Bool.random(using: &rng) {
            q.orderBy = [Ordering(field(pick(["n", "g"], &rng)), descending: Bool.random(using: &rng))]
            if Bool.random(using: &rng) { q.limit = Int.random(in: 1...4, using: &rng) }
            if Int.random(in: 0..<4, using: &rng) == 0 {
                q.startAt = Cursor(values: [pick(numbers + ["a"], &rng)], before: Bool.random(using: &rng))
            }
        } else if Int.random(in: 0..<3, using: &rng) == 0 {
            q.limit = Int.random(in: 1...4, using: &rng)
        }
        return .query(q)
    }

    /// The names and fields each target should hold now; nil for a target the engine refuses.
    static func expected(_ scope: WatchScope, in db: Database) async -> [DocumentKey: MapValue]? {
        switch scope {
        case .documents(let keys):
            var found: [DocumentKey: MapValue] = [:]
            for k in keys {
                if let doc = try? await db.get(k) { found[k] = doc.fields }
            }
            return found
        case .query(let q):
            guard let docs = try? await db.runQuery(q).documents else { return nil }
            return Dictionary(docs.map { ($0.key, $0.fields) }, uniquingKeysWith: { a, _ in a })
        }
    }

    fileprivate static func check(_ view: ClientView, _ targets: [Int32: WatchScope], _ db: Database, _ step: String) async {
        for (id, scope) in targets.sorted(by: { $0.key < $1.key }) {
            guard let want = await expected(scope, in: db) else { continue }
            let held = view.members[id] ?? []
            let names = { (keys: any Sequence<DocumentKey>) in keys.map(\.path.canonical).sorted() }
            #expect(held == Set(want.keys), "\(step), target \(id) \(scope): view \(names(held)), query \(names(want.keys))")
            for (k, fields) in want where held.contains(k) {
                #expect(view.cache[k] == fields, "\(step), target \(id): \(k.path.canonical) is stale in the view")
            }
        }
    }

    /// FLINT_WATCH_SEEDS=N runs seeds 1...N instead of the kept six.
    static let seeds: [UInt64] = Array(1...(ProcessInfo.processInfo.environment["FLINT_WATCH_SEEDS"].flatMap { UInt64($0) } ?? 6))

    @Test(arguments: seeds)
    func everyTargetsViewFollowsItsQuery(seed: UInt64) async throws {
        var rng = SeededGenerator(seed: seed)
        let (db, clock) = makeDatabase(retentionSeconds: 600)
        _ = try await db.commit(Self.keys.map { .set($0, Self.randomFields(&rng)) })
        var (stream, _) = await db.openWatch()
        var targets: [Int32: WatchScope] = [:]
        for id in Int32(1)...8 {
            let scope = Self.randomScope(&rng)
            targets[id] = scope
            _ = try await db.addWatchTarget(WatchTarget(id: id, scope: scope), to: stream)
        }
        var view = ClientView()
        view.apply(await db.takeWatchEvents(stream))
        await Self.check(view, targets, db, "seed \(seed) initial")

        for step in 0..<120 {
            clock.advance(seconds: 1)
            let writes = (0..<Int.random(in: 1...3, using: &rng)).map { _ in Self.randomWrite(&rng) }
            // A write the engine refuses (an increment of an array, say) changes nothing.
            _ = try? await db.commit(writes)
            if step % 25 == 24 {
                // The client goes away for a few commits, then resumes every target from its token.
                #expect(view.resumeToken != nil)
                await db.closeWatch(stream)
                for _ in 0..<3 {
                    clock.advance(seconds: 1)
                    _ = try? await db.commit([Self.randomWrite(&rng), Self.randomWrite(&rng)])
                }
                (stream, _) = await db.openWatch()
                for (id, scope) in targets.sorted(by: { $0.key < $1.key }) {
                    _ = try await db.addWatchTarget(WatchTarget(id: id, scope: scope, resumeToken: view.resumeToken), to: stream)
                }
            }
            view.apply(await db.takeWatchEvents(stream))
            await Self.check(view, targets, db, "seed \(seed) step \(step)")
        }
        #expect(view.mismatchedFilters.isEmpty, "\(view.mismatchedFilters)")
    }
}
