import FlintModel
import FlintQuery
import FlintRules

extension Database {
    /// Snapshots of a document or query as they change, in process: what `addSnapshotListener`
    /// gives an SDK user. The first snapshot holds the current documents (empty when nothing
    /// matches); each later one the documents after a change and the changes, indexed as the
    /// SDKs index them. A target the rules deny, or an invalid query, throws its error. The
    /// sequence is pulled: while the caller is busy nothing queues up, and the next snapshot
    /// carries everything that changed meanwhile. Stop by ending the iteration.
    ///
    /// `presentedIn` orders the snapshots' documents and change indexes by another query than
    /// the target's (a `limitToLast` view runs its query reversed but shows it forwards).
    public nonisolated func snapshots(of scope: WatchScope, auth: AuthContext = .owner, presentedIn order: Query? = nil) -> SnapshotSequence {
        SnapshotSequence(database: self, scope: scope, auth: auth, order: order)
    }
}

public struct SnapshotSequence: AsyncSequence, Sendable {
    public typealias Element = ViewSnapshot

    let database: Database
    let scope: WatchScope
    let auth: AuthContext
    let order: Query?

    public func makeAsyncIterator() -> Iterator { Iterator(self) }

    public final class Iterator: AsyncIteratorProtocol {
        private let source: SnapshotSequence
        private var watch: WatchStreamID?
        private var signal: AsyncStream<Void>.AsyncIterator?
        private var views = SnapshotAssembler()
        private var ready: [ViewSnapshot] = []
        private var ending: (any Error)?
        private var done = false

        init(_ source: SnapshotSequence) { self.source = source }

        public func next() async throws -> ViewSnapshot? {
            while ready.isEmpty {
                if let ending {
                    self.ending = nil
                    done = true
                    close()
                    throw ending
                }
                if done { return nil }
                if watch == nil { try await open() }
                guard await signal?.next() != nil, let watch else {
                    done = true
                    close()
                    return nil
                }
                let (snapshots, removed) = views.apply(await source.database.takeWatchEvents(watch))
                ready += snapshots
                if let (_, cause) = removed.first { ending = cause ?? FlintError(.cancelled, "The listener was removed.") }
            }
            return ready.removeFirst()
        }

        private func open() async throws {
            let db = source.database
            let (id, stream) = await db.openWatch()
            watch = id
            signal = stream.makeAsyncIterator()
            if case .query(let q) = source.scope {
                views.register(1, query: try NormalizedQuery(source.order ?? q, database: db.id))
            } else {
                views.register(1, query: nil)
            }
            try await db.addWatchTarget(WatchTarget(id: 1, scope: source.scope), to: id, auth: source.auth)
        }

        private func close() {
            guard let watch else { return }
            self.watch = nil
            let db = source.database
            Task { await db.closeWatch(watch) }
        }

        deinit { close() }
    }
}
