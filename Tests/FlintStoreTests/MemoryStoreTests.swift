import FlintModel
import Testing

@testable import FlintStore

struct MemoryStoreTests {
    func key(_ s: String) -> DocumentKey { try! DocumentKey(parsing: s) }
    func t(_ us: Int64) -> Timestamp { Timestamp(microseconds: us) }
    func state(_ fields: MapValue, _ created: Int64) -> DocumentState {
        DocumentState(fields: fields, createTime: t(created), updateTime: t(created))
    }
    let noHorizon = Timestamp(microseconds: 0)

    @Test func readsSeeTheVersionCurrentAtTheirTime() {
        let store = MemoryStore()
        store.apply([DocumentWrite(key: key("c/a"), state: state(["v": 1], 10))], commitTime: t(10), horizon: noHorizon)
        store.apply([DocumentWrite(key: key("c/a"), state: DocumentState(fields: ["v": 2], createTime: t(10), updateTime: t(20)))], commitTime: t(20), horizon: noHorizon)
        store.apply([DocumentWrite(key: key("c/a"), state: nil)], commitTime: t(30), horizon: noHorizon)
        store.apply([DocumentWrite(key: key("c/a"), state: state(["v": 4], 40))], commitTime: t(40), horizon: noHorizon)
        #expect(store.document(key("c/a"), at: t(9)) == nil)
        #expect(store.document(key("c/a"), at: t(10))?.fields == ["v": 1])
        #expect(store.document(key("c/a"), at: t(25))?.fields == ["v": 2])
        #expect(store.document(key("c/a"), at: t(25))?.createTime == t(10))
        #expect(store.document(key("c/a"), at: t(35)) == nil)
        #expect(store.document(key("c/a"), at: nil)?.fields == ["v": 4])
        #expect(store.document(key("c/a"), at: nil)?.createTime == t(40))
        #expect(store.documentCount == 1)
    }

    @Test func compactionForgetsVersionsBeforeTheHorizon() {
        let store = MemoryStore()
        store.apply([DocumentWrite(key: key("c/a"), state: state(["v": 1], 10))], commitTime: t(10), horizon: noHorizon)
        store.apply([DocumentWrite(key: key("c/b"), state: state(["v": 1], 10))], commitTime: t(10), horizon: noHorizon)
        store.apply([DocumentWrite(key: key("c/a"), state: state(["v": 2], 20))], commitTime: t(20), horizon: noHorizon)
        store.apply([DocumentWrite(key: key("c/b"), state: nil)], commitTime: t(20), horizon: noHorizon)
        #expect(store.document(key("c/a"), at: t(15))?.fields == ["v": 1])
        store.compact(horizon: t(25))
        #expect(store.document(key("c/a"), at: t(15)) == nil)  // that version is gone
        #expect(store.document(key("c/a"), at: nil)?.fields == ["v": 2])
        #expect(store.document(key("c/b"), at: t(15)) == nil)
        var ids: [String] = []
        store.scan(collection: ResourcePath(["c"]), at: nil, startAfter: nil) { k, _ in ids.append(k.documentID); return true }
        #expect(ids == ["a"])
    }

    @Test func collectionIDsAndMissingDocuments() {
        let store = MemoryStore()
        store.apply([
            DocumentWrite(key: key("users/u1"), state: state([:], 10)),
            DocumentWrite(key: key("users/ghost/posts/p1"), state: state([:], 10)),
            DocumentWrite(key: key("deep/x/a/b/c/d"), state: state([:], 10)),
            DocumentWrite(key: key("gone/g"), state: state([:], 10)),
        ], commitTime: t(10), horizon: noHorizon)
        store.apply([DocumentWrite(key: key("gone/g"), state: nil)], commitTime: t(20), horizon: noHorizon)
        #expect(store.collectionIDs(under: .root, at: nil) == ["deep", "users"])
        #expect(store.collectionIDs(under: .root, at: t(15)) == ["deep", "gone", "users"])
        #expect(store.collectionIDs(under: ResourcePath(["users", "ghost"]), at: nil) == ["posts"])
        #expect(store.missingDocumentIDs(in: ResourcePath(["users"]), at: nil) == ["ghost"])
        #expect(store.missingDocumentIDs(in: ResourcePath(["deep"]), at: nil) == ["x"])
        store.removeAll(under: ResourcePath(["users", "ghost"]))
        #expect(store.missingDocumentIDs(in: ResourcePath(["users"]), at: nil) == [])
        #expect(store.collectionIDs(under: .root, at: nil) == ["deep", "users"])
        store.removeAll(under: ResourcePath(["deep"]))
        #expect(store.collectionIDs(under: .root, at: nil) == ["users"])
        #expect(store.documentCount == 1)
    }
}
