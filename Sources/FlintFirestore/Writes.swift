import FlintEngine
import FlintModel
import Foundation
import Synchronization

/// Turns the SDK's write calls into Flint writes, checking arguments before anything is sent.
enum WriteBuilder {
    enum Merge {
        case none, all
        case fields([Any])
    }

    static func set(_ ref: DocumentReference, _ data: [String: Any], merge: Merge) throws -> Write {
        let key = try ref.key
        if case .none = merge {} else {
            let parsed = try ValueBridge.parse(data, database: ref.firestore.databaseID, allowDelete: true)
            let mask: [FlintModel.FieldPath]
            var fields = parsed.fields
            var transforms = parsed.transforms
            switch merge {
            case .fields(let list):
                mask = try list.map { f throws(FirestoreErrorCode) in try fieldPath(f) }
                for p in mask where parsed.fields.value(at: p) == nil && !parsed.deletes.contains(p) && !transforms.contains(where: { $0.field == p }) {
                    throw invalidArgument("Field '\(p.canonical)' is specified in your field mask but missing from your input data.")
                }
                var kept = MapValue()
                for p in mask { if let v = fields.value(at: p) { kept.setValue(v, at: p) } }
                fields = kept
                transforms = transforms.filter { t in mask.contains { $0.isPrefix(of: t.field) } }
            default:
                mask = parsed.leaves
            }
            return Write(.update(key, fields), updateMask: mask, transforms: transforms)
        }
        let parsed = try ValueBridge.parse(data, database: ref.firestore.databaseID, allowDelete: false)
        return Write(.update(key, parsed.fields), transforms: parsed.transforms)
    }

    /// `updateData`: keys are dotted strings or `FieldPath`s; the document must exist.
    static func update(_ ref: DocumentReference, _ fields: [AnyHashable: Any]) throws -> Write {
        let key = try ref.key
        guard !fields.isEmpty else { throw invalidArgument("Update data must not be empty.") }
        var data = MapValue()
        var mask: [FlintModel.FieldPath] = []
        var transforms: [FlintModel.FieldTransform] = []
        for (k, raw) in fields {
            let path = try fieldPath(k.base)
            if mask.contains(where: { $0.isPrefix(of: path) || path.isPrefix(of: $0) }) {
                throw invalidArgument("Field \(path.canonical) was specified multiple times (or with a prefix) in the update.")
            }
            if let m = raw as? [String: Any] {
                // Sentinels inside a nested map become transforms at their full paths.
                let parsed = try ValueBridge.parse(m, database: ref.firestore.databaseID, allowDelete: false)
                data.setValue(.map(parsed.fields), at: path)
                transforms += parsed.transforms.map { t in FlintModel.FieldTransform(path.appending(t.field), t.kind) }
                mask.append(path)
                continue
            }
            switch try ValueBridge.input(raw, database: ref.firestore.databaseID, path: path.canonical) {
            case .value(let v):
                data.setValue(v, at: path)
                mask.append(path)
            case .sentinel(let s):
                switch s.kind {
                case .delete: mask.append(path)
                case .serverTimestamp: transforms.append(.init(path, .serverTimestamp))
                case .increment(let by): transforms.append(.init(path, .increment(by)))
                case .arrayUnion(let e): transforms.append(.init(path, .appendMissingElements(e)))
                case .arrayRemove(let e): transforms.append(.init(path, .removeAllFromArray(e)))
                }
            }
        }
        return Write(.update(key, data), updateMask: mask, transforms: transforms, precondition: .exists(true))
    }

    static func fieldPath(_ any: Any) throws(FirestoreErrorCode) -> FlintModel.FieldPath {
        if let p = any as? FieldPath { return try p.model() }
        if let s = any as? String { return try FieldPath(dotted: s).model() }
        throw invalidArgument("Field paths must be strings or FieldPath objects, not \(type(of: any)).")
    }

    /// Builds writes now, so a bad argument is reported before anything is sent.
    static func attempt(_ build: () throws -> [Write]) -> Result<[Write], any Error> {
        Result { try build() }
    }
}

extension FlintModel.FieldPath {
    func isPrefix(of other: FlintModel.FieldPath) -> Bool {
        segments.count <= other.segments.count && Array(other.segments.prefix(segments.count)) == segments
    }

    func appending(_ other: FlintModel.FieldPath) -> FlintModel.FieldPath {
        (try? FlintModel.FieldPath(segments + other.segments)) ?? other
    }
}

extension Firestore {
    /// Commits writes outside a transaction, counting them as pending meanwhile.
    @discardableResult
    func commit(_ writes: [Write]) async throws -> CommitResult {
        pendingWrites.begin()
        defer { pendingWrites.end() }
        let auth = self.auth
        let backend = self.backend
        return try await firestoreCall { try await backend.commit(writes, transaction: nil, auth: auth) }
    }

    /// The completion form of a write: sent in the background, reported to `completion`.
    func background(_ completion: (@Sendable ((any Error)?) -> Void)?, _ writes: Result<[Write], any Error>) {
        switch writes {
        case .failure(let error):
            if let completion { completion(error) }
        case .success(let writes):
            pendingWrites.begin()
            let db = self
            Task {
                defer { db.pendingWrites.end() }
                do {
                    _ = try await firestoreCall { try await db.backend.commit(writes, transaction: nil, auth: db.auth) }
                    completion?(nil)
                } catch {
                    completion?(error)
                }
            }
        }
    }

    /// Waits until every write sent so far (including completion-handler writes) is done.
    public func waitForPendingWrites() async {
        await pendingWrites.drained()
    }

    public func waitForPendingWrites(completion: @escaping @Sendable ((any Error)?) -> Void) {
        Task {
            await waitForPendingWrites()
            completion(nil)
        }
    }
}

/// Counts writes in flight so `waitForPendingWrites` can wait for them.
final class PendingWrites: Sendable {
    private struct State {
        var count = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func begin() { state.withLock { $0.count += 1 } }

    func end() {
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.count -= 1
            guard s.count == 0 else { return [] }
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in ready { w.resume() }
    }

    func drained() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.count == 0 { return true }
                s.waiters.append(c)
                return false
            }
            if now { c.resume() }
        }
    }
}

/// Writes applied together, atomically, by `commit()`.
public final class WriteBatch: @unchecked Sendable {
    private let firestore: Firestore
    private let gathered = GatheredWrites()

    init(_ firestore: Firestore) { self.firestore = firestore }

    private func add(_ build: () throws -> Write) -> WriteBatch {
        gathered.add(build)
        return self
    }

    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference) -> WriteBatch {
        add { try WriteBuilder.set(document, data, merge: .none) }
    }

    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference, merge: Bool) -> WriteBatch {
        add { try WriteBuilder.set(document, data, merge: merge ? .all : .none) }
    }

    @discardableResult
    public func setData(_ data: [String: Any], forDocument document: DocumentReference, mergeFields: [Any]) -> WriteBatch {
        add { try WriteBuilder.set(document, data, merge: .fields(mergeFields)) }
    }

    @discardableResult
    public func setData<T: Encodable>(from value: T, forDocument document: DocumentReference, merge: Bool = false) throws -> WriteBatch {
        let data = try Firestore.Encoder().encode(value)
        return setData(data, forDocument: document, merge: merge)
    }

    @discardableResult
    public func updateData(_ fields: [AnyHashable: Any], forDocument document: DocumentReference) -> WriteBatch {
        add { try WriteBuilder.update(document, fields) }
    }

    @discardableResult
    public func deleteDocument(_ document: DocumentReference) -> WriteBatch {
        add { Write.delete(try document.key) }
    }

    public func commit() async throws {
        try await firestore.commit(try gathered.all())
    }

    public func commit(completion: (@Sendable ((any Error)?) -> Void)?) {
        firestore.background(completion, Result { try gathered.all() })
    }
}

/// The writes a batch or transaction has gathered. A write whose arguments were wrong is
/// remembered instead, and `all()` throws the first such error at commit, as the SDKs do.
final class GatheredWrites: Sendable {
    private let state = Mutex<(writes: [Write], problem: (any Error)?)>(([], nil))

    func add(_ build: () throws -> Write) {
        do {
            let write = try build()
            state.withLock { $0.writes.append(write) }
        } catch {
            state.withLock { if $0.problem == nil { $0.problem = error } }
        }
    }

    var hasWrites: Bool { state.withLock { !$0.writes.isEmpty } }

    func all() throws -> [Write] {
        let (writes, problem) = state.withLock { ($0.writes, $0.problem) }
        if let problem { throw problem }
        return writes
    }
}
